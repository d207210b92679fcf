/**
 * Per-client request limits (optional, set with the client): a sliding one-minute window shared by every instance
 * on one database; http/rate-limit.ts applies them to requests. Each client's record is a versioned row;
 * allowing a request writes the next version on top of the current one (storage/tables/rate-table.ts), and a version
 * another instance wrote first makes the write fail, so the record is read again and the request decided anew.
 * An instance keeps the last version it saw: a client within its limit costs one short transaction per request
 * and no read before it; a refusal costs nothing, because what another instance allowed meanwhile can only make
 * the answer more of a refusal.
 */
import { LRUCache } from 'lru-cache';
import { Clock, systemClock } from '../foundation/clock';
import type { RateStore } from '../storage/tables/rate-table';

/** Clients whose record is kept in memory (a forgotten one is read again from the database). */
const RECORDS_KEPT = 100_000;
/** Versions written before the older ones are deleted (bounds the rows per client). */
const PRUNE_EVERY = 16;
/** Writes lost to other instances before a request is refused rather than tried again. */
const MAX_ATTEMPTS = 8;

/** A request's answer: allowed or not, and what the RateLimit headers tell the client. */
export type RateDecision = Omit<WindowDecision, 'next'>;

/*
 * The window, a sliding minute: a request is allowed when fewer than the limit were allowed in the 60 s
 * before it. What was allowed is kept per second (the count, and the latest time in that second), so the
 * record is at most 61 entries whatever the limit; a second's requests count until 60 s after the latest of
 * them. That errs only towards refusing (by under a second), so no 60 s span ever holds more than the limit.
 */
const WINDOW_MS = 60_000;
const SECOND_MS = 1000;

/** [latest time allowed in that second (ms since the epoch), requests allowed in it], oldest first. */
type Allowed = readonly (readonly [number, number])[];

export interface WindowDecision {
  readonly allowed: boolean;
  /** Requests left in the window after this one. */
  readonly remaining: number;
  /** Whole seconds until the window is empty again (at least 1). */
  readonly resetSeconds: number;
  /** Whole seconds until a request would be allowed (at least 1; meaningful when refused). */
  readonly retryAfterSeconds: number;
  /** The record after this request (unchanged when refused). */
  readonly next: Allowed;
}

const ceilSeconds = (ms: number) => Math.max(1, Math.ceil(ms / SECOND_MS));

/** Decides one request at `now` against `limit` requests per window, given what was allowed before. */
function decide(allowed: Allowed, now: number, limit: number): WindowDecision {
  const live = allowed.filter(([latest]) => latest > now - WINDOW_MS);
  const used = live.reduce((n, [, count]) => n + count, 0);
  if (used >= limit) {
    // The earliest moment enough of the oldest seconds have left the window to make room for one more.
    let left = used;
    let at = now;
    for (const [latest, count] of live) {
      left -= count;
      at = latest + WINDOW_MS;
      if (left < limit) break;
    }
    const newest = live[live.length - 1][0];
    return { allowed: false, remaining: 0, resetSeconds: ceilSeconds(newest + WINDOW_MS - now), retryAfterSeconds: ceilSeconds(at - now), next: allowed };
  }
  const last = live[live.length - 1];
  const next: Allowed = last && Math.floor(last[0] / SECOND_MS) === Math.floor(now / SECOND_MS)
    ? [...live.slice(0, -1), [now, last[1] + 1]]
    : [...live, [now, 1]];
  return { allowed: true, remaining: limit - used - 1, resetSeconds: ceilSeconds(WINDOW_MS), retryAfterSeconds: 1, next };
}

/** The record as stored: `<first time>` then `<offset from it>:<count>` per second, space-separated. */
function encodeAllowed(allowed: Allowed): string {
  if (allowed.length === 0) return '';
  const base = allowed[0][0];
  return [String(base), ...allowed.map(([t, n]) => `${t - base}:${n}`)].join(' ');
}

/** Reads a stored record; anything unreadable is an empty one (a window then starts afresh). */
function decodeAllowed(text: string | undefined): Allowed {
  const [base, ...entries] = (text ?? '').split(' ');
  const start = Number(base);
  if (!Number.isFinite(start)) return [];
  const out: [number, number][] = [];
  for (const e of entries) {
    const [offset, count] = e.split(':').map(Number);
    if (!Number.isInteger(offset) || !Number.isInteger(count) || count < 1) return [];
    out.push([start + offset, count]);
  }
  return out;
}

/* The records every instance shares. */
interface Known {
  readonly version: number;
  readonly allowed: Allowed;
}

export class RateWindows {
  private readonly known = new LRUCache<string, Known>({ max: RECORDS_KEPT });
  /** One decision per client at a time in this process: its own requests do not race each other's writes. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly store: RateStore, private readonly clock: Clock = systemClock) {}

  take(clientId: string, perMinute: number): Promise<RateDecision> {
    return this.serially(clientId, () => this.decide(clientId, perMinute));
  }

  private async decide(clientId: string, perMinute: number): Promise<RateDecision> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const known = this.known.get(clientId) ?? (await this.read(clientId));
      const d = decide(known.allowed, this.clock.now(), perMinute);
      if (!d.allowed) return d;
      const version = known.version + 1;
      if (await this.store.advance(clientId, version, encodeAllowed(d.next))) {
        this.known.set(clientId, { version, allowed: d.next });
        if (version % PRUNE_EVERY === 0) await this.store.forgetBefore(clientId, version);
        return d;
      }
      this.known.delete(clientId); // another instance wrote this version first
    }
    return { allowed: false, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1 };
  }

  private async read(clientId: string): Promise<Known> {
    const row = await this.store.latest(clientId);
    return row ? { version: row.version, allowed: decodeAllowed(row.state) } : { version: 0, allowed: [] };
  }

  private serially<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const result = (this.queues.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = result.catch(() => undefined);
    this.queues.set(key, tail);
    void tail.then(() => { if (this.queues.get(key) === tail) this.queues.delete(key); });
    return result;
  }
}
