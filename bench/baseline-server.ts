/**
 * The benchmark's baseline: the least an Express 4 handler over the same driver does to serve the same rows
 * from the same database. No middleware, no OData, no validation; the stored record text is sent as it is.
 *
 *   GET /Property/:key  ->  SELECT _record FROM Property WHERE ListingKey = ?
 *   GET /Property       ->  SELECT _record FROM Property ORDER BY ModificationTimestamp, ListingKey LIMIT 100
 *   GET /filtered?ts=T  ->  … WHERE ModificationTimestamp > ? ORDER BY ModificationTimestamp, ListingKey LIMIT 100
 *   GET /expand         ->  the first page (SELECT _record, ListingKey … LIMIT 100) and ONE query for all its media,
 *                           SELECT ResourceRecordKey, _record FROM Media WHERE ResourceRecordKey IN (…the page's keys…)
 *                           ORDER BY ResourceRecordKey, `Order`, MediaKey, spliced into each record as "Media":[…]
 *                           (the product's `$expand=Media`, done by hand)
 *   GET /walk?limit=N[&ts=T&key=K]
 *                       ->  the N records after position (T, K) in (ModificationTimestamp, ListingKey) order, by the
 *                           keyset form that seeks the index on both databases
 *                           (`ModificationTimestamp >= ? AND (ModificationTimestamp > ? OR ListingKey > ?)`), as
 *                           `{"value":[…],"@odata.nextLink":"/walk?ts=…&key=…&limit=N"}`; one row more than N is read
 *                           to know whether another page follows, as the product does.
 *   GET /events?limit=N[&after=S]
 *                       ->  the change log's N events after sequence S, by its key (EntityEvent, the same keyset walk):
 *                           SELECT _record, EntityEventSequence FROM EntityEvent WHERE EntityEventSequence > ? …
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
const FILTERED = 'SELECT _record FROM Property WHERE ModificationTimestamp > ? ORDER BY ModificationTimestamp, ListingKey LIMIT 100';
const PAGE_WITH_KEYS = 'SELECT _record, ListingKey FROM Property ORDER BY ModificationTimestamp, ListingKey LIMIT 100';
/** The page's media in one statement; `n` placeholders. */
const mediaOf = (n: number) => `SELECT ResourceRecordKey, _record FROM Media WHERE ResourceRecordKey IN (${Array(n).fill('?').join(', ')}) `
  + 'ORDER BY ResourceRecordKey, `Order`, MediaKey';
const WALK_COLUMNS = 'SELECT _record, ModificationTimestamp, ListingKey FROM Property';
const WALK_ORDER = 'ORDER BY ModificationTimestamp, ListingKey LIMIT ?';
const WALK_FIRST = `${WALK_COLUMNS} ${WALK_ORDER}`;
const WALK_NEXT = `${WALK_COLUMNS} WHERE ModificationTimestamp >= ? AND (ModificationTimestamp > ? OR ListingKey > ?) ${WALK_ORDER}`;
const EVENTS = 'SELECT _record, EntityEventSequence AS s FROM EntityEvent WHERE EntityEventSequence > ? ORDER BY EntityEventSequence LIMIT ?';
const CONTENT_TYPE = 'application/json; charset=utf-8';
const MAX_WALK_LIMIT = 10_000;

type Row = { _record: string };
type KeyedRow = Row & { ListingKey: string };
type MediaRow = Row & { ResourceRecordKey: string };
type WalkRow = Row & { ModificationTimestamp: string; ListingKey: string };

/** The walk's SQL and parameters for a request, or undefined (400) when its parameters are not usable. */
function walkQuery(query: express.Request['query']): { sql: string; params: (string | number)[]; limit: number } | undefined {
  const limit = Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_WALK_LIMIT) return undefined;
  const { ts, key } = query;
  if (ts === undefined && key === undefined) return { sql: WALK_FIRST, params: [limit + 1], limit };
  if (typeof ts !== 'string' || typeof key !== 'string') return undefined;
  return { sql: WALK_NEXT, params: [ts, ts, key, limit + 1], limit };
}

function walkBody(rows: WalkRow[], limit: number): string {
  const page = rows.length > limit ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  const next = rows.length > limit
    ? `,"@odata.nextLink":${JSON.stringify(`/walk?ts=${encodeURIComponent(last.ModificationTimestamp)}&key=${encodeURIComponent(last.ListingKey)}&limit=${limit}`)}`
    : '';
  return `{"value":[${page.map((r) => r._record).join(',')}]${next}}`;
}

/** The events walk's parameters, or undefined (400). */
function eventsQuery(query: express.Request['query']): { params: number[]; limit: number } | undefined {
  const limit = Number(query.limit);
  const after = query.after === undefined ? 0 : Number(query.after);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_WALK_LIMIT || !Number.isInteger(after)) return undefined;
  return { params: [after, limit + 1], limit };
}

