/**
 * The database connection: SQLite (better-sqlite3, the embedded default) or MariaDB/MySQL (mysql2).
 * SQL text comes from the shared compiler with this database's dialect (statements.ts); every statement
 * runs as a prepared statement through the driver, kept per connection for the next call of the same shape.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import * as mysql from 'mysql2/promise';
import type { SqlDialect } from './dialect';
import { DatabaseUnavailable } from './errors';
import { mysqlDialect, NO_PAD_BINARY_COLLATION } from './mysql-dialect';
import { sqliteDialect } from './sqlite-dialect';
import { Statements } from './statements';

export type Row = Record<string, unknown>;

/** Runs statements; inside a transaction it is bound to that transaction. */
export interface Executor {
  all(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  run(sql: string, params?: readonly unknown[]): Promise<void>;
}

export interface Database extends Executor {
  readonly dialect: SqlDialect;
  /** Builds this database's statements; never executes. */
  readonly statements: Statements;
  /** Where the data lives, without credentials; for logs. */
  readonly description: string;
  /** Runs `fn` in one write transaction. Writers are serialised, so at most one runs at a time. */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  /** Runs schema changes (each statement commits by itself), excluding writers; prepared statements start afresh after. */
  schemaChange<T>(fn: (ex: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export const DEFAULT_SQLITE_PATH = 'data/reso.sqlite';

/**
 * Prepared statements kept per connection. Bounded because every distinct query shape is one: MariaDB
 * caps prepared statements server-wide (max_prepared_stmt_count, 16382 by default), shared by every client.
 */
const STATEMENT_CACHE_SIZE = 256;

/** The SQLite file a database URL names (unset: the default file); undefined for a server database. */
export function sqliteFile(url: string | undefined): string | undefined {
  if (url && !url.startsWith('sqlite:')) return undefined;
  return url ? url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : DEFAULT_SQLITE_PATH;
}

/** `sqlite:<path>` (or unset: the default file), or `mysql://user:pass@host:port/db`. */
export function openDatabase(url: string | undefined): Database {
  const path = sqliteFile(url);
  if (path !== undefined) return new SqliteDatabase(path === ':memory:' ? path : resolve(path));
  if (url?.startsWith('mysql://') || url?.startsWith('mariadb://')) return new MysqlDatabase(url.replace(/^mariadb:/, 'mysql:'));
  throw new Error(`DATABASE_URL must start with sqlite: or mysql:// (got ${url?.split(':')[0]}:)`);
}

/** Serialises async critical sections (one writer at a time). */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

type StatementCache = LRUCache<string, BetterSqlite3.Statement>;

class SqliteDatabase implements Database {
  readonly dialect = sqliteDialect;
  readonly statements = new Statements(sqliteDialect);
  readonly description: string;
  // Two connections: reads never see a writer's uncommitted transaction (WAL keeps them apart).
  private readonly reader: BetterSqlite3.Database;
  private readonly writer: BetterSqlite3.Database;
  private readonly readCache: StatementCache = new LRUCache({ max: STATEMENT_CACHE_SIZE });
  private readonly writeCache: StatementCache = new LRUCache({ max: STATEMENT_CACHE_SIZE });
  private readonly writers = new Mutex();

  constructor(path: string) {
    this.description = `sqlite:${path}`;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    try {
      this.writer = new BetterSqlite3(path);
      this.writer.pragma('journal_mode = WAL');
      this.writer.pragma('synchronous = NORMAL');
      this.writer.pragma('busy_timeout = 5000');
      this.reader = path === ':memory:' ? this.writer : new BetterSqlite3(path);
      this.reader.pragma('busy_timeout = 5000');
      for (const db of new Set([this.reader, this.writer])) {
        // OData's tolower/toupper follow Unicode; SQLite's lower/upper change ASCII letters only.
        db.function('odata_tolower', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v));
        db.function('odata_toupper', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toUpperCase() : v));
      }
    } catch (e) {
      // Opening is tried again (storage/open-on-use.ts): leave no file handle behind.
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

  async all(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    try {
      return this.statement(this.reader, this.readCache, sql).all(...params) as Row[];
    } catch (e) {
      throw classify(e);
    }
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.transaction((tx) => tx.run(sql, params));
  }

  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    return this.writers.run(async () => {
      const tx: Executor = {
        all: async (sql, params = []) => this.statement(this.writer, this.writeCache, sql).all(...params) as Row[],
        run: async (sql, params = []) => { this.statement(this.writer, this.writeCache, sql).run(...params); },
      };
      try {
        this.writer.exec('BEGIN IMMEDIATE');
      } catch (e) {
        throw classify(e);
      }
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

  schemaChange<T>(fn: (ex: Executor) => Promise<T>): Promise<T> {
    return this.writers.run(async () => {
      const ex: Executor = {
        all: async (sql, params = []) => this.writer.prepare(sql).all(...params) as Row[],
        run: async (sql, params = []) => { this.writer.prepare(sql).run(...params); },
      };
      try {
        return await fn(ex);
      } catch (e) {
        throw classify(e);
      } finally {
        // Cached statements may describe tables as they were before the change.
        this.readCache.clear();
        this.writeCache.clear();
      }
    });
  }

  async close(): Promise<void> {
    if (this.reader !== this.writer) this.reader.close();
    this.writer.close();
  }
}

class MysqlDatabase implements Database {
  readonly dialect = mysqlDialect;
  readonly statements = new Statements(mysqlDialect);
  readonly description: string;
  private readonly pool: mysql.Pool;
  private readonly writers = new Mutex();

  constructor(url: string) {
    const u = new URL(url);
    this.description = `mysql://${u.host}${u.pathname}`;
    this.pool = mysql.createPool({
      uri: url,
      charset: 'utf8mb4_bin',
      connectionLimit: 8,
      connectTimeout: 3000,
      decimalNumbers: true,
      supportBigNumbers: true,
      dateStrings: true,
      enableKeepAlive: true,
      maxPreparedStatements: STATEMENT_CACHE_SIZE,
    });
    (this.pool as unknown as { on(e: string, f: (c: { on(e: string, f: () => void): void; query(sql: string): void }) => void): void })
      .on('connection', (c) => {
        // An idle connection that dies must not take the process with it; the next query reconnects.
        c.on('error', () => undefined);
        // Literals compare like the columns: binary and without PAD SPACE ('a' <> 'a '), as on SQLite.
        c.query(`SET collation_connection = ${NO_PAD_BINARY_COLLATION}`);
      });
  }

  async all(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    try {
      const [rows] = await this.pool.execute(sql, params as mysql.ExecuteValues[]);
      return rows as Row[];
    } catch (e) {
      throw classify(e);
    }
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.all(sql, params);
  }

  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    return this.writers.run(async () => {
      let conn: mysql.PoolConnection;
      try {
        conn = await this.pool.getConnection();
      } catch (e) {
        throw classify(e);
      }
      const tx: Executor = {
        all: async (sql, params = []) => (await conn.execute(sql, params as mysql.ExecuteValues[]))[0] as Row[],
        run: async (sql, params = []) => { await conn.execute(sql, params as mysql.ExecuteValues[]); },
      };
      try {
        await conn.beginTransaction();
        const result = await fn(tx);
        await conn.commit();
        return result;
      } catch (e) {
        await conn.rollback().catch(() => undefined);
        throw classify(e);
      } finally {
        conn.release();
      }
    });
  }

  /** Schema statements go as plain queries: they are one-off, and not every one may be prepared. */
  async schemaChange<T>(fn: (ex: Executor) => Promise<T>): Promise<T> {
    const ex: Executor = {
      all: (sql, params = []) => this.all(sql, params),
      run: async (sql, params = []) => {
        if (params.length) await this.all(sql, params);
        else await this.pool.query(sql).catch((e: unknown) => { throw classify(e); });
      },
    };
    return fn(ex);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

const UNAVAILABLE_CODES = new Set([
  'ER_MAX_PREPARED_STMT_COUNT_REACHED',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_CON_COUNT_ERROR', 'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT', 'ER_LOCK_DEADLOCK', 'ER_TOO_MANY_USER_CONNECTIONS',
  'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_PROTOCOL',
  // A damaged file, or another one put in its place: 503 until the operator restores it, never 500.
  'SQLITE_NOTADB', 'SQLITE_CORRUPT',
]);

/** Errors that mean "the database cannot answer now" become DatabaseUnavailable (503); others pass through. */
export function classify(e: unknown): unknown {
  if (e instanceof DatabaseUnavailable) return e;
  const err = e as { code?: string; fatal?: boolean; message?: string; name?: string };
  const code = err?.code ?? '';
  if (UNAVAILABLE_CODES.has(code) || /^SQLITE_(IOERR|BUSY|CORRUPT)/.test(code) || err?.fatal) {
    return new DatabaseUnavailable(code || err?.name || 'unknown', e);
  }
  return e;
}
