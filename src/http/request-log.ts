/**
 * One log line and one metrics observation per request, when its response has ended (or its connection
 * closed first): method, path with its query (credentials in it redacted; headers never logged), status,
 * duration, bytes sent, client id, transaction class, request id. Server errors are logged with the error,
 * client errors at info; the probes (/health, /ready, /metrics) at debug, so that they do not drown the rest.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type Logger, requestLineLogger } from '../observability/logger';
import type { ServiceMetrics } from '../observability/metrics';
import { ServiceError } from '../errors/catalogue';
import type { Step } from './pipeline';
import { RequestContext, SERVICE_ROOT } from './request-context';

/** Query parameters whose values are secrets, whatever a client puts them in. */
const SECRET_PARAMS = /([?&](?:access_token|client_secret|token|password)=)[^&#]*/gi;
/** A request id a client or proxy sent is kept when it looks like one; otherwise a fresh one is made. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const PROBES = new Set(['health', 'ready', 'metrics']);
const ROOT_ENDPOINTS: Readonly<Record<string, string>> = {
  '/oauth2/token': 'token', '/admin/usage': 'admin-usage', '/health': 'health', '/ready': 'ready', '/metrics': 'metrics',
};

export interface RequestLogParts {
  readonly logger: Logger;
  readonly metrics?: ServiceMetrics;
  /** The entity sets' names: the only path segments that become metric labels. */
  readonly sets: readonly string[];
}

/** The request's id: one a client or proxy sent, when it looks like one; otherwise a fresh one. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * The request log's step, the pipeline's first: when the response has ended (or its connection closed first), the
 * line and the observation are written from the request's context (its client, charge and error).
 */
export function requestLog(parts: RequestLogParts): Step {
  const endpointOf = endpoints(parts.sets);
  const lines = requestLineLogger(parts.logger);
  function finished(ctx: RequestContext) {
    parts.metrics?.inProgress.dec();
    const { req, res } = ctx;
    const seconds = (performance.now() - ctx.started) / 1000;
    const endpoint = endpointOf(ctx.pathname);
    // The request's own class comes first in its counts (http/resource-handlers.ts), its expansions' after.
    const charged = ctx.charged;
    const transactionClass = (charged && Object.keys(charged)[0]) || 'none';
    const status = res.statusCode;
    const bytes = req.method === 'HEAD' ? 0 : bodyBytes(ctx); // a HEAD response sends no body, whatever was written
    parts.metrics?.observe({ endpoint, status, transactionClass, seconds, bytes });
    const error = ctx.error;
    const level = error && !(error instanceof ServiceError) ? 'error' : status >= 500 ? (status === 503 ? 'warn' : 'error')
      : PROBES.has(endpoint) ? 'debug' : 'info';
    if (!lines.isLevelEnabled(level)) return;
    const line: Record<string, unknown> = {
      reqId: ctx.id, method: req.method, path: redact(ctx.url), status, ms: Math.round(seconds * 10_000) / 10,
      bytes, client: ctx.client?.id, class: transactionClass,
    };
    if (charged) line.charged = charged;
    if (!res.writableFinished) line.aborted = true;
    if (error instanceof ServiceError) line.code = error.code;
    else if (error) line.err = error;
    lines[level](line, `${req.method} ${line.path} ${status}`);
  }
  return (ctx, next) => {
    ctx.res.setHeader('X-Request-Id', ctx.id);
    parts.metrics?.inProgress.inc();
    // 'close' comes once for every response, finished or cut off.
    ctx.res.once('close', () => finished(ctx));
    next();
  };
}

/** The value of secret parameters replaced, so that a log never holds a credential. */
export function redact(url: string): string {
  // Without an `=` there is no parameter value to hide (most request paths: a key fetch's has none).
  return url.includes('=') ? url.replace(SECRET_PARAMS, '$1[redacted]') : url;
}

/**
 * The body's bytes as they went to the connection (compressed, when they were; with a chunked body's framing):
 * what the response added to its socket's count, less its header block. Nothing is wrapped to count them, so
 * every writer (ours, compression's, Express's) is counted alike.
 */
function bodyBytes(ctx: RequestContext): number {
  const sent = (ctx.socket.bytesWritten ?? ctx.bytesBefore) - ctx.bytesBefore;
  // Node keeps the header block it wrote as text (latin1: one byte a character).
  const header = (ctx.res as unknown as { _header?: string | null })._header;
  return Math.max(0, sent - (header ? header.length : 0));
}

/** The endpoint a path names, as a bounded label: an entity set, a fixed endpoint, or `other`. */
function endpoints(sets: readonly string[]): (path: string) => string {
  const known = new Set(sets);
  return (path) => {
    if (path === SERVICE_ROOT || path === `${SERVICE_ROOT}/`) return 'service-document';
    if (path.startsWith(`${SERVICE_ROOT}/`)) {
      const segment = /^[^(/]*/.exec(path.slice(SERVICE_ROOT.length + 1))![0];
      if (segment === '$metadata') return '$metadata';
      return known.has(segment) ? segment : 'other';
    }
    return ROOT_ENDPOINTS[path] ?? 'other';
  };
}
