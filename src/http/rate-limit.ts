/**
 * The client's request limit on the wire: answers carry the RateLimit headers (IETF draft: RateLimit-Limit,
 * -Remaining, -Reset); past the limit, RateLimited (429 with Retry-After). A client without a limit passes
 * straight through: nothing is read or written for it.
 */
import { Errors } from '../errors/catalogue';
import type { RateWindows } from '../metering/rate-limit';
import type { Step } from './pipeline';

export function rateLimiter(windows: Pick<RateWindows, 'take'>): Step {
  return (ctx, next) => {
    const client = ctx.client;
    const limit = client?.rateLimit;
    if (!limit) return next();
    const res = ctx.res;
    windows.take(client.id, limit).then((d) => {
      res.setHeader('RateLimit-Limit', String(limit));
      res.setHeader('RateLimit-Reset', String(d.resetSeconds));
      res.setHeader('RateLimit-Remaining', String(d.remaining));
      next(d.allowed ? undefined : Errors.RateLimited(client.id, limit, d.retryAfterSeconds));
    }, next);
  };
}
