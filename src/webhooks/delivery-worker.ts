/**
 * The delivery worker `serve` runs: for each active subscription that is due, it claims the subscription's
 * lease (storage/webhook-table.ts), reads the next batch of the client's visible events after the durable
 * cursor (event-feed.ts), POSTs it (post-batch.ts), and writes the outcome with the lease given up. The
 * cursor moves only after a 2xx, so every event is delivered at least once, in sequence order, across
 * restarts and instances; an instance that dies mid-batch holds the subscription until its lease expires, and
 * another delivers the batch again. A 429 waits its Retry-After; other failures back off exponentially (with
 * jitter, bounded) and, after `maxFailures` in a row, pause the subscription until the operator resumes it.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Client, ClientRegistry } from '../auth/clients';
import type { Clock } from '../foundation/clock';
import { backoffMs } from '../foundation/retry-waits';
import { Errors, ServiceError } from '../errors/catalogue';
import type { Outcome, SubscriptionRow, SubscriptionStore } from '../storage/tables/webhook-table';
import type { ClientEventFeed, EventBatch } from './event-feed';
import { postBatch, PushResult } from './post-batch';

export interface DeliveryOptions {
  /** Events per POST. */
  readonly batchSize: number;
  /** Consecutive failures that pause a subscription. */
  readonly maxFailures: number;
  /** The longest one POST may take, answer included. */
  readonly timeoutMs: number;
  /** How often due subscriptions are looked for. */
  readonly pollMs: number;
  /** The first backoff after a failure, doubled with each further one up to `maxBackoffMs`. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** In [0, 1): spreads backoffs (tests give a fixed one). */
  readonly random?: () => number;
  readonly log?: (line: string) => void;
}

export const DEFAULT_BACKOFF_MS = 1_000;
export const DEFAULT_MAX_BACKOFF_MS = 300_000;
/** What a claim holds beyond the POST's own timeout: the reads and writes around it, each bounded by the database's timeouts. */
const LEASE_MARGIN_MS = 30_000;
/** Refusals of a mark that only a walk of every resource (and a new cursor) can get past. */
const MARK_REFUSED: ReadonlySet<string> = new Set([Errors.EventSequenceExpired.code, Errors.ScopeChanged.code]);
/** Subscriptions one instance serves at once. */
const PARALLEL = 8;
/** Batches one subscription gets in a turn before the others are looked at again. */
const BATCHES_PER_TURN = 20;

export interface DeliveryParts {
  readonly store: SubscriptionStore;
  readonly clients: Pick<ClientRegistry, 'get'>;
  readonly feed: ClientEventFeed;
  readonly clock: Clock;
}

export class DeliveryWorker {
  /** Who holds a lease, for the other instances; random so that no two processes share it. */
  readonly owner = `${hostname()} pid ${process.pid} ${randomBytes(4).toString('hex')}`;
  private timer?: NodeJS.Timeout;
  /** Ends the POSTs in flight when the worker stops (their batches stay undelivered, and go out again). */
  private readonly stopping = new AbortController();
  private turn?: Promise<unknown>;
  private stopped = false;

  constructor(private readonly parts: DeliveryParts, private readonly options: DeliveryOptions) {}

