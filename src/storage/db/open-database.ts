/**
 * Opening the database a URL names: the implementation of Database (database.ts) for its kind, with read
 * replicas behind a MariaDB primary where there are any.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Database } from './database';
import { DEFAULT_TIMEOUTS, type DatabaseTimeouts } from './deadline';
import { DatabaseFolderMissing } from './errors';
import { MysqlDatabase } from './mysql-database';
import { ReplicatedDatabase } from './replicated-database';
import { SqliteDatabase } from './sqlite-database';

const DEFAULT_SQLITE_PATH = 'data/reso.sqlite';

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
