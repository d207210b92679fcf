/**
 * The client's request limit on the wire: answers carry the RateLimit headers (IETF draft: RateLimit-Limit,
 * -Remaining, -Reset); past the limit, RateLimited (429 with Retry-After).
 */
import type { NextFunction, Request, Response } from 'express';
import { Errors } from '../errors/catalogue';
import { RateWindows } from '../metering/rate-limit';
import { clientOf } from './authentication';

export function rateLimiter(windows = new RateWindows()) {
  return (_req: Request, res: Response, next: NextFunction) => {
    const client = clientOf(res);
    if (!client?.rateLimit) return next();
    const d = windows.take(client.id, client.rateLimit);
    res.setHeader('RateLimit-Limit', String(client.rateLimit));
    res.setHeader('RateLimit-Reset', String(d.resetSeconds));
    res.setHeader('RateLimit-Remaining', String(d.remaining));
    if (!d.allowed) return next(Errors.RateLimited(client.id, client.rateLimit, d.resetSeconds));
    next();
  };
}
