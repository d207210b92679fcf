/**
 * Webhook subscriptions, as the operator manages them: one per client and URL, with the consumer's bearer
 * token (stored to be sent; shown only as its last characters), a durable cursor, and the delivery state the
 * worker keeps (failures, last error, last success, next attempt). Their lag is read through the client's
 * own event query (event-feed.ts), so it counts only what the client may see.
 */
import { randomBytes } from 'node:crypto';
import type { ClientRegistry } from '../auth/clients';
import type { Clock } from '../foundation/clock';
import type { SubscriptionRow, SubscriptionStore } from '../storage/tables/webhook-table';
import type { ClientEventFeed, EventLag } from './event-feed';

export interface SubscriptionSpec {
  readonly client: string;
  readonly url: string;
  readonly token: string;
  /** The EntityEventSource header; default: the client's id. */
  readonly source?: string;
  /** Deliver only events after this sequence (default 0: the client's whole feed). */
  readonly from?: number;
}

/** A subscription as shown to the operator: the token masked, the lag added. */
export interface SubscriptionStatus {
  readonly id: string;
  readonly client: string;
  readonly url: string;
  readonly token: string;
  readonly source: string;
  readonly state: 'active' | 'paused';
  readonly cursor: number;
  readonly lag?: EventLag;
  /** Since when events have waited undelivered, as a worker first found them (ISO time; the age of the oldest waiting one, at most). */
  readonly waitingSince?: string;
  /** Why the lag could not be read (the client is gone, or its licence cannot be applied). */
  readonly lagError?: string;
  readonly failures: number;
  readonly lastError?: string;
  readonly lastSuccess?: string;
  /** When the next batch is tried (ISO time), while that is in the future. */
  readonly nextAttempt?: string;
  readonly createdAt: string;
}

export interface SubscriptionLag {
  readonly id: string;
  readonly client: string;
  readonly state: 'active' | 'paused';
  /** Undefined when it cannot be read (no event set, the client gone). */
  readonly events?: number;
  readonly oldestWaitingMs?: number;
}

/** Refused input: the message is one line an operator can act on. */
export class SubscriptionInvalid extends Error {}

export class Subscriptions {
  constructor(
    private readonly store: SubscriptionStore,
    private readonly clients: Pick<ClientRegistry, 'get'>,
    private readonly clock: Clock,
    private readonly feed?: ClientEventFeed,
  ) {}

  async add(spec: SubscriptionSpec): Promise<SubscriptionStatus> {
    const client = await this.clients.get(spec.client);
    if (!client) throw new SubscriptionInvalid(`no client ${spec.client} (see reso-server clients list)`);
    if (client.revokedAt) throw new SubscriptionInvalid(`client ${spec.client} is revoked`);
    const url = checkUrl(spec.url);
    const token = checkHeaderValue('--token', spec.token);
    const source = checkHeaderValue('--source', spec.source ?? client.id);
    if (source.length > 255) throw new SubscriptionInvalid('--source is longer than 255 characters');
    const from = spec.from ?? 0;
    if (!Number.isSafeInteger(from) || from < 0) throw new SubscriptionInvalid('--from needs a sequence number (a non-negative integer)');
    const row: SubscriptionRow = {
      subscription_id: `wh-${randomBytes(6).toString('hex')}`, client_id: client.id, url, token, source, cursor: from,
      state: 'active', failures: 0, last_error: null, last_success: null, next_attempt: 0, waiting_since: null, lease_owner: null, lease_until: null,
      version: 0, created_at: new Date(this.clock.now()).toISOString(),
    };
    if (!(await this.store.insert(row))) throw new SubscriptionInvalid(`subscription id ${row.subscription_id} is taken; try again`);
    return this.status(row);
  }

  async list(): Promise<SubscriptionStatus[]> {
    return Promise.all((await this.store.list()).map((r) => this.status(r)));
  }

  /**
   * Each subscription's lag, for metrics: the client's visible events after the cursor, and how long the oldest
   * of them has waited (since a worker first found them waiting; undefined while none wait or none was seen).
   */
  async lags(): Promise<SubscriptionLag[]> {
    const now = this.clock.now();
    return (await this.list()).map((s) => ({
      id: s.id, client: s.client, state: s.state, events: s.lag?.events,
      oldestWaitingMs: s.waitingSince ? Math.max(0, now - Date.parse(s.waitingSince)) : undefined,
    }));
  }

  async get(id: string): Promise<SubscriptionStatus | undefined> {
    const row = await this.store.get(id);
    return row && this.status(row);
  }

  async remove(id: string): Promise<void> {
    if (!(await this.store.remove(id))) throw new SubscriptionInvalid(`no webhook subscription ${id} (see reso-server webhooks list)`);
  }

  /** Makes a paused (or backing-off) subscription due now, its failures forgotten; `from` moves its cursor. */
  async resume(id: string, from?: number): Promise<SubscriptionStatus> {
    if (from !== undefined && (!Number.isSafeInteger(from) || from < 0)) throw new SubscriptionInvalid('--from needs a sequence number (a non-negative integer)');
    const cursor = from === undefined ? {} : { cursor: from, waiting_since: null };
    const done = await this.store.update(id, { state: 'active', failures: 0, next_attempt: 0, last_error: null, ...cursor });
    if (!done) throw new SubscriptionInvalid(`no webhook subscription ${id} (see reso-server webhooks list)`);
    return (await this.get(id))!;
  }

  private async status(r: SubscriptionRow): Promise<SubscriptionStatus> {
    let lag: EventLag | undefined;
    let lagError: string | undefined;
    if (this.feed) {
      const client = await this.clients.get(r.client_id);
      if (!client) lagError = `client ${r.client_id} no longer exists`;
      else lag = await this.feed.lag(client, r.cursor).catch((e: Error) => { lagError = e.message; return undefined; });
    }
    const now = this.clock.now();
    return {
      id: r.subscription_id, client: r.client_id, url: r.url, token: maskToken(r.token), source: r.source, state: r.state,
      cursor: r.cursor, ...(lag ? { lag } : {}), ...(r.waiting_since !== null && lag?.events ? { waitingSince: new Date(r.waiting_since).toISOString() } : {}), ...(lagError ? { lagError } : {}), failures: r.failures,
      ...(r.last_error ? { lastError: r.last_error } : {}), ...(r.last_success ? { lastSuccess: r.last_success } : {}),
      ...(r.next_attempt > now ? { nextAttempt: new Date(r.next_attempt).toISOString() } : {}), createdAt: r.created_at,
    };
  }
}

/** A token as shown: its last 4 characters, when it is long enough for that to give nothing away. */
export function maskToken(token: string): string {
  return token.length >= 16 ? `…${token.slice(-4)}` : '…';
}

function checkUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SubscriptionInvalid(`--url ${JSON.stringify(text)} is not an absolute URL (http://… or https://…)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SubscriptionInvalid(`--url must be http or https (got ${url.protocol.slice(0, -1)})`);
  if (url.username || url.password) throw new SubscriptionInvalid('--url must not carry credentials; give the consumer\'s token with --token');
  return url.toString();
}

/** A value sent in a header: printable, without line breaks, not empty. */
function checkHeaderValue(option: string, value: string | undefined): string {
  const v = value?.trim() ?? '';
  if (!v) throw new SubscriptionInvalid(`${option} needs a value`);
  if (!/^[\x20-\x7e]+$/.test(v)) throw new SubscriptionInvalid(`${option} may hold only printable ASCII characters`);
  return v;
}