function eventsBody(rows: (Row & { s: number })[], limit: number): string {
  const page = rows.length > limit ? rows.slice(0, limit) : rows;
  const next = rows.length > limit ? `,"@odata.nextLink":${JSON.stringify(`/events?after=${page[page.length - 1].s}&limit=${limit}`)}` : '';
  return `{"value":[${page.map((r) => r._record).join(',')}]${next}}`;
}

/** Each listing with its media spliced in, as `"Media":[…]` at the end of the record (`[]` when it has none). */
function expandBody(page: KeyedRow[], media: MediaRow[]): string {
  const byListing = new Map<string, string[]>();
  for (const m of media) {
    const list = byListing.get(m.ResourceRecordKey);
    if (list) list.push(m._record);
    else byListing.set(m.ResourceRecordKey, [m._record]);
  }
  return `{"value":[${page.map((r) => `${r._record.slice(0, -1)},"Media":[${(byListing.get(r.ListingKey) ?? []).join(',')}]}`).join(',')}]}`;
}

const badRequest = (res: express.Response) => { res.statusCode = 400; res.end(); };

function createApp(url: string): { app: express.Express; close: () => Promise<void> } {
  const app = express();
  if (url.startsWith('sqlite:')) {
    const db = new BetterSqlite3(url.slice('sqlite:'.length), { readonly: true });
    const byKey = db.prepare(BY_KEY);
    const page = db.prepare(PAGE);
    const filtered = db.prepare(FILTERED);
    const pageWithKeys = db.prepare(PAGE_WITH_KEYS);
    const mediaStatements = new Map<number, BetterSqlite3.Statement>();
    const walkFirst = db.prepare(WALK_FIRST);
    const walkNext = db.prepare(WALK_NEXT);
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
    app.get('/filtered', (req, res) => {
      if (typeof req.query.ts !== 'string') { badRequest(res); return; }
      const rows = filtered.all(req.query.ts) as Row[];
      res.setHeader('Content-Type', CONTENT_TYPE);
      res.end(`{"value":[${rows.map((r) => r._record).join(',')}]}`);
    });
    app.get('/expand', (_req, res) => {
      const page = pageWithKeys.all() as KeyedRow[];
      let media: MediaRow[] = [];
      if (page.length) {
        let st = mediaStatements.get(page.length);
        if (!st) mediaStatements.set(page.length, st = db.prepare(mediaOf(page.length)));
        media = st.all(...page.map((r) => r.ListingKey)) as MediaRow[];
      }
      res.setHeader('Content-Type', CONTENT_TYPE);
      res.end(expandBody(page, media));
    });
    app.get('/walk', (req, res) => {
      const q = walkQuery(req.query);
      if (!q) { badRequest(res); return; }
      const rows = (q.sql === WALK_FIRST ? walkFirst : walkNext).all(...q.params) as WalkRow[];
      res.setHeader('Content-Type', CONTENT_TYPE);
      res.end(walkBody(rows, q.limit));
    });
    const events = db.prepare(EVENTS);
    app.get('/events', (req, res) => {
      const q = eventsQuery(req.query);
      if (!q) { badRequest(res); return; }
      res.setHeader('Content-Type', CONTENT_TYPE);
      res.end(eventsBody(events.all(...q.params) as (Row & { s: number })[], q.limit));
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
    app.get('/filtered', (req, res, next) => {
      if (typeof req.query.ts !== 'string') { badRequest(res); return; }
      pool.execute(FILTERED, [req.query.ts]).then(([rows]) => {
        res.setHeader('Content-Type', CONTENT_TYPE);
        res.end(`{"value":[${(rows as Row[]).map((r) => r._record).join(',')}]}`);
      }, next);
    });
    app.get('/expand', (_req, res, next) => {
      (async () => {
        const [page] = await pool.execute(PAGE_WITH_KEYS);
        const rows = page as KeyedRow[];
        const [media] = rows.length ? await pool.execute(mediaOf(rows.length), rows.map((r) => r.ListingKey)) : [[]];
        res.setHeader('Content-Type', CONTENT_TYPE);
        res.end(expandBody(rows, media as MediaRow[]));
      })().catch(next);
    });
    app.get('/walk', (req, res, next) => {
      const q = walkQuery(req.query);
      if (!q) { badRequest(res); return; }
      pool.execute(q.sql, q.params).then(([rows]) => {
        res.setHeader('Content-Type', CONTENT_TYPE);
        res.end(walkBody(rows as WalkRow[], q.limit));
      }, next);
    });
    app.get('/events', (req, res, next) => {
      const q = eventsQuery(req.query);
      if (!q) { badRequest(res); return; }
      pool.execute(EVENTS, q.params).then(([rows]) => {
        res.setHeader('Content-Type', CONTENT_TYPE);
        res.end(eventsBody(rows as (Row & { s: number })[], q.limit));
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
