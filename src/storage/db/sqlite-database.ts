/**
 * SQLite through better-sqlite3, whose calls are synchronous: whatever a call waits for, the whole event loop
 * waits for. So no call may wait long for a lock. Each connection's busy timeout is a few milliseconds; a
 * statement or transaction that finds the database locked (another process or connection writing, or holding
 * an exclusive lock) is tried again on a timer, off the event loop, until the acquire timeout, and then fails
 * as DatabaseUnavailable (503). Reads go through a second connection and, in WAL mode, are not held up by
 * any writer. A damaged or foreign file (SQLITE_CORRUPT, SQLITE_NOTADB) is unavailable too, not an internal error.
 * A scan, which may visit every row of a table, would hold the event loop for as long: it runs on a thread of its
 * own instead (sqlite-scan-thread.ts).
 */
import BetterSqlite3 from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import { without } from '../../foundation/bench-without';
import { STATEMENT_CACHE_SIZE, type Database, type Executor, type Row } from './database';
import { Deadline, type DatabaseTimeouts, WriterQueue } from './deadline';
import { classify, DatabaseUnavailable, isBusy, ScanTimedOut } from './errors';
import type { Knex } from '../sql/query-builder';
import { sqliteSchemaKnex } from '../migrations/schema-knex';
import { sqliteDialect } from '../sql/sqlite-dialect';
import { registerFunctions, ScanClock, ScanDeadlinePassed } from './sqlite-functions';
import { mapForReads } from './sqlite-mapping';
import { SqliteScanThreads } from './sqlite-scan-thread';
import { sqlBuilder } from '../sql/query-builder';

/**
 * How long one attempt may block the event loop waiting for a lock (SQLite's busy handler sleeps in the
 * calling thread). Short waits are common (another process committing); they pass within it.
 */
const BUSY_WAIT_MS = 10;
/** The same wait during schema work, which other instances hold up only for a moment (the start-up lock's row). */
const SCHEMA_BUSY_WAIT_MS = 1000;
/** Pauses between attempts while locked: doubling from the first to the last. */
const FIRST_RETRY_MS = 5;
const LONGEST_RETRY_MS = 100;

type StatementCache = LRUCache<string, BetterSqlite3.Statement>;

export class SqliteDatabase implements Database {
  readonly dialect = sqliteDialect;
  readonly knex = sqlBuilder('sqlite');
  readonly description: string;
  // Two connections: reads never see a writer's uncommitted transaction (WAL keeps them apart).
  private readonly reader: BetterSqlite3.Database;
  private readonly writer: BetterSqlite3.Database;
  private readonly readCache: StatementCache = new LRUCache({ max: STATEMENT_CACHE_SIZE });
  private readonly writeCache: StatementCache = new LRUCache({ max: STATEMENT_CACHE_SIZE });
  private readonly writers = new WriterQueue();
  private readonly scanClock = new ScanClock();
  private readonly scanThreads?: SqliteScanThreads;

  constructor(path: string, private readonly timeouts: DatabaseTimeouts) {
    this.description = `sqlite:${path}`;
    try {
      this.writer = new BetterSqlite3(path, { timeout: BUSY_WAIT_MS });
      this.writer.pragma('journal_mode = WAL');
      this.writer.pragma('synchronous = NORMAL');
      // The WAL is copied back into the database every 64 MB written, not every 4 MB (SQLite's default): a large write
      // (an ingest or pull page of big records) then commits without a checkpoint and its fsyncs nearly every time.
      this.writer.pragma('wal_autocheckpoint = 16384');
      this.reader = path === ':memory:' ? this.writer : new BetterSqlite3(path, { timeout: BUSY_WAIT_MS });
      if (this.reader !== this.writer) mapForReads(this.reader);
      for (const db of new Set([this.reader, this.writer])) registerFunctions(db, this.scanClock);
      // An in-memory database is one connection's alone: its scans run on it, blocking, but still bounded.
      this.scanThreads = path === ':memory:' || without('scan-threads') ? undefined : new SqliteScanThreads({ path, busyMs: BUSY_WAIT_MS }, timeouts);
    } catch (e) {
      // A locked or damaged file fails here; leave no file handle behind for the next attempt to open it.
      const opened = this as unknown as Partial<Record<'reader' | 'writer', BetterSqlite3.Database>>;
      for (const db of [opened.reader, opened.writer]) if (db?.open) db.close();
      throw classify(e);
    }
  }

