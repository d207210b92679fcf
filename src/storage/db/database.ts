/**
 * The database connection as the rest of the service uses it: SQLite (better-sqlite3, the embedded default:
 * sqlite-database.ts) or MariaDB/MySQL (mysql2: mysql-database.ts), opened by open-database.ts. SQL text is built
 * by knex for this database's dialect (query-builder.ts), never run by it: every statement runs as a prepared
 * statement through the driver, kept per connection for the next call of the same shape. Every wait is bounded
 * (deadline.ts): past it, DatabaseUnavailable (503).
 */
import type { SqlDialect } from '../sql/dialect';
import type { ConflictCounts, ConflictPolicy } from './conflicts';
import type { Knex } from '../sql/query-builder';

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
   * same rows) is run again from its start, so `fn` keeps no state outside itself until it returns (conflicts.ts),
   * for as long as `policy` allows (a request's short one unless the caller is a batch writer).
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>, policy?: ConflictPolicy): Promise<T>;
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

/**
 * Prepared statements kept per connection. Bounded because every distinct query shape is one: MariaDB
 * caps prepared statements server-wide (max_prepared_stmt_count, 16382 by default), shared by every client.
 */
export const STATEMENT_CACHE_SIZE = 256;
