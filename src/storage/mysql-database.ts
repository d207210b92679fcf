/**
 * MariaDB or MySQL through a mysql2 pool, with every wait bounded: for a connection (the pool's queue, or
 * connecting), and for each statement's answer, BEGIN and COMMIT included. The server stops a statement
 * that runs past the statement timeout itself (MariaDB's max_statement_time, MySQL's max_execution_time for
 * reads), answering an error on a connection still fit for use; if no answer comes a little after that, the
 * server or the path to it is stalled, and the connection is destroyed rather than handed to the next
 * statement half-read. mysql2's own per-query `timeout` is not enough: it does not cover preparing a
 * statement, and it leaves a timed-out connection in the pool with its command still queued (measured: a
 * stalled server hung `execute` for good).
 */
import * as mysql from 'mysql2/promise';
import { STATEMENT_CACHE_SIZE, type Database, type Executor, type PoolStats, type Row } from './database';
import { Deadline, type DatabaseTimeouts, within, WriterQueue } from './deadline';
import { classify, DatabaseUnavailable } from './errors';
import { mysqlDialect, NO_PAD_BINARY_COLLATION } from './mysql-dialect';
import { Statements } from './statements';

const POOL_SIZE = 8;
/** How much later than the server's own limit a statement's answer is awaited before the server counts as stalled. */
const STALL_GRACE_MS = 250;
/**
 * Schema changes run at start-up and may build an index over a large table: they get no server-side limit,
 * and their answer is awaited this long.
 */
const SCHEMA_STATEMENT_MS = 5 * 60_000;

/** The driver's connection, as the pool's 'connection' event hands it over (callback API). */
interface CoreConnection {
  on(event: 'error' | 'end', listener: () => void): void;
  query(sql: string, callback: (err: unknown) => void): void;
  destroy(): void;
  /** Its socket. */
  readonly stream?: { destroy(): void };
  /** Set by mysql2 from the server's greeting. */
  readonly _isMariaDB?: boolean;
}

export class MysqlDatabase implements Database {
  readonly dialect = mysqlDialect;
  readonly statements = new Statements(mysqlDialect);
  readonly description: string;
  private readonly pool: mysql.Pool;
  private readonly writers = new WriterQueue();
  /** Every connection open, so that closing never waits on one a stalled server holds. */
  private readonly open = new Set<CoreConnection>();

  constructor(url: string, private readonly timeouts: DatabaseTimeouts) {
    const u = new URL(url);
    this.description = `mysql://${u.host}${u.pathname}`;
    this.pool = mysql.createPool({
      uri: url,
      charset: 'utf8mb4_bin',
      connectionLimit: POOL_SIZE,
      connectTimeout: timeouts.acquireMs,
      decimalNumbers: true,
      supportBigNumbers: true,
      dateStrings: true,
      enableKeepAlive: true,
      maxPreparedStatements: STATEMENT_CACHE_SIZE,
      // No call-site stack captured on every statement: a failure is classified and reported by what asked for it.
      trace: false,
    });
    (this.pool as unknown as { on(e: 'connection', f: (c: CoreConnection) => void): void }).on('connection', (c) => this.configure(c));
  }

  poolStats(): PoolStats {
    // mysql2 keeps these as fields without a public accessor; read defensively (absent: 0).
    const p = this.pool as unknown as { pool?: Record<string, { length?: number } | undefined> };
    const inner = p.pool ?? {};
    const n = (name: string) => inner[name]?.length ?? 0;
    return { open: n('_allConnections'), idle: n('_freeConnections'), waiting: n('_connectionQueue'), limit: POOL_SIZE };
  }

  /** A new connection's session: queued before its first statement, so they are in force when it runs. */
  private configure(c: CoreConnection): void {
    this.open.add(c);
    c.on('end', () => this.open.delete(c));
    // An idle connection that dies must not take the process with it; the next query reconnects.
    c.on('error', () => this.open.delete(c));
    // Failures here surface in the statement queued after them (a lost or stalled connection).
    const ignore = () => undefined;
    // Literals compare like the columns: binary and without PAD SPACE ('a' <> 'a '), as on SQLite.
    c.query(`SET collation_connection = ${NO_PAD_BINARY_COLLATION}`, ignore);
    c.query(statementLimit(c, this.timeouts.statementMs), ignore);
  }

