/**
 * The per-client limit on requests in progress, on the wire: a request past it answers
 * ConcurrencyLimited (429 with Retry-After). A slot is held from here until the response's 'close', which comes
 * once its end is sent or its connection is gone, so errors, aborted streams and vanished clients give it back.
 */
import type { NextFunction, Request, Response } from 'express';
import { Errors } from '../errors/catalogue';
import type { RequestsInProgress } from '../metering/requests-in-progress';
import { clientOf } from './authentication';

/** A slot usually frees within a response's time: a second is a fair first wait. */
const RETRY_AFTER_SECONDS = 1;

export function concurrencyLimiter(inProgress: RequestsInProgress) {
  // 'close' follows every response exactly once, finished or cut off (Node emits it after 'finish', and on a
  // connection lost first): one listener shared by every response gives the slot back, with no closure per request.
  function release(this: Response) {
    inProgress.leave(clientOf(this).id);
  }
  return (_req: Request, res: Response, next: NextFunction) => {
    const client = clientOf(res);
    if (!client) return next();
    if (!inProgress.enter(client.id)) return next(Errors.ConcurrencyLimited(client.id, inProgress.limit, RETRY_AFTER_SECONDS));
    res.on('close', release);
    next();
  };
}
