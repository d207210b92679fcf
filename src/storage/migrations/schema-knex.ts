/**
 * A knex that runs schema work (migrations), connected for as long as the work lasts. The service's own
 * statements never go through knex's connections (they run on our drivers, every wait bounded: *-database.ts);
 * schema work does, because knex's migrator and its SQLite table rebuilds read the database as they go.
 * - SQLite: knex uses the database's own writer connection (no second connection to contend for the write lock;
 *   an in-memory database is the same database), handed over by a knex client that never opens or closes it.
 * - MariaDB/MySQL: one connection of knex's own, in the session the service's connections use (binary no-pad
 *   collation), without the statement time limit: an index built over a large table may take minutes.
 */
import type BetterSqlite3 from 'better-sqlite3';
import knex, { type Knex } from 'knex';
import { NO_PAD_BINARY_COLLATION } from '../sql/mysql-dialect';

// knex's own client for better-sqlite3, extended below; a CommonJS module without types of its own.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const BetterSqlite3Client = require('knex/lib/dialects/better-sqlite3') as new (config: Knex.Config) => object;

/**
 * knex says nothing itself: what fails reaches the caller as an error, which says it once (its pool would also
 * print a failed connection with its stack on stderr).
 */
const SILENT: Knex.Logger = { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined };

/** knex over an open better-sqlite3 connection it does not own. */
export function sqliteSchemaKnex(connection: BetterSqlite3.Database): Knex {
  class BorrowedConnection extends BetterSqlite3Client {
    async acquireRawConnection(): Promise<BetterSqlite3.Database> {
      return connection;
    }

    async destroyRawConnection(): Promise<void> {
      // The database owns the connection and closes it.
    }
  }
  return knex({ client: BorrowedConnection as unknown as typeof knex.Client, connection: { filename: connection.name }, useNullAsDefault: true, log: SILENT });
}

/** A connection as knex's pool hands it to `afterCreate` (mysql2's callback API). */
interface RawConnection {
  query(sql: string, done: (err: unknown, rows?: { v?: string }[]) => void): void;
}

/** knex with one connection of its own to `url`, connected within `acquireMs`. */
export function mysqlSchemaKnex(url: string, acquireMs: number): Knex {
  const u = new URL(url);
  return knex({
    client: 'mysql2',
    connection: {
      host: u.hostname,
      port: u.port ? Number(u.port) : 3306,
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database: decodeURIComponent(u.pathname.slice(1)),
      connectTimeout: acquireMs,
      dateStrings: true,
      decimalNumbers: true,
      supportBigNumbers: true,
    },
    acquireConnectionTimeout: acquireMs,
    log: SILENT,
    pool: {
      min: 0,
      max: 1,
      afterCreate(conn: RawConnection, done: (err: unknown, conn: RawConnection) => void) {
        session(conn).then(() => done(undefined, conn), (e: unknown) => done(e, conn));
      },
    },
  });
}

/** The service's session (literals compare like the columns), and no statement time limit. */
async function session(conn: RawConnection): Promise<void> {
  const query = (sql: string) => new Promise<{ v?: string }[]>((resolve, reject) => conn.query(sql, (e, rows) => (e ? reject(e) : resolve(rows ?? []))));
  await query('SET NAMES utf8mb4');
  await query(`SET collation_connection = ${NO_PAD_BINARY_COLLATION}`);
  const [{ v }] = await query('SELECT VERSION() AS v');
  await query(/MariaDB/i.test(v ?? '') ? 'SET SESSION max_statement_time = 0' : 'SET SESSION max_execution_time = 0');
}
