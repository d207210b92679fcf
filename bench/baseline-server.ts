/**
 * The benchmark's baseline: the least an Express 4 handler over the same driver does to serve the same rows
 * from the same database. No middleware, no OData, no validation; the stored record text is sent as it is.
 *
 *   GET /Property/:key  ->  SELECT _record FROM Property WHERE ListingKey = ?
 *   GET /Property       ->  SELECT _record FROM Property ORDER BY ModificationTimestamp, ListingKey LIMIT 100
 *
 * Environment: PORT (0 = any free port), DATABASE_URL (sqlite:<path> or mysql://…).
 * Prints `baseline listening on http://localhost:<port>` once it accepts connections.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import BetterSqlite3 from 'better-sqlite3';
import express from 'express';
import * as mysql from 'mysql2/promise';
import { exitWithParent } from './orphan-guard';

const BY_KEY = 'SELECT _record FROM Property WHERE ListingKey = ?';
const PAGE = 'SELECT _record FROM Property ORDER BY ModificationTimestamp, ListingKey LIMIT 100';
const CONTENT_TYPE = 'application/json; charset=utf-8';

type Row = { _record: string };

function createApp(url: string): { app: express.Express; close: () => Promise<void> } {
  const app = express();
  if (url.startsWith('sqlite:')) {
    const db = new BetterSqlite3(url.slice('sqlite:'.length), { readonly: true });
    const byKey = db.prepare(BY_KEY);
    const page = db.prepare(PAGE);
    app.get('/Property/:key', (req, res) => {
      const row = byKey.get(req.params.key) as Row | undefined;
      if (!row) { res.statusCode = 404; res.end(); return; }
      res.setHeader('Content-Type', CONTENT_TYPE);
      res.end(row._record);
    });
    app.get('/Property', (_req, res) => {
      const rows = page.all() as Row[];
      res.setHeader('Content-Type', CONTENT_TYPE);
      res.end(`{"value":[${rows.map((r) => r._record).join(',')}]}`);
    });
    return { app, close: async () => { db.close(); } };
  }
  if (url.startsWith('mysql://')) {
    // The product's pool size, so both have the same number of queries in flight.
    const pool = mysql.createPool({ uri: url, connectionLimit: 8, charset: 'utf8mb4_bin' });
    app.get('/Property/:key', (req, res, next) => {
      pool.execute(BY_KEY, [req.params.key]).then(([rows]) => {
        const row = (rows as Row[])[0];
        if (!row) { res.statusCode = 404; res.end(); return; }
        res.setHeader('Content-Type', CONTENT_TYPE);
        res.end(row._record);
      }, next);
    });
    app.get('/Property', (_req, res, next) => {
      pool.execute(PAGE).then(([rows]) => {
        res.setHeader('Content-Type', CONTENT_TYPE);
        res.end(`{"value":[${(rows as Row[]).map((r) => r._record).join(',')}]}`);
      }, next);
    });
    return { app, close: () => pool.end() };
  }
  throw new Error(`DATABASE_URL must be sqlite:<path> or mysql://… (got ${url.split(':')[0]}:)`);
}

function main(): void {
  exitWithParent();
  const { app, close } = createApp(process.env.DATABASE_URL ?? '');
  const server: Server = app.listen(Number(process.env.PORT ?? 0), () => {
    console.log(`baseline listening on http://localhost:${(server.address() as AddressInfo).port}`);
  });
  server.keepAliveTimeout = 65_000;
  const stop = () => {
    server.close();
    server.closeAllConnections();
    close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) main();
