/**
 * Per-client request limits (optional, set with the client): a sliding one-minute window
 * (sliding-window.ts) shared by every instance on one database. Each client's record is a versioned row;
 * allowing a request writes the next version on top of the current one (storage/rate-table.ts), and a version
 * another instance wrote first makes the write fail, so the record is read again and the request decided anew.
 * An instance keeps the last version it saw: a client within its limit costs one short transaction per request
 * and no read before it; a refusal costs nothing, because what another instance allowed meanwhile can only make
 * the answer more of a refusal.
 */
import { LRUCache } from 'lru-cache';
import { Clock, systemClock } from '../foundation/clock';
import type { RateStore } from '../storage/tables/rate-table';
import { Allowed, decide, decodeAllowed, encodeAllowed } from './sliding-window';

/** Clients whose record is kept in memory (a forgotten one is read again from the database). */
const RECORDS_KEPT = 100_000;
/** Versions written before the older ones are deleted (bounds the rows per client). */
const PRUNE_EVERY = 16;
/** Writes lost to other instances before a request is refused rather than tried again. */
const MAX_ATTEMPTS = 8;

export interface RateDecision {
  readonly allowed: boolean;
  /** Requests left in the window after this one. */
  readonly remaining: number;
  /** Whole seconds until the window is empty again (at least 1). */
  readonly resetSeconds: number;
  /** Whole seconds until a request would be allowed (at least 1). */
  readonly retryAfterSeconds: number;
}

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
