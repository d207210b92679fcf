/**
 * A sliding one-minute window: a request is allowed when fewer than the limit were allowed in the 60 s
 * before it. What was allowed is kept per second (the count, and the latest time in that second), so the
 * record is at most 61 entries whatever the limit; a second's requests count until 60 s after the latest of
 * them. That errs only towards refusing (by under a second), so no 60 s span ever holds more than the limit.
 */
export const WINDOW_MS = 60_000;
const SECOND_MS = 1000;

/** [latest time allowed in that second (ms since the epoch), requests allowed in it], oldest first. */
export type Allowed = readonly (readonly [number, number])[];

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
export function decide(allowed: Allowed, now: number, limit: number): WindowDecision {
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
export function encodeAllowed(allowed: Allowed): string {
  if (allowed.length === 0) return '';
  const base = allowed[0][0];
  return [String(base), ...allowed.map(([t, n]) => `${t - base}:${n}`)].join(' ');
}

/** Reads a stored record; anything unreadable is an empty one (a window then starts afresh). */
export function decodeAllowed(text: string | undefined): Allowed {
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
