/**
 * One log line and one metrics observation per request, when its response has ended (or its connection
 * closed first): method, path with its query (credentials in it redacted; headers never logged), status,
 * duration, bytes sent, client id, transaction class, request id. Server errors are logged with the error,
 * client errors at info; the probes (/health, /ready, /metrics) at debug, so that they do not drown the rest.
 */
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../observability/logger';
import type { ServiceMetrics } from '../observability/metrics';
import { ServiceError } from '../errors/catalogue';
import { SERVICE_ROOT } from './response';

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

export function requestLog(parts: RequestLogParts) {
  const endpointOf = endpoints(parts.sets);
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', id);
    const sent = countBytes(res);
    parts.metrics?.inProgress.inc();
    res.once('close', () => {
      parts.metrics?.inProgress.dec();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const endpoint = endpointOf(req.originalUrl);
      // The request's own class comes first in its counts (http/resource-handlers.ts), its expansions' after.
      const charged = res.locals.charged as Record<string, number> | undefined;
      const transactionClass = (charged && Object.keys(charged)[0]) || 'none';
      const status = res.statusCode;
      parts.metrics?.observe({ endpoint, status, transactionClass, seconds, bytes: sent() });
      const error = res.locals.error as unknown;
      const line = {
        reqId: id, method: req.method, path: redact(req.originalUrl), status, ms: Math.round(seconds * 10_000) / 10,
        bytes: sent(), client: (res.locals.client as { id?: string } | undefined)?.id, class: transactionClass,
        ...(charged ? { charged } : {}),
        ...(res.writableFinished ? {} : { aborted: true }),
        ...(error instanceof ServiceError ? { code: error.code } : error ? { err: error } : {}),
      };
      const level = error && !(error instanceof ServiceError) ? 'error' : status >= 500 ? (status === 503 ? 'warn' : 'error')
        : PROBES.has(endpoint) ? 'debug' : 'info';
      parts.logger[level](line, `${req.method} ${line.path} ${status}`);
    });
    next();
  };
}

/** The value of secret parameters replaced, so that a log never holds a credential. */
export function redact(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

/** Counts the body bytes that reach the connection (compressed ones, when compression sits inside this). */
function countBytes(res: Response): () => number {
  let bytes = 0;
  const size = (chunk: unknown, encoding?: unknown) => (chunk === undefined || chunk === null || typeof chunk === 'function' ? 0
    : typeof chunk === 'string' ? Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding as BufferEncoding : 'utf8')
      : (chunk as Uint8Array).length);
  const write = res.write;
  const end = res.end;
  res.write = function (this: Response, chunk: unknown, ...rest: unknown[]) {
    bytes += size(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof res.write;
  res.end = function (this: Response, chunk?: unknown, ...rest: unknown[]) {
    // A large body comes as bytes already (response.ts encodes it once), so measuring a string here stays cheap.
    bytes += size(chunk, rest[0]);
    return (end as (...a: unknown[]) => Response).call(this, chunk, ...rest);
  } as typeof res.end;
  // A HEAD response sends no body, whatever was written.
  return () => (res.req.method === 'HEAD' ? 0 : bytes);
}

/** The endpoint a path names, as a bounded label: an entity set, a fixed endpoint, or `other`. */
function endpoints(sets: readonly string[]): (url: string) => string {
  const known = new Set(sets);
  return (url) => {
    const path = url.split('?', 1)[0];
    if (path === SERVICE_ROOT || path === `${SERVICE_ROOT}/`) return 'service-document';
    if (path.startsWith(`${SERVICE_ROOT}/`)) {
      const segment = /^[^(/]*/.exec(path.slice(SERVICE_ROOT.length + 1))![0];
      if (segment === '$metadata') return '$metadata';
      return known.has(segment) ? segment : 'other';
    }
    return ROOT_ENDPOINTS[path] ?? 'other';
  };
}
