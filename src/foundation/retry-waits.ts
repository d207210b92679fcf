/**
 * How long to wait before trying a peer again: the wait it asked for (Retry-After), or a backoff that doubles and
 * is jittered so that many callers that failed together do not return in step. Shared by the webhook worker (a
 * consumer's endpoint) and the puller (an upstream server).
 */

/** A Retry-After header (delay-seconds, or an HTTP date) as milliseconds from `now`; undefined when absent or unreadable. */
export function retryAfterMs(header: string | readonly string[] | null | undefined, now: number): number | undefined {
  const value = typeof header === 'string' ? header : header?.[0];
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The wait before retry number `retry` (1 for the first): doubling from `firstWaitMs` up to `maxWaitMs`, half of it fixed, half random. */
export function backoffMs(retry: number, firstWaitMs: number, maxWaitMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxWaitMs, firstWaitMs * 2 ** Math.min(retry - 1, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
