/**
 * Webhook subscriptions (reso_webhooks): rows as stored; src/webhooks/ decides what they mean. A row is also
 * the lease of the instance delivering its next batch: a claim is an update conditioned on the version the
 * claimant read and on the lease being free or expired, read back to learn whether it won; every outcome
 * moves the version again and is written only by the lease's holder, so of several instances on one database
 * exactly one delivers each batch, and one that died holds a subscription no longer than its lease.
 */
import type { Database, Row } from '../db/database';
import { WEBHOOKS_TABLE } from './internal-schema';
import { compile, type Buildable, type Knex } from '../sql/query-builder';
import { standIn, textTaking } from '../sql/shapes';

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

const [ID, STATE, NOW] = [standIn('subscription'), standIn('state'), standIn('now')];
const ACTIVE: SubscriptionRow['state'] = 'active';

export class SubscriptionTable implements SubscriptionStore {
  private readonly getSql: string;
  private readonly listSql: string;
  private readonly removeSql: string;
  private readonly dueSql: string;

  constructor(private readonly db: Database) {
    const webhooks = () => db.knex(WEBHOOKS_TABLE);
    this.getSql = textTaking(webhooks().select('*').where('subscription_id', ID), [ID]);
    this.listSql = textTaking(webhooks().select('*').orderBy('subscription_id', 'asc'), []);
    this.removeSql = textTaking(webhooks().where('subscription_id', ID).delete(), [ID]);
    this.dueSql = textTaking(webhooks().select('*').where('state', STATE).andWhere('next_attempt', '<=', NOW).andWhere(leaseFree(NOW))
      .orderBy('next_attempt', 'asc'), [STATE, NOW, NOW]);
  }

  async insert(row: SubscriptionRow): Promise<boolean> {
    await this.run(this.db.dialect.keepExisting(this.db.knex(WEBHOOKS_TABLE).insert(row), ['subscription_id']));
    // The token and creation time together tell this call's row from one inserted under the same id before.
    const stored = await this.get(row.subscription_id);
    return stored?.token === row.token && stored.created_at === row.created_at && stored.client_id === row.client_id;
  }

  async get(id: string): Promise<SubscriptionRow | undefined> {
    const [row] = await this.db.all(this.getSql, [id]);
    return row && typed(row);
  }

  async list(): Promise<SubscriptionRow[]> {
    return (await this.db.all(this.listSql)).map(typed);
  }

  async remove(id: string): Promise<boolean> {
    if (!(await this.get(id))) return false;
    await this.db.run(this.removeSql, [id]);
    return true;
  }

  async update(id: string, values: Partial<SubscriptionRow>): Promise<boolean> {
    const current = await this.get(id);
    if (!current) return false;
    await this.run(this.db.knex(WEBHOOKS_TABLE).update({ ...values, version: current.version + 1 }).where('subscription_id', id));
    return true;
  }

  async due(now: number): Promise<SubscriptionRow[]> {
    return (await this.db.all(this.dueSql, [ACTIVE, now, now])).map(typed);
  }

  async claim(seen: SubscriptionRow, owner: string, now: number, until: number): Promise<SubscriptionRow | undefined> {
    // A claim is made only when events wait: the first one since the subscription caught up marks when they began to.
    const waiting = seen.waiting_since === null ? { waiting_since: now } : {};
    await this.run(this.db.knex(WEBHOOKS_TABLE).update({ lease_owner: owner, lease_until: until, version: seen.version + 1, ...waiting })
      .where({ subscription_id: seen.subscription_id, version: seen.version, state: ACTIVE }).andWhere(leaseFree(now)));
    const row = await this.get(seen.subscription_id);
    return row?.lease_owner === owner && row.version === seen.version + 1 ? row : undefined;
  }

  async finish(claimed: SubscriptionRow, outcome: Outcome): Promise<boolean> {
    const next = claimed.version + 1;
    await this.run(this.db.knex(WEBHOOKS_TABLE).update({ ...outcome, lease_owner: null, lease_until: null, version: next })
      // `= ?` even for null (knex's shorthand would write IS NULL): a lease no instance holds is not this claim's.
      .where({ subscription_id: claimed.subscription_id, version: claimed.version }).andWhere('lease_owner', '=', claimed.lease_owner));
    const row = await this.get(claimed.subscription_id);
    return row?.version === next && row.lease_owner === null;
  }

  /**
   * A statement whose columns vary with the call (a claim, an outcome, an operator's change), compiled as it comes:
   * the values are knex's bindings. Two per delivery attempt, beside the attempt's HTTP request.
   */
  private run(q: Buildable): Promise<void> {
    const { sql, params } = compile(q);
    return this.db.run(sql, params);
  }
}

/** No instance holds the lease at `now`. */
function leaseFree(now: number | string): Knex.QueryCallback {
  return (q) => q.whereNull('lease_until').orWhere('lease_until', '<', now);
}

/** MariaDB returns bigint columns as strings or numbers depending on their size; the rows here are numbers. */
function typed(row: Row): SubscriptionRow {
  const out = { ...row } as Record<string, unknown>;
  for (const c of NUMBERS) if (out[c] !== null && out[c] !== undefined) out[c] = Number(out[c]);
  return out as unknown as SubscriptionRow;
}
