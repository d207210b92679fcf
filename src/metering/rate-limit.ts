/**
 * Per-client request limits (optional, set with the client): a fixed one-minute window per instance.
 * Answers carry the RateLimit headers (IETF draft: RateLimit-Limit, -Remaining, -Reset); past the limit,
 * 429 with Retry-After.
 */
import type { NextFunction, Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import { ODataError } from '../http/odata-error';
import { clientOf } from '../auth/http';
import { Clock, systemClock } from '../clock';

const WINDOW_MS = 60_000;
/** Clients whose window is kept (the least recently seen goes first; a forgotten window starts afresh). */
const WINDOWS_KEPT = 100_000;

export function rateLimiter(clock: Clock = systemClock) {
  const windows = new LRUCache<string, { start: number; used: number }>({ max: WINDOWS_KEPT });
  return (_req: Request, res: Response, next: NextFunction) => {
    const client = clientOf(res);
    if (!client?.rateLimit) return next();
    const now = clock.now();
    let w = windows.get(client.id);
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, used: 0 };
      windows.set(client.id, w);
    }
    const reset = Math.max(1, Math.ceil((w.start + WINDOW_MS - now) / 1000));
    res.setHeader('RateLimit-Limit', String(client.rateLimit));
    res.setHeader('RateLimit-Reset', String(reset));
    if (w.used >= client.rateLimit) {
      res.setHeader('RateLimit-Remaining', '0');
      return next(new ODataError(429, 'TooManyRequests',
        `client ${client.id} may make ${client.rateLimit} requests a minute; retry after ${reset} s`, undefined, [], { 'Retry-After': String(reset) }));
    }
    w.used++;
    res.setHeader('RateLimit-Remaining', String(client.rateLimit - w.used));
    next();
  };
}
