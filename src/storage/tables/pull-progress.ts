/**
 * How far `reso-server pull` has come (reso_pull_checkpoints) and which upstream wrote each pulled record
 * (reso_pull_records). Both are written with the executor of the transaction that writes the records they speak
 * of, so a puller killed at any moment finds them exactly as far as the records went.
 */
import type { Database, Executor } from '../db/database';
import { PULL_CHECKPOINTS_TABLE, PULL_RECORDS_TABLE } from './internal-schema';
import { compile, type Buildable } from '../sql/query-builder';
import { batchesOf, KEYS_PER_STATEMENT, rowsPerStatement } from '../sql/shapes';

/** A pulled record: its key as JSON text, and the upstream's own change timestamp of it. */
export interface PulledRecord {
  readonly key: string;
  readonly upstreamTimestamp: string | null;
}

export class PullProgress {
  constructor(private readonly db: Database) {}

  async checkpoint(upstream: string, set: string, strategy: string, ex: Executor = this.db): Promise<string | undefined> {
    const { sql, params } = compile(this.db.knex(PULL_CHECKPOINTS_TABLE).select('position').where({ upstream, set_name: set, strategy }));
    const [row] = await ex.all(sql, params);
    return row === undefined ? undefined : String(row.position);
  }

  async checkpoints(upstream: string): Promise<{ set: string; strategy: string; position: string; updatedAt: string }[]> {
    const { sql, params } = compile(this.db.knex(PULL_CHECKPOINTS_TABLE).select('*').where({ upstream }).orderBy(['set_name', 'strategy']));
    return (await this.db.all(sql, params)).map((r) => ({ set: String(r.set_name), strategy: String(r.strategy), position: String(r.position), updatedAt: String(r.updated_at) }));
  }

  async setCheckpoint(ex: Executor, upstream: string, set: string, strategy: string, position: string, now: string): Promise<void> {
    await run(ex, this.db.knex(PULL_CHECKPOINTS_TABLE).insert({ upstream, set_name: set, strategy, position, updated_at: now })
      .onConflict(['upstream', 'set_name', 'strategy']).merge(['position', 'updated_at']));
  }

  /** Records `upstream` as the writer of `records` of `set` (taking them from any upstream that wrote them before). */
  async own(ex: Executor, upstream: string, set: string, records: readonly PulledRecord[]): Promise<void> {
    const rows = records.map((r) => ({ set_name: set, record_key: r.key, upstream, upstream_timestamp: r.upstreamTimestamp }));
    for (const batch of batchesOf(rows, rowsPerStatement(this.db.dialect, 4))) {
      await run(ex, this.db.knex(PULL_RECORDS_TABLE).insert(batch).onConflict(['set_name', 'record_key']).merge(['upstream', 'upstream_timestamp']));
    }
  }

  /** Forgets records of `set` that `upstream` wrote (removed locally); another upstream's are left alone. */
  async disown(ex: Executor, upstream: string, set: string, keys: readonly string[]): Promise<void> {
    for (const batch of batchesOf(keys, KEYS_PER_STATEMENT)) {
      await run(ex, this.db.knex(PULL_RECORDS_TABLE).where({ upstream, set_name: set }).whereIn('record_key', [...batch]).delete());
    }
  }

  /** Keys (as JSON text) of `set`'s records that `upstream` wrote, in key order after `after`, at most `limit`. */
  async keys(upstream: string, set: string, after: string | undefined, limit: number): Promise<string[]> {
    let q = this.db.knex(PULL_RECORDS_TABLE).select('record_key').where({ upstream, set_name: set });
    if (after !== undefined) q = q.andWhere('record_key', '>', after);
    const { sql, params } = compile(q.orderBy('record_key', 'asc').limit(limit));
    return (await this.db.all(sql, params)).map((r) => String(r.record_key));
  }

  /** `set`'s records that `upstream` wrote, with their upstream timestamps, in key order after `after`, at most `limit`. */
  async pulled(upstream: string, set: string, after: string | undefined, limit: number): Promise<PulledRecord[]> {
    let q = this.db.knex(PULL_RECORDS_TABLE).select('record_key', 'upstream_timestamp').where({ upstream, set_name: set });
    if (after !== undefined) q = q.andWhere('record_key', '>', after);
    const { sql, params } = compile(q.orderBy('record_key', 'asc').limit(limit));
    return (await this.db.all(sql, params)).map((r) => ({ key: String(r.record_key), upstreamTimestamp: r.upstream_timestamp === null ? null : String(r.upstream_timestamp) }));
  }

  /** Of `keys` (as JSON text) of `set`, those `upstream` wrote. */
  async owned(upstream: string, set: string, keys: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    for (const batch of batchesOf(keys, KEYS_PER_STATEMENT)) {
      const { sql, params } = compile(this.db.knex(PULL_RECORDS_TABLE).select('record_key').where({ upstream, set_name: set }).whereIn('record_key', [...batch]));
      out.push(...(await this.db.all(sql, params)).map((r) => String(r.record_key)));
    }
    return out;
  }

  /** The upstream's own change timestamp of a pulled record, where it wrote one. */
  async upstreamTimestamp(set: string, key: string): Promise<{ upstream: string; timestamp: string | null } | undefined> {
    const { sql, params } = compile(this.db.knex(PULL_RECORDS_TABLE).select('upstream', 'upstream_timestamp').where({ set_name: set, record_key: key }));
    const [row] = await this.db.all(sql, params);
    return row && { upstream: String(row.upstream), timestamp: row.upstream_timestamp === null ? null : String(row.upstream_timestamp) };
  }

  /** Forgets everything of `upstream` (it was removed); the records it wrote stay. */
  async forget(upstream: string): Promise<void> {
    await run(this.db, this.db.knex(PULL_CHECKPOINTS_TABLE).where({ upstream }).delete());
    await run(this.db, this.db.knex(PULL_RECORDS_TABLE).where({ upstream }).delete());
  }
}

function run(ex: Executor, q: Buildable): Promise<void> {
  const { sql, params } = compile(q);
  return ex.run(sql, params);
}
