/**
 * Per-client request limits (optional, set with the client): a fixed one-minute window per instance. Each
 * request takes a place in its client's current window, or is refused until the window resets.
 */
import { LRUCache } from 'lru-cache';
import { Clock, systemClock } from '../clock';

const WINDOW_MS = 60_000;
/** Clients whose window is kept (the least recently seen goes first; a forgotten window starts afresh, which only errs towards serving). */
const WINDOWS_KEPT = 100_000;

export interface RateDecision {
  readonly allowed: boolean;
  /** Requests left in the window after this one. */
  readonly remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  readonly resetSeconds: number;
}

export class RateWindows {
  private readonly windows = new LRUCache<string, { start: number; used: number }>({ max: WINDOWS_KEPT });

  constructor(private readonly clock: Clock = systemClock) {}

  take(clientId: string, perMinute: number): RateDecision {
    const now = this.clock.now();
    let w = this.windows.get(clientId);
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, used: 0 };
      this.windows.set(clientId, w);
    }
    const resetSeconds = Math.max(1, Math.ceil((w.start + WINDOW_MS - now) / 1000));
    if (w.used >= perMinute) return { allowed: false, remaining: 0, resetSeconds };
    w.used++;
    return { allowed: true, remaining: perMinute - w.used, resetSeconds };
  }
}
