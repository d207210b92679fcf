/**
 * `GET /admin/upstreams`: the upstreams `reso-server pull` replicates into this database, each with its state
 * (and why, when stopped), last success, lag, records written and last error, for admin clients only. No secret
 * leaves: the credentials are left out and the base URL's own credentials and query values masked.
 */
import type { RequestHandler } from 'express';
import { maskedUrl } from '../../pull/pull-settings';
import type { Upstreams } from '../../pull/upstreams';

/** After the bearer and admin checks (app.ts). */
export function upstreamReport(upstreams: Pick<Upstreams, 'list'>): RequestHandler {
  return (_req, res, next) => {
    (async () => {
      const value = (await upstreams.list()).map((u) => ({
        name: u.name, url: maskedUrl(u.url), sets: u.sets, strategy: u.strategy, state: u.state, lastError: u.lastError,
        lastSuccess: u.lastSuccess, lagSeconds: u.lagSeconds, recordsPulled: u.recordsPulled, faults: u.faults, puller: u.puller,
      }));
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(JSON.stringify({ value }));
    })().catch(next);
  };
}
