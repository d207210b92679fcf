/**
 * `GET /metrics` in the Prometheus text format. By default on the service's own port, for admin clients only
 * (a bearer token, as `/admin/usage`: scrape with `authorization: { credentials: <token> }`); with
 * METRICS_PORT, on a listener of its own bound to METRICS_HOST (loopback by default) without a token, and not on
 * the service's port. In a cluster, that listener belongs to the primary, which sums its workers' figures, and a
 * worker's service port answers with the same sum, asked of the primary; when it cannot be had in time the scrape
 * gets 503 MetricsUnavailable with an OData error body.
 */
import { createServer, Server } from 'node:http';
import type { RequestHandler } from 'express';
import { Errors, ServiceError } from '../../errors/catalogue';
import { errorAnswer } from '../error-status';
import { METRICS_CONTENT_TYPE } from '../../observability/metrics';

/** What answers a scrape: this process's metrics, or (in a cluster's primary) every worker's. */
export type MetricsText = () => Promise<string>;

/** For admin clients, after the bearer and admin checks (app.ts). */
export function adminMetrics(text: MetricsText): RequestHandler {
  return (_req, res, next) => {
    text().then((body) => {
      res.setHeader('Content-Type', METRICS_CONTENT_TYPE);
      res.setHeader('Cache-Control', 'no-store');
      res.end(body);
    }, next);
  };
}

/** A listener that answers `/metrics` and nothing else; resolves once it listens. */
export async function startMetricsServer(text: MetricsText, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || req.url?.split('?', 1)[0] !== '/metrics') {
      res.statusCode = 404;
      res.end();
      return;
    }
    text().then((body) => {
      res.setHeader('Content-Type', METRICS_CONTENT_TYPE);
      res.end(body);
    }, (e: unknown) => {
      const error = e instanceof ServiceError ? e : Errors.MetricsUnavailable(String((e as Error)?.message ?? e));
      const answer = errorAnswer(error);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
