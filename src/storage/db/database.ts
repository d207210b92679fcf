/**
 * The database connection: SQLite (better-sqlite3, the embedded default: sqlite-database.ts) or MariaDB/MySQL
 * (mysql2: mysql-database.ts). SQL text is built by knex for this database's dialect (query-builder.ts), never
 * run by it: every statement runs as a prepared statement through the driver, kept per connection for the next
 * call of the same shape. Every wait is bounded (deadline.ts): past it, DatabaseUnavailable (503).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DEFAULT_TIMEOUTS, type DatabaseTimeouts } from './deadline';
import type { SqlDialect } from '../sql/dialect';
import { DatabaseFolderMissing } from './errors';
import { MysqlDatabase } from './mysql-database';
import { ReplicatedDatabase } from './replicated-database';
import { SqliteDatabase } from './sqlite-database';
import type { ConflictCounts } from './conflicts';
import type { Knex } from '../sql/query-builder';

export { DEFAULT_TIMEOUTS, type DatabaseTimeouts } from './deadline';

export type Row = Record<string, unknown>;

/** Runs statements; inside a transaction it is bound to that transaction. */
export interface Executor {
  all(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  run(sql: string, params?: readonly unknown[]): Promise<void>;
}

export interface Database extends Executor {
  readonly dialect: SqlDialect;
  /** knex for this database's dialect, never connected: builds statements (query-builder.ts), never runs them. */
  readonly knex: Knex;
  /** Where the data lives, without credentials; for logs. */
  readonly description: string;
  /**
   * A read whose statement may visit every row of its table (a filter or order on a field without an index:
   * scans.ts), run apart from the other reads so that it holds none of them up, and stopped at the statement
   * timeout (ScanTimedOut): on SQLite on a thread of its own (sqlite-scan-thread.ts), on MariaDB/MySQL on at most
   * SCAN_CONNECTIONS of the pool's connections at once. The statement carries the dialect's scan guard.
   */
  scan(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /**
   * Runs `fn` in one write transaction. Writers are serialised, so at most one of this process runs at a time. A
   * transaction that loses a conflict with another (a deadlock; on a Galera cluster, another node's commit on the
   * same rows) is run again from its start, so `fn` keeps no state outside itself until it returns (conflicts.ts).
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  /**
   * Runs schema work (migrations) with a knex connected to this database (schema-knex.ts), excluding this
   * process's writers meanwhile; prepared statements start afresh after.
   */
  schemaWork<T>(fn: (knex: Knex) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** The connection pool's state, where there is a pool (MariaDB/MySQL); for metrics. */
  poolStats?(): PoolStats;
  /** Conflicts lost and retried since the process started, where transactions can conflict (MariaDB/MySQL). */
  conflicts?(): ConflictCounts;
}

export interface PoolStats {
  /** Connections open, idle ones included. */
  readonly open: number;
  readonly idle: number;
  /** Requests waiting for a connection. */
  readonly waiting: number;
  readonly limit: number;
}

export const DEFAULT_SQLITE_PATH = 'data/reso.sqlite';

/**
 * Prepared statements kept per connection. Bounded because every distinct query shape is one: MariaDB
 * caps prepared statements server-wide (max_prepared_stmt_count, 16382 by default), shared by every client.
 */
export const STATEMENT_CACHE_SIZE = 256;

/** The SQLite file a database URL names (unset: the default file); undefined for a server database. */
export function sqliteFile(url: string | undefined): string | undefined {
  if (url && !url.startsWith('sqlite:')) return undefined;
  return url ? url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : DEFAULT_SQLITE_PATH;
}

/**
 * A SQLite file's folder must exist: a mistyped DATABASE_URL must not quietly create folders and an empty database
 * somewhere. Only the default folder (data/ under the working directory) is created.
 */
function sqliteFolderReady(file: string): string {
  const folder = dirname(file);
  if (existsSync(folder)) return file;
  if (folder !== resolve(dirname(DEFAULT_SQLITE_PATH))) throw new DatabaseFolderMissing(file, folder);
  mkdirSync(folder, { recursive: true });
  return file;
}

/** Read replicas of a MariaDB primary, and how long a read waits for one to catch up before the primary answers it. */
export interface ReplicaOptions {
  readonly urls: readonly string[];
  readonly waitMs: number;
}

/** Past one MariaDB server: read replicas, and whether reads on a Galera node are causal (on unless said otherwise). */
export interface TopologyOptions {
  readonly replicas?: ReplicaOptions;
  readonly causalReads?: boolean;
}

/** `sqlite:<path>` (or unset: the default file), or `mysql://user:pass@host:port/db`, with read replicas of the latter. */
export function openDatabase(url: string | undefined, timeouts: DatabaseTimeouts = DEFAULT_TIMEOUTS, topology: TopologyOptions = {}): Database {
  const { replicas, causalReads = true } = topology;
  const path = sqliteFile(url);
  if (path === ':memory:') return new SqliteDatabase(path, timeouts);
  if (path !== undefined) return new SqliteDatabase(sqliteFolderReady(resolve(path)), timeouts);
  if (!url?.startsWith('mysql://') && !url?.startsWith('mariadb://')) throw new Error(`DATABASE_URL must start with sqlite: or mysql:// (got ${url?.split(':')[0]}:)`);
  const primary = new MysqlDatabase(url.replace(/^mariadb:/, 'mysql:'), timeouts, causalReads);
  if (!replicas?.urls.length) return primary;
  return new ReplicatedDatabase(primary, replicas.urls.map((u) => new MysqlDatabase(u.replace(/^mariadb:/, 'mysql:'), timeouts, causalReads)), replicas.waitMs);
}
