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
import type { PoolConnection } from 'mysql2';
import * as mysql from 'mysql2/promise';
import { STATEMENT_CACHE_SIZE, type Database, type Executor, type PoolStats, type Row } from './database';
import { Deadline, type DatabaseTimeouts, Slots, boundedWait, WriterQueue } from './deadline';
import { ConflictCounts, ConflictPolicy, retryingConflicts, UNANNOUNCED_ROLLBACK } from './conflicts';
import { classify, DatabaseUnavailable, isStatementTimeout, ScanTimedOut } from './errors';
import { mysqlDialect, NO_PAD_BINARY_COLLATION } from '../sql/mysql-dialect';
import type { Knex } from '../sql/query-builder';
import { mysqlSchemaKnex } from '../migrations/schema-knex';
import { sqlBuilder } from '../sql/query-builder';

const POOL_SIZE = 8;
/**
 * Scans (Database.scan) at once per process: each may hold a connection up to the statement timeout, so they get at
 * most a quarter of the pool, and every other read still finds one.
 */
export const SCAN_CONNECTIONS = 2;
/** How much later than the server's own limit a statement's answer is awaited before the server counts as stalled. */
const STALL_GRACE_MS = 250;
/** More than group_concat_max_len takes (MariaDB 10.11 caps it at 1 GiB, measured): max_allowed_packet is then the limit. */
const GROUP_CONCAT_MAX = 4294967295;

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
  readonly knex = sqlBuilder('mysql');
  readonly description: string;
  private readonly pool: mysql.Pool;
  /** The write transactions' connection (see attempt). */
  private readonly writerPool: mysql.Pool;
  private readonly writers = new WriterQueue();
  private readonly conflictCounts: ConflictCounts = { conflicts: 0, unannounced: 0, recovered: 0, exhausted: 0 };
  private readonly scans = new Slots(SCAN_CONNECTIONS, 'scan connections');
  /** Every connection open, so that closing never waits on one a stalled server holds. */
  private readonly open = new Set<CoreConnection>();

  /** `causalReads`: on a Galera node, each read waits for what the cluster committed before it (see configure). */
  constructor(private readonly url: string, private readonly timeouts: DatabaseTimeouts, private readonly causalReads = true) {
    const u = new URL(url);
    this.description = `mysql://${u.host}${u.pathname}`;
    this.pool = this.createPool(POOL_SIZE, false);
    this.writerPool = this.createPool(1, true);
  }

  /**
   * `transactional`: the pool of write transactions, which go one at a time (WriterQueue), so of one connection, with
   * autocommit off (see attempt).
   */
  private createPool(size: number, transactional: boolean): mysql.Pool {
    const pool = mysql.createPool({
      uri: this.url,
      charset: 'utf8mb4_bin',
      connectionLimit: size,
      connectTimeout: this.timeouts.acquireMs,
      decimalNumbers: true,
      supportBigNumbers: true,
      dateStrings: true,
      enableKeepAlive: true,
      maxPreparedStatements: STATEMENT_CACHE_SIZE,
      // No call-site stack captured on every statement: a failure is classified and reported by what asked for it.
      trace: false,
    });
    (pool as unknown as { on(e: 'connection', f: (c: CoreConnection) => void): void }).on('connection', (c) => this.configure(c, transactional));
    return pool;
  }

  poolStats(): PoolStats {
    // mysql2 keeps these as fields without a public accessor; read defensively (absent: 0).
    const p = this.pool as unknown as { pool?: Record<string, { length?: number } | undefined> };
    const inner = p.pool ?? {};
    const n = (name: string) => inner[name]?.length ?? 0;
    return { open: n('_allConnections'), idle: n('_freeConnections'), waiting: n('_connectionQueue'), limit: POOL_SIZE };
  }

  /** A new connection's session: queued before its first statement, so they are in force when it runs. */
  private configure(c: CoreConnection, transactional: boolean): void {
    this.open.add(c);
    c.on('end', () => this.open.delete(c));
    // An idle connection that dies must not take the process with it; the next query reconnects.
    c.on('error', () => this.open.delete(c));
    // Failures here surface in the statement queued after them (a lost or stalled connection).
    const ignore = () => undefined;
    // Literals compare like the columns: binary and without PAD SPACE ('a' <> 'a '), as on SQLite.
    // A parent's related records are joined by GROUP_CONCAT (record-queries.ts): never cut at its 1 MB default.
    c.query(`SET collation_connection = ${NO_PAD_BINARY_COLLATION}, group_concat_max_len = ${GROUP_CONCAT_MAX}`, ignore);
    c.query(statementLimit(c, this.timeouts.statementMs), ignore);
    // On a Galera node, a read waits until the node has applied every transaction the cluster committed before it
    // began (causal reads): a consumer moved between instances on different nodes never reads an older state than
    // it has seen, and a removed-listings walk never misses a listing it already holds (docs/scaling-out.md "Scaling out"). Not
    // a Galera node (or MySQL, which lacks the variable): the statement changes nothing, or fails, ignored.
    if (this.causalReads) c.query('SET SESSION wsrep_sync_wait = IF(@@wsrep_on, 1, 0)', ignore);
    if (transactional) c.query('SET SESSION autocommit = 0', ignore);
  }

  /**
   * A read: a pooled connection, one statement, the connection back. Through the driver's callback API, with one
   * promise and at most one timer at a time: the promise API would add a wrapper with two listeners per connection
   * taken, and a race with a timer of its own for each of the two waits.
   */
  all(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    const ms = this.timeouts.statementMs + STALL_GRACE_MS;
    return new Promise<Row[]>((resolve, reject) => {
      this.acquireConnection(this.pool, this.timeouts.acquireMs, (failed, conn) => {
        if (failed) return reject(failed);
        this.awaitAnswer(conn!, senderOf(conn!, sql, params), ms, (e, rows) => {
          // A connection destroyed for not answering is out of the pool already: releasing it does nothing.
          conn!.release();
          if (e) reject(e);
          else resolve(rows!);
        });
      });
    });
  }

  /**
   * A read on this database (a replica) once it has applied every transaction up to `position` (a MariaDB GTID
   * position of its primary), on the same connection; undefined when it has not within `waitMs` (the caller asks
   * the primary instead).
   */
  async readAfter(position: string, waitMs: number, sql: string, params: readonly unknown[]): Promise<Row[] | undefined> {
    const conn = await this.connectionWithin(this.pool, this.timeouts.acquireMs);
    const ms = this.timeouts.statementMs + STALL_GRACE_MS;
    try {
      const [{ caught }] = await this.answerOf(conn, senderOf(conn, CAUGHT_UP, [position, waitMs / 1000]), ms + waitMs);
      if (Number(caught) !== 0) return undefined;
      return await this.answerOf(conn, senderOf(conn, sql, params), ms);
    } catch (e) {
      throw classify(e);
    } finally {
      conn.release();
    }
  }

  /** A read on one of the scan slots; the server's statement limit stopping it is the scan's bound, not an outage. */
  scan(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.scans.run(new Deadline(this.timeouts.acquireMs), () => this.all(sql, params).catch((e: unknown) => {
      throw isStatementTimeout(e) ? new ScanTimedOut(this.timeouts.statementMs) : e;
    }));
  }

  /** A statement on its own is a transaction of its own: one that loses a conflict runs again (conflicts.ts). */
  run(sql: string, params: readonly unknown[] = []): Promise<void> {
    return retryingConflicts(() => this.all(sql, params).then(() => undefined), this.conflictCounts);
  }

  conflicts(): ConflictCounts {
    return { ...this.conflictCounts };
  }

  /** Runs `fn` in one transaction, again from its start whenever it loses a conflict (conflicts.ts). */
  transaction<T>(fn: (tx: Executor) => Promise<T>, policy?: ConflictPolicy): Promise<T> {
    return retryingConflicts(() => this.attempt(fn), this.conflictCounts, policy);
  }

  /**
   * One attempt, guarded against a transaction lost between two of its statements. On a Galera node a transaction
   * can be rolled back (another node's transaction on its rows won certification) without the statement that
   * follows being told (measured: an UPDATE reported 12 rows changed, the next statement of the same transaction
   * read none of them, no error). With autocommit on, the statements after it would each commit on their own, a
   * part of the transaction kept: so the writer's connection runs with autocommit off (they join an implicit
   * transaction instead), and a savepoint taken first must still exist at the end. A rollback takes it away, so
   * its release fails; the attempt is then rolled back whole and run again as a conflict.
   */
  private attempt<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    const deadline = new Deadline(this.timeouts.acquireMs);
    return this.writers.run(deadline, async () => {
      const conn = await this.connectionWithin(this.writerPool, deadline.remaining());
      const ms = this.timeouts.statementMs + STALL_GRACE_MS;
      const tx: Executor = {
        all: (sql, params = []) => this.answerOf(conn, senderOf(conn, sql, params), ms),
        run: async (sql, params = []) => { await tx.all(sql, params); },
      };
      // Transaction control cannot be prepared: a plain query.
      const command = (sql: string) => this.answerOf(conn, senderOf(conn, sql), ms);
      try {
        await command('START TRANSACTION');
        await command(`SAVEPOINT ${WHOLE}`);
        const result = await fn(tx);
        await command(`RELEASE SAVEPOINT ${WHOLE}`).catch((e: unknown) => { throw lostTransaction(e); });
        await command('COMMIT');
        return result;
      } catch (e) {
        // A destroyed connection's transaction is rolled back by the server when it notices. One whose ROLLBACK
        // failed may still hold statements: never handed on, where the next START TRANSACTION would commit them.
        await command('ROLLBACK').catch(() => this.discard(conn as unknown as CoreConnection));
        throw classify(e);
      } finally {
        conn.release();
      }
    });
  }

  /** knex on a connection of its own (schema-knex.ts), closed when the work is done. */
  async schemaWork<T>(fn: (knex: Knex) => Promise<T>): Promise<T> {
    const knex = mysqlSchemaKnex(this.url, this.timeouts.acquireMs);
    try {
      return await fn(knex);
    } catch (e) {
      throw classify(e);
    } finally {
      await boundedWait(knex.destroy(), this.timeouts.acquireMs, 'closing the schema connection').catch(() => undefined);
    }
  }

  /**
   * A pooled connection within `ms`, or DatabaseUnavailable (one handed over later goes back). The driver hands
   * over a free connection on the next tick, ahead of the timer's: only a request that has to wait for one is
   * given a timer, and the usual one, which would be cleared at once, is not made.
   */
  private acquireConnection(pool: mysql.Pool, ms: number, done: (failed: unknown, conn?: PoolConnection) => void): void {
    let settled = false;
    let handed = false;
    let timer: NodeJS.Timeout | undefined;
    pool.pool.getConnection((err, conn) => {
      handed = true;
      if (settled) {
        if (!err) conn.release();
        return;
      }
      settled = true;
      clearTimeout(timer);
      if (err) done(classify(err));
      else done(undefined, conn);
    });
    process.nextTick(() => {
      if (handed) return;
      timer = setTimeout(() => {
        settled = true;
        done(new DatabaseUnavailable(`no connection within ${this.timeouts.acquireMs} ms`));
      }, ms);
    });
  }

  /**
   * One statement's answer on `conn` (sent by `send`) within `ms`; past it, the connection is destroyed rather
   * than handed to the next statement half-read, and the answer is DatabaseUnavailable.
   */
  private awaitAnswer(conn: PoolConnection, send: StatementSender, ms: number, done: (failed: unknown, rows?: Row[]) => void): void {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      this.discard(conn as unknown as CoreConnection);
      done(new DatabaseUnavailable(`no answer within ${ms} ms`));
    }, ms);
    const answered = (err: unknown, rows?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) done(classify(err));
      else done(undefined, rows as Row[]);
    };
    // The driver refuses some parameters by throwing (in the caller's callback, where nothing else would catch it).
    try {
      send(answered);
    } catch (e) {
      answered(e);
    }
  }

  /** `acquireConnection` as a promise, for work that holds its connection across statements. */
  private connectionWithin(pool: mysql.Pool, ms: number): Promise<PoolConnection> {
    return new Promise((resolve, reject) => this.acquireConnection(pool, ms, (failed, conn) => (failed ? reject(failed) : resolve(conn!))));
  }

  /** `awaitAnswer` as a promise. */
  private answerOf(conn: PoolConnection, send: StatementSender, ms: number): Promise<Row[]> {
    return new Promise((resolve, reject) => this.awaitAnswer(conn, send, ms, (failed, rows) => (failed ? reject(failed) : resolve(rows!))));
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
    await boundedWait(Promise.all([this.pool.end(), this.writerPool.end()]), this.timeouts.acquireMs, 'closing').catch((e: unknown) => {
      if (!(e instanceof DatabaseUnavailable)) throw e;
      for (const c of [...this.open]) this.discard(c);
    });
  }
}

