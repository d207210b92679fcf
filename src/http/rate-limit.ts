/**
 * The client's request limit on the wire: answers carry the RateLimit headers (IETF draft: RateLimit-Limit,
 * -Remaining, -Reset); past the limit, RateLimited (429 with Retry-After). A client without a limit passes
 * straight through: nothing is read or written for it.
 */
import type { NextFunction, Request, Response } from 'express';
import { Errors } from '../errors/catalogue';
import type { RateWindows } from '../metering/rate-limit';
import { clientOf } from './authentication';

export function rateLimiter(windows: Pick<RateWindows, 'take'>) {
  return (_req: Request, res: Response, next: NextFunction) => {
    const client = clientOf(res);
    const limit = client?.rateLimit;
    if (!limit) return next();
    windows.take(client.id, limit).then((d) => {
      res.setHeader('RateLimit-Limit', String(limit));
      res.setHeader('RateLimit-Reset', String(d.resetSeconds));
      res.setHeader('RateLimit-Remaining', String(d.remaining));
      next(d.allowed ? undefined : Errors.RateLimited(client.id, limit, d.retryAfterSeconds));
    }, next);
  };
}
