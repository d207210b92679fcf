/**
 * The demo data's clock: every time is an offset from a fixed instant, never the wall clock,
 * so the same options always give the same records.
 */
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** "Now" for the demo data. */
export const BASE_TIME = Date.UTC(2026, 5, 1);

/** How far back ordinary activity (entries, changes) reaches. */
export const HISTORY_START = BASE_TIME - 3 * 365 * DAY;

/** Midnight UTC of the day holding `t`. */
export function startOfDay(t: number): number {
  return Math.floor(t / DAY) * DAY;
}

export function clamp(t: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, t));
}

/**
 * A date or timestamp as the story gives it to a field: a Date, which only a date or timestamp field takes (a number
 * would fit a numeric field too); none (null) for no time.
 */
export function when(t: number | undefined): Date | null {
  return t === undefined ? null : new Date(t);
}

/** When a record of the demo's standing data (an office, a member, a record of a set the story does not tell) was entered and last changed. */
export function recordTimes(rng: { between(min: number, max: number): number }): { entry: number; modified: number } {
  const entry = Math.floor(rng.between(HISTORY_START, BASE_TIME - 60 * DAY));
  return { entry, modified: Math.floor(rng.between(entry, BASE_TIME)) };
}