  private statement(db: BetterSqlite3.Database, cache: StatementCache, sql: string) {
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare(sql);
      cache.set(sql, s);
    }
    return s;
  }

  all(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.unlocked(new Deadline(this.timeouts.acquireMs), () => this.statement(this.reader, this.readCache, sql).all(...params) as Row[]);
  }

  scan(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    if (this.scanThreads) return this.scanThreads.all(sql, params);
    const ms = this.timeouts.statementMs;
    return this.unlocked(new Deadline(this.timeouts.acquireMs), () => {
      try {
        return this.scanClock.readBefore(ms, () => this.statement(this.reader, this.readCache, sql).all(...params) as Row[]);
      } catch (e) {
        throw e instanceof ScanDeadlinePassed ? new ScanTimedOut(ms) : e;
      }
    });
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.transaction((tx) => tx.run(sql, params));
  }

  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    const deadline = new Deadline(this.timeouts.acquireMs);
    return this.writers.run(deadline, async () => {
      const tx: Executor = {
        all: async (sql, params = []) => this.statement(this.writer, this.writeCache, sql).all(...params) as Row[],
        run: async (sql, params = []) => { this.statement(this.writer, this.writeCache, sql).run(...params); },
      };
      // The driver's calls never yield: a long run of transactions (a seed, an ingest, a migration's pass) would
      // keep the event loop from requests, probes and log writes for its whole length. Each gives it a turn first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      // Taking the write lock is the only wait: once held, no other writer can hold up the statements or COMMIT (WAL).
      await this.unlocked(deadline, () => this.writer.exec('BEGIN IMMEDIATE'));
      try {
        const result = await fn(tx);
        this.writer.exec('COMMIT');
        return result;
      } catch (e) {
        if (this.writer.inTransaction) this.writer.exec('ROLLBACK');
        throw classify(e);
      }
    });
  }

  /**
   * knex borrows the writer connection. Its statements block the event loop while they wait for a lock, so the
   * busy timeout is raised only for the schema work (instances starting together touch the lock row briefly).
   */
  schemaWork<T>(fn: (knex: Knex) => Promise<T>): Promise<T> {
    return this.writers.run(new Deadline(this.timeouts.acquireMs), async () => {
      const knex = sqliteSchemaKnex(this.writer);
      this.writer.pragma(`busy_timeout = ${SCHEMA_BUSY_WAIT_MS}`);
      try {
        return await fn(knex);
      } catch (e) {
        throw classify(e);
      } finally {
        await knex.destroy();
        this.writer.pragma(`busy_timeout = ${BUSY_WAIT_MS}`);
        this.readCache.clear();
        this.writeCache.clear();
      }
    });
  }

  /**
   * Runs `attempt` (synchronous, blocking at most BUSY_WAIT_MS on a lock); while the database is locked, again
   * after a pause that leaves the event loop free, until `deadline`.
   */
  private async unlocked<T>(deadline: Deadline, attempt: () => T): Promise<T> {
    for (let pause = FIRST_RETRY_MS; ; pause = Math.min(2 * pause, LONGEST_RETRY_MS)) {
      try {
        return attempt();
      } catch (e) {
        if (!isBusy(e)) throw classify(e);
        const left = deadline.remaining();
        if (left === 0) throw new DatabaseUnavailable((e as { code: string }).code, e);
        await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
      }
    }
  }

  async close(): Promise<void> {
    await this.scanThreads?.close();
    if (this.reader !== this.writer) this.reader.close();
    this.writer.close();
  }
}
