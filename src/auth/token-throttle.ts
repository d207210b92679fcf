/**
 * Throttling of failed client authentications at the token endpoint, per claimed client id and per remote
 * address. Checking a secret costs a deliberately slow hash, so a throttled attempt is refused before any
 * hashing. An attempt counts as failed from the moment it starts and is taken back if it succeeds: many
 * attempts sent at once are throttled as surely as attempts sent one after another, and a client that
 * authenticates leaves nothing behind.
 *
 * Counts are kept per instance, in memory: what they protect is each instance's own CPU, and keeping them
 * costs no database work on a path an attacker drives. Behind N instances an attacker gets N times the
 * attempts; at these limits (10 a minute per client id) that is still nothing against a 256-bit secret.
 */
import { LRUCache } from 'lru-cache';
import { Clock, systemClock } from '../foundation/clock';

const WINDOW_MS = 60_000;
/** Ids and addresses whose recent failures are kept (the least recently seen goes first). */
const KEYS_KEPT = 100_000;
/** What a client id can be (auth/clients.ts); anything else is counted under one key, so no key is long. */
const CLIENT_ID = /^[A-Za-z0-9._-]{1,64}$/;

export interface ThrottleLimits {
  /** Failed attempts a minute for one client id, from anywhere. */
  readonly perClient: number;
  /** Failed attempts a minute from one remote address, whatever the client id. */
  readonly perAddress: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { perClient: 10, perAddress: 30 };

/** An attempt under way: `succeeded()` takes back what it counted. */
export interface Attempt {
  succeeded(): void;
}

/** Refused: seconds until an attempt may be made again, and whether the client id or the address is throttled. */
export interface Throttled {
  readonly retryAfterSeconds: number;
  readonly by: 'client' | 'address';
}

export class TokenThrottle {
  /** Start times of the attempts that failed or are under way, per key, oldest first. */
  private readonly failures = new LRUCache<string, number[]>({ max: KEYS_KEPT });

  constructor(private readonly clock: Clock = systemClock, private readonly limits: ThrottleLimits = DEFAULT_THROTTLE) {}

  /** Starts an attempt for `clientId` from `address`, or says how long to wait. */
  begin(clientId: string, address: string): Attempt | Throttled {
    const now = this.clock.now();
    const client = CLIENT_ID.test(clientId) ? clientId : '';
    const keys: [string, number, Throttled['by']][] = [[`a ${address}`, this.limits.perAddress, 'address'], [`c ${client}`, this.limits.perClient, 'client']];
    for (const [key, limit, by] of keys) {
      const recent = this.recent(key, now);
      if (recent.length >= limit) {
        return { by, retryAfterSeconds: Math.max(1, Math.ceil((recent[recent.length - limit] + WINDOW_MS - now) / 1000)) };
      }
    }
    for (const [key] of keys) this.recent(key, now).push(now);
    return { succeeded: () => { for (const [key] of keys) this.takeBack(key, now); } };
  }

  /** The key's failures within the window (kept in the cache, so pushing onto it records one). */
  private recent(key: string, now: number): number[] {
    const kept = (this.failures.get(key) ?? []).filter((t) => t > now - WINDOW_MS);
    this.failures.set(key, kept);
    return kept;
  }

  private takeBack(key: string, at: number): void {
    const kept = this.failures.get(key);
    const i = kept?.lastIndexOf(at) ?? -1;
    if (i >= 0) kept!.splice(i, 1);
  }
}
