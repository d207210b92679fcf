/**
 * Upstreams of `reso-server pull` (reso_pulls): rows as stored; src/pull/ decides what they mean. A row is also
 * the lease of the one puller active for the upstream, taken as webhook-table.ts takes a subscription's: an
 * update conditioned on the version read and on the lease being free or expired, read back to learn whether it
 * won. A puller renews its lease while it works; one that died holds the upstream no longer than its lease.
 */
import type { Database, Row } from '../db/database';
import { PULLS_TABLE } from './internal-schema';
import { compile, type Buildable } from '../sql/query-builder';

export interface PullRow {
  name: string;
  base_url: string;
  auth: string;
  sets: string;
  page_size: number;
  request_rate: string;
  overlap_seconds: number;
  strategy: string;
  state: 'active' | 'paused' | 'stopped';
  last_error: string | null;
  caught_up_at: number | null;
  records_pulled: number;
  faults: string;
  lease_owner: string | null;
  lease_until: number | null;
  version: number;
  created_at: string;
}

const NUMBERS = ['page_size', 'overlap_seconds', 'caught_up_at', 'records_pulled', 'lease_until', 'version'] as const;

export class PullTable {
  constructor(private readonly db: Database) {}

  /** Inserts an upstream; false when its name is taken. */
  async insert(row: PullRow): Promise<boolean> {
    if (await this.get(row.name)) return false;
    await this.run(this.db.dialect.keepExisting(this.db.knex(PULLS_TABLE).insert(row), ['name']));
    const stored = await this.get(row.name);
    return stored?.created_at === row.created_at && stored.auth === row.auth;
  }

  async get(name: string): Promise<PullRow | undefined> {
    const [row] = await this.all(this.db.knex(PULLS_TABLE).select('*').where('name', name));
    return row;
  }

  async list(): Promise<PullRow[]> {
    return this.all(this.db.knex(PULLS_TABLE).select('*').orderBy('name', 'asc'));
  }

  /** Deletes one; returns whether it was there. */
  async remove(name: string): Promise<boolean> {
    if (!(await this.get(name))) return false;
    await this.run(this.db.knex(PULLS_TABLE).where('name', name).delete());
    return true;
  }

  /** Sets values whoever holds the lease (an operator's pause, a puller's progress); returns whether the upstream is there. */
  async update(name: string, values: Partial<PullRow>): Promise<boolean> {
    const current = await this.get(name);
    if (!current) return false;
    await this.run(this.db.knex(PULLS_TABLE).update({ ...values, version: current.version + 1 }).where({ name, version: current.version }));
    return true;
  }

  /**
   * Takes or renews the lease for `owner` until `until`, if it is free, expired at `now`, or already `owner`'s;
   * returns the row as claimed, or undefined when another puller holds it.
   */
  async claim(name: string, owner: string, now: number, until: number): Promise<PullRow | undefined> {
    const seen = await this.get(name);
    if (!seen) return undefined;
    await this.run(this.db.knex(PULLS_TABLE).update({ lease_owner: owner, lease_until: until, version: seen.version + 1 })
      .where({ name, version: seen.version })
      .andWhere((q) => q.whereNull('lease_until').orWhere('lease_until', '<', now).orWhere('lease_owner', '=', owner)));
    const row = await this.get(name);
    return row?.lease_owner === owner && row.lease_until === until ? row : undefined;
  }

  /** Counts records a puller wrote (outside the lease's version: progress, not a claim). */
  async addPulled(name: string, count: number): Promise<void> {
    if (count > 0) await this.run(this.db.knex(PULLS_TABLE).increment('records_pulled', count).where({ name }));
  }

  /** Adds faults seen (by kind) to the upstream's counts. */
  async addFaults(name: string, seen: ReadonlyMap<string, number>): Promise<void> {
    const row = await this.get(name);
    if (!row || seen.size === 0) return;
    const faults = JSON.parse(row.faults) as Record<string, number>;
    for (const [kind, n] of seen) faults[kind] = (faults[kind] ?? 0) + n;
    await this.run(this.db.knex(PULLS_TABLE).update({ faults: JSON.stringify(faults) }).where({ name }));
  }

  /** Gives the lease up, if `owner` still holds it. */
  async release(name: string, owner: string): Promise<void> {
    await this.run(this.db.knex(PULLS_TABLE).update({ lease_owner: null, lease_until: null }).where({ name, lease_owner: owner }));
  }

  private async all(q: Buildable): Promise<PullRow[]> {
    const { sql, params } = compile(q);
    return (await this.db.all(sql, params)).map(typed);
  }

  /** A statement whose columns vary with the call, compiled as it comes (a few per page pulled, beside its HTTP request). */
  private run(q: Buildable): Promise<void> {
    const { sql, params } = compile(q);
    return this.db.run(sql, params);
  }
}

/** MariaDB returns bigint columns as strings or numbers depending on their size; the rows here are numbers. */
function typed(row: Row): PullRow {
  const out = { ...row } as Record<string, unknown>;
  for (const c of NUMBERS) if (out[c] !== null && out[c] !== undefined) out[c] = Number(out[c]);
  return out as unknown as PullRow;
}