/** 0 once the replica has applied everything up to the position, -1 after the wait (MariaDB's GTID). */
const CAUGHT_UP = 'SELECT MASTER_GTID_WAIT(?, ?) AS caught';

/** The savepoint every write transaction takes first (see MysqlDatabase.attempt). */
const WHOLE = 'whole_transaction';

/** MariaDB's and MySQL's "SAVEPOINT … does not exist". */
const ER_SP_DOES_NOT_EXIST = 1305;

/** A failed release of the first savepoint: the transaction that took it is gone, lost to a conflict. */
function lostTransaction(e: unknown): unknown {
  return (e as { errno?: unknown })?.errno === ER_SP_DOES_NOT_EXIST ? new DatabaseUnavailable(UNANNOUNCED_ROLLBACK, e) : e;
}

/** Sends one statement on a connection, its answer to `answered`. */
type StatementSender = (answered: (err: unknown, rows?: unknown) => void) => void;

/** A statement prepared with its parameters, or (without them: transaction control, schema changes) a plain query. */
function senderOf(conn: PoolConnection, sql: string, params?: readonly unknown[]): StatementSender {
  return (answered) => (params ? conn.execute(sql, params as mysql.ExecuteValues[], answered) : conn.query(sql, answered));
}

/** The session setting by which the server stops a statement after `ms` (0: never). */
function statementLimit(c: CoreConnection, ms: number): string {
  return c._isMariaDB ? `SET SESSION max_statement_time = ${ms / 1000}` : `SET SESSION max_execution_time = ${Math.ceil(ms)}`;
}
