/**
 * The per-client limit on requests in progress, on the wire: a request past it answers
 * ConcurrencyLimited (429 with Retry-After). A slot is held from here until the response has finished or its
 * connection closed, whichever comes first, so errors, aborted streams and vanished clients give it back.
 */
import type { NextFunction, Request, Response } from 'express';
import { Errors } from '../errors/catalogue';
import type { RequestsInProgress } from '../metering/requests-in-progress';
import { clientOf } from './authentication';

/** A slot usually frees within a response's time: a second is a fair first wait. */
const RETRY_AFTER_SECONDS = 1;

export function concurrencyLimiter(inProgress: RequestsInProgress) {
  return (_req: Request, res: Response, next: NextFunction) => {
    const client = clientOf(res);
    if (!client) return next();
    if (!inProgress.enter(client.id)) return next(Errors.ConcurrencyLimited(client.id, inProgress.limit, RETRY_AFTER_SECONDS));
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      inProgress.leave(client.id);
    };
    // 'close' follows every response, finished or not; 'finish' and 'error' come first when they happen.
    res.once('finish', release);
    res.once('close', release);
    res.once('error', release);
    next();
  };
}
