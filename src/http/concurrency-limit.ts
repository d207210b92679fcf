/**
 * The per-client limit on requests in progress, on the wire: a request past it answers
 * ConcurrencyLimited (429 with Retry-After). A slot is held from here until the response's 'close', which comes
 * once its end is sent or its connection is gone, so errors, aborted streams and vanished clients give it back.
 */
import { Errors } from '../errors/catalogue';
import type { RequestsInProgress } from '../metering/requests-in-progress';
import type { Step } from './pipeline';
import { ReaderGone } from './odata/response';

/** A slot usually frees within a response's time: a second is a fair first wait (not the 503s' wait: readiness.ts). */
const SLOT_RETRY_AFTER_SECONDS = 1;

export function concurrencyLimiter(inProgress: RequestsInProgress): Step {
  return (ctx, next) => {
    const client = ctx.client;
    if (!client) return next();
    // Gone while the bearer check waited on the database: its 'close' has passed and would never give a slot back.
    if (ctx.res.destroyed) return next(new ReaderGone('closed'));
    if (!inProgress.enter(client.id)) return next(Errors.ConcurrencyLimited(client.id, inProgress.limit, SLOT_RETRY_AFTER_SECONDS));
    // 'close' follows every response exactly once, finished or cut off (Node emits it after 'finish', and on a
    // connection lost first).
    ctx.res.once('close', () => inProgress.leave(client.id));
    next();
  };
}
