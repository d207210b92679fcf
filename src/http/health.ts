/**
 * The probes a service manager, load balancer or orchestrator polls, at the root beside /odata (the
 * convention; nothing under the service root is unauthenticated): `/health`, the process is up and answering;
 * `/ready`, its start-up work (schema, migrations, reference data) is done and the database answers now,
 * checked within a bound. Neither needs a token, is metered or rate-limited; both are cheap (a probe that
 * arrives while a check is under way shares it).
 */
import type { Middleware } from './pipeline';
import { checkReady, ServiceReadiness } from './readiness';

/** A probe's path, with the trailing slash Express's routes allow, and any query. */
const PROBE_PATH = /^\/(health|ready)\/?(?:\?|$)/;

/**
 * Both probes as one handler, answering GET and HEAD of their paths and passing every other request on. Every
 * request passes it, and a router of its own would cost each one a router's whole dispatch.
 */
export function probes(parts: ServiceReadiness): Middleware {
  const health = healthProbe();
  const ready = readinessProbe(parts);
  return (req, res, next) => {
    const m = req.method === 'GET' || req.method === 'HEAD' ? PROBE_PATH.exec(req.url ?? '') : null;
    if (!m) return next();
    (m[1] === 'health' ? health : ready)(req, res, next);
  };
}

function healthProbe(): Middleware {
  return (_req, res) => probeAnswer(res, 200, { status: 'up' });
}

/** 200 when ready; otherwise 503 ServiceUnavailable (an OData error body saying why, with Retry-After). */
function readinessProbe(parts: ServiceReadiness): Middleware {
  return (_req, res, next) => {
    checkReady(parts).then(() => probeAnswer(res, 200, { status: 'ready' }), next);
  };
}

function probeAnswer(res: Parameters<Middleware>[1], status: number, body: object): void {
  res.statusCode = status;
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}
