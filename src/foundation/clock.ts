/**
 * The time that expiries and windows are measured against (token lifetimes and the token cache, rate-limit
 * windows). Injected so that tests move it by hand instead of waiting for it.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
