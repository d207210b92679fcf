/** `GET /admin/webhooks`: every webhook subscription with its state, cursor, lag and failures, for admin clients only. */
import type { RequestHandler } from 'express';
import { Errors } from '../errors/catalogue';
import type { Subscriptions } from '../webhooks/subscriptions';
import { clientOf } from './authentication';

export function webhookReport(subscriptions: Pick<Subscriptions, 'list'>): RequestHandler {
  return (_req, res, next) => {
    (async () => {
      if (!clientOf(res)?.admin) throw Errors.AdminRequired('webhooks');
      const value = await subscriptions.list();
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(JSON.stringify({ value }));
    })().catch(next);
  };
}
