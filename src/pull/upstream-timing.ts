/**
 * When the next request to an upstream may go: spaced to its allowed rate, after the wait a 429/503 asked for,
 * or after a backoff that doubles and is jittered so that many pullers do not return in step.
 */
import type { Clock } from '../foundation/clock';

/** A Retry-After header (seconds, or an HTTP date) as milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The wait before retry number `retry` (1 for the first): half of it fixed, half random, never past `maxWaitMs`. */
export function backoffMs(retry: number, firstWaitMs: number, maxWaitMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxWaitMs, firstWaitMs * 2 ** Math.min(retry - 1, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Spaces request starts by 1/rate seconds, callers in the order they asked. */
export class Pacer {
  private next = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly requestsPerSecond: number,
    private readonly clock: Clock,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  /** Resolves when a request may start. */
  turn(): Promise<void> {
    const mine = this.queue.then(async () => {
      const wait = this.next - this.clock.now();
      if (wait > 0) await this.sleep(wait);
      const gap = this.requestsPerSecond > 0 ? 1000 / this.requestsPerSecond : 0;
      this.next = Math.max(this.clock.now(), this.next) + gap;
    });
    this.queue = mine.catch(() => undefined);
    return mine;
  }
}

export const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
