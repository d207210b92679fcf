/**
 * The body of a scan thread (sqlite-scan-thread.ts starts it): a read connection of its own to the database file,
 * on which it runs one scan at a time, each stopped at its deadline by the guard the statement carries. Its answer
 * is the rows, or the error's name, code and message (an Error does not cross threads whole).
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import { registerFunctions, ScanClock } from './sqlite-functions';
import { mapForReads } from './sqlite-mapping';

/** Scan shapes kept prepared (the thread loads nothing else of storage, to start quickly and small). */
const STATEMENTS_KEPT = 64;

export interface ScanRequest {
  readonly sql: string;
  readonly params: readonly unknown[];
  /** Milliseconds the statement may take. */
  readonly ms: number;
}

export type ScanAnswer =
  | { readonly rows: Record<string, unknown>[] }
  | { readonly error: { readonly name: string; readonly code?: string; readonly message: string } };

export interface ScanThreadData {
  readonly path: string;
  /** How long SQLite's busy handler may wait for a lock (the thread blocks only itself). */
  readonly busyMs: number;
}

function serve(data: ScanThreadData): void {
  const db = new BetterSqlite3(data.path, { timeout: data.busyMs });
  // A scan in an index's order reads the table's pages in no order: mapped, each is read without a system call.
  mapForReads(db);
  const clock = new ScanClock();
  registerFunctions(db, clock);
  const statements = new LRUCache<string, BetterSqlite3.Statement>({ max: STATEMENTS_KEPT });
  parentPort!.on('message', (q: ScanRequest) => {
    let answer: ScanAnswer;
    try {
      let s = statements.get(q.sql);
      if (!s) statements.set(q.sql, (s = db.prepare(q.sql)));
      const statement = s;
      answer = { rows: clock.readBefore(q.ms, () => statement.all(...q.params) as Record<string, unknown>[]) };
    } catch (e) {
      const err = e as { name?: string; code?: unknown; message?: string };
      answer = { error: { name: err.name ?? 'Error', code: typeof err.code === 'string' ? err.code : undefined, message: String(err.message) } };
    }
    parentPort!.postMessage(answer);
  });
}

if (parentPort && (workerData as ScanThreadData | undefined)?.path) serve(workerData as ScanThreadData);