  /** Looks for due subscriptions every `pollMs` until stopped. */
  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.runOnce().catch((e: Error) => this.options.log?.(`webhooks: ${e.message}`)).finally(() => {
        if (!this.stopped) this.timer = setTimeout(loop, this.options.pollMs).unref();
      });
    };
    loop();
  }

  /** Stops looking, and waits for the batches in flight (each bounded by its timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.stopping.abort();
    await this.turn;
  }

  /** One turn: every subscription due now gets up to BATCHES_PER_TURN batches. Returns the batches delivered. */
  runOnce(): Promise<number> {
    const turn = this.deliverDue();
    this.turn = turn.catch(() => undefined);
    return turn;
  }

  private async deliverDue(): Promise<number> {
    const due = await this.parts.store.due(this.parts.clock.now());
    let delivered = 0;
    for (let i = 0; i < due.length && !this.stopped; i += PARALLEL) {
      const counts = await Promise.all(due.slice(i, i + PARALLEL).map((s) => this.serve(s)));
      delivered += counts.reduce((a, b) => a + b, 0);
    }
    return delivered;
  }

  /** Batches of one subscription while it has full ones to send; each under a claim of its own. */
  private async serve(seen: SubscriptionRow): Promise<number> {
    let delivered = 0;
    let row: SubscriptionRow | undefined = seen;
    // Nothing to send: no claim is written (an idle subscription costs a read a poll).
    if (!(await this.waiting(seen).catch(() => true))) return 0;
    for (let n = 0; n < BATCHES_PER_TURN && row && !this.stopped; n++) {
      const now = this.parts.clock.now();
      const claimed = await this.parts.store.claim(row, this.owner, now, now + this.options.timeoutMs + LEASE_MARGIN_MS);
      if (!claimed) return delivered;
      const { outcome, more, sent } = await this.attempt(claimed).catch((e: Error) => ({
        // The database failed (the consumer did not): try again at the next poll, no failure counted.
        outcome: { last_error: `reading events: ${e.message}`.slice(0, 1000) } as Outcome, more: false, sent: false,
      }));
      const kept = await this.parts.store.finish(claimed, outcome);
      if (kept && outcome.state === 'paused') this.options.log?.(`webhooks: ${claimed.subscription_id} (client ${claimed.client_id}) paused: ${outcome.last_error}`);
      if (!kept) this.options.log?.(`webhooks: ${claimed.subscription_id} changed while a batch was out; it is delivered again`);
      if (sent) delivered++;
      row = more && kept ? await this.parts.store.get(claimed.subscription_id) : undefined;
    }
    return delivered;
  }

  /** Whether the subscription's client has events after its cursor (a client gone or revoked: yes, to record that). */
  private async waiting(row: SubscriptionRow): Promise<boolean> {
    const client = await this.parts.clients.get(row.client_id);
    if (!client || client.revokedAt) return true;
    return (await this.parts.feed.after(client, row.cursor, 1)).records.length > 0;
  }

  private async attempt(claimed: SubscriptionRow): Promise<{ outcome: Outcome; more: boolean; sent: boolean }> {
    const client = await this.parts.clients.get(claimed.client_id);
    const gone = !client ? 'no longer exists' : client.revokedAt ? 'is revoked' : undefined;
    if (gone) return { outcome: { state: 'paused', last_error: `client ${claimed.client_id} ${gone}` }, more: false, sent: false };
    let batch: EventBatch;
    try {
      batch = await this.parts.feed.after(client as Client, claimed.cursor, this.options.batchSize);
    } catch (e) {
      // The client's own query from the cursor would be refused too: the consumer walks again, and the operator resumes from a new cursor.
      if (!(e instanceof ServiceError) || !MARK_REFUSED.has(e.code)) throw e;
      const next = `then: reso-server webhooks resume ${claimed.subscription_id} --from <that sequence>`;
      return { outcome: { state: 'paused', last_error: `${e.message}; ${next}`.slice(0, 1000) }, more: false, sent: false };
    }
    if (batch.records.length === 0) return { outcome: {}, more: false, sent: false };
    const now = this.parts.clock.now();
    const result = await postBatch(claimed, batch.records, this.options.timeoutMs, now, this.stopping.signal);
    // Cut short by a stop, not by the consumer: no failure; the batch goes out again from the same cursor.
    if (result.kind === 'failed' && this.stopped) return { outcome: {}, more: false, sent: false };
    return { ...this.outcomeOf(claimed, result, batch), sent: result.kind === 'delivered' };
  }

  private outcomeOf(claimed: SubscriptionRow, result: PushResult, batch: EventBatch): { outcome: Outcome; more: boolean } {
    const now = this.parts.clock.now();
    switch (result.kind) {
      case 'delivered': {
        // A short batch was the last of what waited: caught up. After a full one, the rest has waited as long, at most.
        const more = batch.records.length >= this.options.batchSize;
        const outcome: Outcome = { cursor: batch.last!, failures: 0, last_error: null, last_success: new Date(now).toISOString(), next_attempt: 0 };
        return { outcome: more ? outcome : { ...outcome, waiting_since: null }, more };
      }
      case 'wait': {
        // The consumer asked for time (RCP-028's polite behaviour): not a failure.
        const wait = result.retryAfterMs ?? this.backoff(Math.max(1, claimed.failures));
        return { outcome: { next_attempt: now + wait, last_error: `HTTP 429, retrying in ${Math.ceil(wait / 1000)} s` }, more: false };
      }
      default: {
        const failures = claimed.failures + 1;
        const pause = failures >= this.options.maxFailures;
        const error = `${result.error}${pause ? `; paused after ${failures} failures in a row (reso-server webhooks resume ${claimed.subscription_id})` : ''}`;
        return {
          outcome: { failures, state: pause ? 'paused' : 'active', next_attempt: now + this.backoff(failures), last_error: error.slice(0, 1000) },
          more: false,
        };
      }
    }
  }

  /** The wait after the n-th failure in a row: doubling from backoffMs up to maxBackoffMs, between half and all of it. */
  backoff(n: number): number {
    const base = this.options.backoffMs ?? DEFAULT_BACKOFF_MS;
    const cap = this.options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
    return backoffMs(n, base, cap, this.options.random ?? Math.random);
  }
}
