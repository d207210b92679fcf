/** `GET /admin/webhooks`: every webhook subscription with its state, cursor, lag and failures, for admin clients only. */
import type { RequestHandler } from 'express';
import type { Subscriptions } from '../../webhooks/subscriptions';

/** After the bearer and admin checks (app.ts). */
export function webhookReport(subscriptions: Pick<Subscriptions, 'list'>): RequestHandler {
  return (_req, res, next) => {
    (async () => {
      const value = await subscriptions.list();
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(JSON.stringify({ value }));
    })().catch(next);
  };
}
