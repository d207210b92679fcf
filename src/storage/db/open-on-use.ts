/**
 * A database opened at its first use rather than when the process starts, and opened again by the next use
 * after an open that failed. Opening a SQLite file reads it: another process's exclusive lock fails the open
 * with SQLITE_BUSY, a damaged file with SQLITE_NOTADB. A server must still start then, answer 503 and try
 * again (readiness.ts), instead of exiting. (A MariaDB pool connects on use by itself.)
 */
import { resolve } from 'node:path';
import type { ConflictPolicy } from './conflicts';
import type { Database, Executor, Row } from './database';
import { DEFAULT_TIMEOUTS, type DatabaseTimeouts } from './deadline';
import { openDatabase, sqliteFile, type TopologyOptions } from './open-database';
import { DatabaseUnavailable } from './errors';
import { sqliteDialect } from '../sql/sqlite-dialect';
import { sqlBuilder, type Knex } from '../sql/query-builder';

/** `DATABASE_URL` as `openDatabase` reads it, opened at first use. */
export function openOnUse(url: string | undefined, timeouts: DatabaseTimeouts = DEFAULT_TIMEOUTS, topology: TopologyOptions = {}): Database {
  const path = sqliteFile(url);
  if (path === undefined || path === ':memory:') return openDatabase(url, timeouts, topology);
  return new OpenOnUse(`sqlite:${resolve(path)}`, () => openDatabase(url, timeouts));
}

class OpenOnUse implements Database {
  readonly dialect = sqliteDialect;
  readonly knex = sqlBuilder('sqlite');
  private opened?: Database;
  private closed = false;

  constructor(readonly description: string, private readonly open: () => Database) {}

  /** The open database; throws DatabaseUnavailable while it cannot be opened. */
  private database(): Database {
    if (this.closed) throw new DatabaseUnavailable('closed');
    this.opened ??= this.open();
    return this.opened;
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    return this.database().all(sql, params);
  }

  async scan(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    return this.database().scan(sql, params);
  }

  async run(sql: string, params?: readonly unknown[]): Promise<void> {
    return this.database().run(sql, params);
  }

  async transaction<T>(fn: (tx: Executor) => Promise<T>, policy?: ConflictPolicy): Promise<T> {
    return this.database().transaction(fn, policy);
  }

  async schemaWork<T>(fn: (knex: Knex) => Promise<T>): Promise<T> {
    return this.database().schemaWork(fn);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.opened?.close();
  }
}
