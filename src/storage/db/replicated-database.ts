/**
 * A MariaDB primary with asynchronous read replicas (DATABASE_REPLICA_URLS). Writes, transactions and schema work
 * go to the primary. Each read goes to a replica (in turn) once that replica has applied everything the primary
 * had committed when the read began: the primary's GTID position (`@@gtid_binlog_pos`, one small query) is waited
 * for on the replica with MASTER_GTID_WAIT, on the connection that then reads; a replica that cannot catch up
 * within `waitMs` (lagging, stopped, broken) leaves the read to the primary. So a read on a replica never sees a
 * state older than the primary's when the read began, exactly as a read on the primary would: a consumer moved
 * between instances (or between replicas) never reads back past what it has seen, and its removed-listings walk
 * never misses a listing it already holds (docs/scaling-out.md "Scaling out"). The cost is that query on the primary per read.
 */
import type { ConflictCounts, ConflictPolicy } from './conflicts';
import type { Database, Executor, PoolStats, Row } from './database';
import type { MysqlDatabase } from './mysql-database';
import type { Knex } from '../sql/query-builder';

/** The primary's position: every transaction it has committed (MariaDB's GTID, all domains). */
const PRIMARY_POSITION = 'SELECT @@gtid_binlog_pos AS position';

/** How long a replica that did not catch up in time (or failed) is passed over before it is tried again. */
const PASS_OVER_MS = 5000;

/** Reads answered by a replica, and by the primary because no replica had caught up in time: for metrics. */
export interface ReplicaCounts {
  byReplica: number;
  byPrimary: number;
}

export class ReplicatedDatabase implements Database {
  readonly dialect;
  readonly knex: Knex;
  readonly description: string;
  private turn = 0;
  private readonly counts: ReplicaCounts = { byReplica: 0, byPrimary: 0 };
  /** Until when (ms) a replica that did not catch up in time is passed over: its reads would each wait for nothing. */
  private readonly behindUntil = new Map<MysqlDatabase, number>();

  constructor(private readonly primary: MysqlDatabase, private readonly replicas: readonly MysqlDatabase[], private readonly waitMs: number) {
    this.dialect = primary.dialect;
    this.knex = primary.knex;
    this.description = `${primary.description} (reads on ${replicas.map((r) => r.description).join(', ')})`;
  }

  async all(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    const replica = this.nextReplica();
    if (replica) {
      const [{ position }] = await this.primary.all(PRIMARY_POSITION);
      const rows = await replica.readAfter(String(position ?? ''), this.waitMs, sql, params).catch(() => undefined);
      if (rows) {
        this.counts.byReplica++;
        return rows;
      }
      this.behindUntil.set(replica, Date.now() + PASS_OVER_MS);
    }
    this.counts.byPrimary++;
    return this.primary.all(sql, params);
  }

  /** The next replica in turn that has not lately failed to catch up (or none: the primary reads). */
  private nextReplica(): MysqlDatabase | undefined {
    const now = Date.now();
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[this.turn++ % this.replicas.length];
      if ((this.behindUntil.get(replica) ?? 0) <= now) return replica;
    }
    return undefined;
  }

  /** Scans (filters on fields without an index) keep the primary's bounded scan slots: few, and rare. */
  scan(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    return this.primary.scan(sql, params);
  }

  run(sql: string, params?: readonly unknown[]): Promise<void> {
    return this.primary.run(sql, params);
  }

  transaction<T>(fn: (tx: Executor) => Promise<T>, policy?: ConflictPolicy): Promise<T> {
    return this.primary.transaction(fn, policy);
  }

  schemaWork<T>(fn: (knex: Knex) => Promise<T>): Promise<T> {
    return this.primary.schemaWork(fn);
  }

  poolStats(): PoolStats {
    return this.primary.poolStats();
  }

  conflicts(): ConflictCounts {
    return this.primary.conflicts();
  }

  replicaCounts(): ReplicaCounts {
    return { ...this.counts };
  }

  async close(): Promise<void> {
    await Promise.all([this.primary, ...this.replicas].map((d) => d.close()));
  }
}
