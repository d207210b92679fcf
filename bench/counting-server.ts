/**
 * The product with a statement counter, for the expand family's statements-per-page table: `reso-server serve`
 * started in this process (src/server.ts `startServer`, configured by the same environment as
 * bench/product-server.ts), whose database object then has `all`, `run` and `transaction` wrapped so that
 * every SQL statement the service sends is recorded. Nothing else changes: authentication, licensing and
 * metering are on.
 *
 * A second HTTP server on its own port (loopback only) hands over what was recorded:
 *   GET /take  ->  ["<sql>", …], the statements since the previous /take, in order; and forgets them.
 * Prints `statement counter on port <n>` and then the product's own `serving http://localhost:<port>/odata …`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serviceModel } from '../generated';
import { configFromEnv } from '../src/config/config';
import { startServer } from '../src/process/server';
import type { Database, Executor, Row } from '../src/storage/db/database';
import { exitWithParent } from './orphan-guard';

function countStatements(db: Database, seen: string[]): void {
  const all = db.all.bind(db);
  const run = db.run.bind(db);
  const transaction = db.transaction.bind(db);
  // On MariaDB `run` is `this.all`: a statement is recorded once, by the outermost wrapper.
  let inRun = 0;
  const mutable = db as { -readonly [K in keyof Database]: Database[K] };
  mutable.all = (sql: string, params?: readonly unknown[]): Promise<Row[]> => {
    if (inRun === 0) seen.push(sql);
    return all(sql, params);
  };
  mutable.run = (sql: string, params?: readonly unknown[]): Promise<void> => {
    seen.push(sql);
    inRun++;
    try {
      return run(sql, params); // calls `all` (MariaDB) or `transaction` (SQLite) synchronously
    } finally {
      inRun--;
    }
  };
  mutable.transaction = <T>(fn: (tx: Executor) => Promise<T>): Promise<T> => {
    // SQLite's `run` is a transaction of that one statement, already recorded (decided now: `fn` runs later).
    const nested = inRun > 0;
    return transaction((tx) => fn(nested ? tx : {
      all: (sql, params) => { seen.push(sql); return tx.all(sql, params); },
      run: (sql, params) => { seen.push(sql); return tx.run(sql, params); },
    }));
  };
}

async function main(): Promise<void> {
  exitWithParent();
  const lines: string[] = [];
  const running = await startServer(serviceModel, configFromEnv(), (line) => lines.push(line));
  const recorded: string[] = [];
  countStatements(running.service.db, recorded);
  const counter = createServer((req, res) => {
    if (req.url !== '/take') { res.statusCode = 404; res.end(); return; }
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(recorded.splice(0)));
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', () => resolve()));
  console.log(`statement counter on port ${(counter.address() as AddressInfo).port}`);
  for (const line of lines) console.log(line);
  const stop = () => {
    counter.close();
    running.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((e: Error) => { console.error(`counting server: ${e.stack ?? e.message}`); process.exit(1); });
