/**
 * Webhook subscriptions (reso_webhooks): rows as stored; src/webhooks/ decides what they mean. A row is also
 * the lease of the instance delivering its next batch: a claim is an update conditioned on the version the
 * claimant read and on the lease being free or expired, read back to learn whether it won; every outcome
 * moves the version again and is written only by the lease's holder, so of several instances on one database
 * exactly one delivers each batch, and one that died holds a subscription no longer than its lease.
 */
import type { Database, Row } from './database';
import { WEBHOOKS_TABLE } from './internal-schema';
import { Sql, sql } from './sql';

export interface SubscriptionRow {
  subscription_id: string;
  client_id: string;
  url: string;
  token: string;
  source: string;
  cursor: number;
  state: 'active' | 'paused';
  failures: number;
  last_error: string | null;
  last_success: string | null;
  next_attempt: number;
  waiting_since: number | null;
  lease_owner: string | null;
  lease_until: number | null;
  version: number;
  created_at: string;
}

/** What a finished attempt writes (the lease is given up with it). */
export type Outcome = Partial<Pick<SubscriptionRow, 'cursor' | 'state' | 'failures' | 'last_error' | 'last_success' | 'next_attempt' | 'waiting_since'>>;

/** What the subscriptions ask of the database. */
export interface SubscriptionStore {
  /** Inserts a subscription; false when its id is taken. */
  insert(row: SubscriptionRow): Promise<boolean>;
  get(id: string): Promise<SubscriptionRow | undefined>;
  /** Every subscription, by id. */
  list(): Promise<SubscriptionRow[]>;
  /** Deletes one; returns whether it was there. */
  remove(id: string): Promise<boolean>;
  /** Sets values outside any lease (an operator's resume); returns whether the subscription is there. */
  update(id: string, values: Partial<SubscriptionRow>): Promise<boolean>;
  /** Active subscriptions due at `now` whose lease is free or expired. */
  due(now: number): Promise<SubscriptionRow[]>;
  /**
   * Takes the lease of `seen` (as read) for `owner` until `until`, if it is still at that version and free or
   * expired at `now`; returns the row as claimed, or undefined when another instance moved it first.
   */
  claim(seen: SubscriptionRow, owner: string, now: number, until: number): Promise<SubscriptionRow | undefined>;
  /** Writes an attempt's outcome and frees the lease, if `claimed` still holds it; returns whether it did. */
  finish(claimed: SubscriptionRow, outcome: Outcome): Promise<boolean>;
}

const NUMBERS = ['cursor', 'failures', 'next_attempt', 'waiting_since', 'lease_until', 'version'] as const;

export class SubscriptionTable implements SubscriptionStore {
  constructor(private readonly db: Database) {}

  async insert(row: SubscriptionRow): Promise<boolean> {
    const s = this.db.statements;
    await this.run(s.insert(WEBHOOKS_TABLE, Object.keys(row), [Object.values(row)], { key: ['subscription_id'], keep: true }));
    // The token and creation time together tell this call's row from one inserted under the same id before.
    const stored = await this.get(row.subscription_id);
    return stored?.token === row.token && stored.created_at === row.created_at && stored.client_id === row.client_id;
  }

  async get(id: string): Promise<SubscriptionRow | undefined> {
    const [row] = await this.all(this.db.statements.select({ from: WEBHOOKS_TABLE, columns: '*', where: this.byId(id) }));
    return row && typed(row);
  }

  async list(): Promise<SubscriptionRow[]> {
    const q = this.db.statements.select({ from: WEBHOOKS_TABLE, columns: '*', orderBy: [{ column: 'subscription_id', direction: 'asc' }] });
    return (await this.all(q)).map(typed);
  }

  async remove(id: string): Promise<boolean> {
    if (!(await this.get(id))) return false;
    await this.run(this.db.statements.delete(WEBHOOKS_TABLE, this.byId(id)));
    return true;
  }

  async update(id: string, values: Partial<SubscriptionRow>): Promise<boolean> {
    const current = await this.get(id);
    if (!current) return false;
    await this.run(this.db.statements.update(WEBHOOKS_TABLE, { ...values, version: current.version + 1 }, this.byId(id)));
    return true;
  }

  async due(now: number): Promise<SubscriptionRow[]> {
    const s = this.db.statements;
    const where = s.and([s.eq('state', 'active'), s.compare('next_attempt', '<=', now), this.leaseFree(now)]);
    const q = s.select({ from: WEBHOOKS_TABLE, columns: '*', where, orderBy: [{ column: 'next_attempt', direction: 'asc' }] });
    return (await this.all(q)).map(typed);
  }

  async claim(seen: SubscriptionRow, owner: string, now: number, until: number): Promise<SubscriptionRow | undefined> {
    const s = this.db.statements;
    const where = s.and([this.byId(seen.subscription_id), s.eq('version', seen.version), s.eq('state', 'active'), this.leaseFree(now)])!;
    // A claim is made only when events wait: the first one since the subscription caught up marks when they began to.
    const waiting = seen.waiting_since === null ? { waiting_since: now } : {};
    await this.run(s.update(WEBHOOKS_TABLE, { lease_owner: owner, lease_until: until, version: seen.version + 1, ...waiting }, where));
    const row = await this.get(seen.subscription_id);
    return row?.lease_owner === owner && row.version === seen.version + 1 ? row : undefined;
  }

  async finish(claimed: SubscriptionRow, outcome: Outcome): Promise<boolean> {
    const s = this.db.statements;
    const held = s.and([this.byId(claimed.subscription_id), s.eq('version', claimed.version), s.eq('lease_owner', claimed.lease_owner)])!;
    const next = claimed.version + 1;
    await this.run(s.update(WEBHOOKS_TABLE, { ...outcome, lease_owner: null, lease_until: null, version: next }, held));
    const row = await this.get(claimed.subscription_id);
    return row?.version === next && row.lease_owner === null;
  }

  /** No instance holds the lease at `now`. */
  private leaseFree(now: number): Sql {
    const s = this.db.statements;
    return sql`${s.id('lease_until')} IS NULL OR ${s.compare('lease_until', '<', now)}`;
  }

  private byId(id: string): Sql {
    return this.db.statements.eq('subscription_id', id);
  }

  private all(q: Sql): Promise<Row[]> {
    return this.db.all(q.sql, q.params);
  }

  private run(q: Sql): Promise<void> {
    return this.db.run(q.sql, q.params);
  }
}

/** MariaDB returns bigint columns as strings or numbers depending on their size; the rows here are numbers. */
function typed(row: Row): SubscriptionRow {
  const out = { ...row } as Record<string, unknown>;
  for (const c of NUMBERS) if (out[c] !== null && out[c] !== undefined) out[c] = Number(out[c]);
  return out as unknown as SubscriptionRow;
}