  /**
   * A read: a pooled connection, one statement, the connection back. Through the driver's callback API, with one
   * promise and at most one timer at a time: the promise API would add a wrapper with two listeners per connection
   * taken, and a race with a timer of its own for each of the two waits. Bounded like every wait: for the connection
   * (one that arrives later goes back), then for the answer (past it, the connection is destroyed).
   */
  all(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    const { acquireMs, statementMs } = this.timeouts;
    return new Promise<Row[]>((resolve, reject) => {
      let settled = false;
      let handed = false;
      const give = (e: unknown) => { settled = true; reject(e); };
      let timer: NodeJS.Timeout | undefined;
      this.pool.pool.getConnection((err, conn) => {
        handed = true;
        if (settled) {
          if (!err) conn.release();
          return;
        }
        clearTimeout(timer);
        if (err) return give(classify(err));
        timer = setTimeout(() => {
          this.discard(conn as unknown as CoreConnection);
          give(new DatabaseUnavailable(`no answer within ${statementMs + STALL_GRACE_MS} ms`));
        }, statementMs + STALL_GRACE_MS);
        const answered = (failed: unknown, rows?: unknown) => {
          if (settled) return;
          clearTimeout(timer);
          conn.release();
          if (failed) return give(classify(failed));
          settled = true;
          resolve(rows as Row[]);
        };
        // The driver refuses some parameters by throwing (in this callback, where nothing else would catch it).
        try {
          conn.execute(sql, params as mysql.ExecuteValues[], answered);
        } catch (e) {
          answered(e);
        }
      });
      // The driver hands over a free connection on the next tick, ahead of this: only a request that has to wait
      // for one is given the acquire limit's timer, and the usual one, which would be cleared at once, is not made.
      process.nextTick(() => {
        if (!handed) timer = setTimeout(() => give(new DatabaseUnavailable(`no connection within ${acquireMs} ms`)), acquireMs);
      });
    });
  }

  run(sql: string, params: readonly unknown[] = []): Promise<void> {
    return this.all(sql, params).then(() => undefined);
  }

  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    const deadline = new Deadline(this.timeouts.acquireMs);
    return this.writers.run(deadline, async () => {
      const conn = await this.acquire(deadline);
      const tx: Executor = {
        all: (sql, params = []) => this.execute(conn, sql, params),
        run: async (sql, params = []) => { await this.execute(conn, sql, params); },
      };
      try {
        await this.command(conn, 'START TRANSACTION');
        const result = await fn(tx);
        await this.command(conn, 'COMMIT');
        return result;
      } catch (e) {
        // A destroyed connection's transaction is rolled back by the server when it notices.
        await this.command(conn, 'ROLLBACK').catch(() => undefined);
        throw classify(e);
      } finally {
        conn.release();
      }
    });
  }

  /** Schema statements go as plain queries on a connection of their own, without the statement limit. */
  async schemaChange<T>(fn: (ex: Executor) => Promise<T>): Promise<T> {
    const conn = await this.acquire(new Deadline(this.timeouts.acquireMs));
    const query = (sql: string, params: readonly unknown[]) => this.answer(
      conn, params.length ? conn.execute(sql, params as mysql.ExecuteValues[]) : conn.query(sql), SCHEMA_STATEMENT_MS);
    const ex: Executor = {
      all: (sql, params = []) => query(sql, params),
      run: async (sql, params = []) => { await query(sql, params); },
    };
    try {
      await query(statementLimit(conn.connection as unknown as CoreConnection, 0), []);
      return await fn(ex);
    } finally {
      // Its session no longer has the statement limit: it does not go back to the pool.
      conn.destroy();
    }
  }

  /** A connection from the pool, or DatabaseUnavailable at the deadline (one that arrives later goes back). */
  private async acquire(deadline: Deadline): Promise<mysql.PoolConnection> {
    const pending = this.pool.getConnection();
    try {
      return await within(pending, deadline.remaining(), `no connection within ${this.timeouts.acquireMs} ms`, () => {
        pending.then((late) => late.release(), () => undefined);
      });
    } catch (e) {
      throw classify(e);
    }
  }

  private execute(conn: mysql.PoolConnection, sql: string, params: readonly unknown[]): Promise<Row[]> {
    return this.answer(conn, conn.execute(sql, params as mysql.ExecuteValues[]), this.timeouts.statementMs + STALL_GRACE_MS);
  }

  /** Statements that cannot be prepared (transaction control). */
  private async command(conn: mysql.PoolConnection, sql: string): Promise<void> {
    await this.answer(conn, conn.query(sql), this.timeouts.statementMs + STALL_GRACE_MS);
  }

  /** A statement's rows, or DatabaseUnavailable when they do not come in time (and the connection is destroyed). */
  private async answer(conn: mysql.PoolConnection, sent: Promise<[unknown, unknown]>, ms: number): Promise<Row[]> {
    try {
      const [rows] = await within(sent, ms, `no answer within ${ms} ms`, () => this.discard(conn.connection as unknown as CoreConnection));
      return rows as Row[];
    } catch (e) {
      throw classify(e);
    }
  }

  /**
   * Out of the pool, and its socket closed now: mysql2's destroy only half-closes it, and a stalled server
   * would hold it open until it woke.
   */
  private discard(c: CoreConnection): void {
    this.open.delete(c);
    c.destroy();
    c.stream?.destroy();
  }

  async close(): Promise<void> {
    // Ending the pool says goodbye on every connection; one a stalled server holds would never answer.
    await within(this.pool.end(), this.timeouts.acquireMs, 'closing').catch((e: unknown) => {
      if (!(e instanceof DatabaseUnavailable)) throw e;
      for (const c of [...this.open]) this.discard(c);
    });
  }
}

/** The session setting by which the server stops a statement after `ms` (0: never). */
function statementLimit(c: CoreConnection, ms: number): string {
  return c._isMariaDB ? `SET SESSION max_statement_time = ${ms / 1000}` : `SET SESSION max_execution_time = ${Math.ceil(ms)}`;
}
