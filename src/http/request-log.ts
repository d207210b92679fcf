/**
 * One log line and one metrics observation per request, when its response has ended (or its connection
 * closed first): method, path with its query (credentials in it redacted; headers never logged), status,
 * duration, bytes sent, client id, transaction class, request id. Server errors are logged with the error,
 * client errors at info; the probes (/health, /ready, /metrics) at debug, so that they do not drown the rest.
 */
import { randomUUID } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import { type Logger, requestLineLogger } from '../observability/logger';
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

/**
 * The request log's middleware for `app`, whose response prototype (Express's documented `app.response`) is
 * given a byte count first. Each response carries one small record of its own (when it started, its id, the bytes
 * sent), and one listener shared by all responses writes its line: nothing is made per request to remember them.
 */
export function requestLog(app: Pick<Express, 'response'>, parts: RequestLogParts) {
  countBodyBytes(app.response);
  const endpointOf = endpoints(parts.sets);
  const lines = requestLineLogger(parts.logger);
  function finished(this: Logged) {
    parts.metrics?.inProgress.dec();
    const { req, locals } = this;
    const record = locals[LOGGED]!;
    const seconds = (performance.now() - record.started) / 1000;
    const endpoint = endpointOf(req.originalUrl);
    // The request's own class comes first in its counts (http/resource-handlers.ts), its expansions' after.
    const charged = locals.charged as Record<string, number> | undefined;
    const transactionClass = (charged && Object.keys(charged)[0]) || 'none';
    const status = this.statusCode;
    const bytes = req.method === 'HEAD' ? 0 : record.bytes; // a HEAD response sends no body, whatever was written
    parts.metrics?.observe({ endpoint, status, transactionClass, seconds, bytes });
    const error = locals.error as unknown;
    const level = error && !(error instanceof ServiceError) ? 'error' : status >= 500 ? (status === 503 ? 'warn' : 'error')
      : PROBES.has(endpoint) ? 'debug' : 'info';
    if (!lines.isLevelEnabled(level)) return;
    const line: Record<string, unknown> = {
      reqId: record.id, method: req.method, path: redact(req.originalUrl), status, ms: Math.round(seconds * 10_000) / 10,
      bytes, client: (locals.client as { id?: string } | undefined)?.id, class: transactionClass,
    };
    if (charged) line.charged = charged;
    if (!this.writableFinished) line.aborted = true;
    if (error instanceof ServiceError) line.code = error.code;
    else if (error) line.err = error;
    lines[level](line, `${req.method} ${line.path} ${status}`);
  }
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    // In res.locals, not on the response: a property added to a response after Express has set its prototype
    // costs V8 a copy of the response's whole shape (about 3 µs a request here), where locals has no shape to copy.
    (res as Logged).locals[LOGGED] = { started: performance.now(), id, bytes: 0 } satisfies LogRecord;
    res.setHeader('X-Request-Id', id);
    parts.metrics?.inProgress.inc();
    // 'close' comes once for every response, finished or cut off.
    res.on('close', finished);
    next();
  };
}

/** The value of secret parameters replaced, so that a log never holds a credential. */
export function redact(url: string): string {
  // Without an `=` there is no parameter value to hide (most request paths: a key fetch's has none).
  return url.includes('=') ? url.replace(SECRET_PARAMS, '$1[redacted]') : url;
}

const LOGGED = Symbol('request log record');
interface LogRecord { readonly started: number; readonly id: string; bytes: number }
type Logged = Response & { locals: { [LOGGED]?: LogRecord } };

/**
 * Counts the body bytes that reach the connection (compressed ones, since compression wraps these per response),
 * once on the prototype every response of the app inherits from, rather than by wrapping each response's
 * write and end in closures of its own.
 */
function countBodyBytes(proto: Response): void {
  const write = proto.write as (this: Logged, chunk: unknown, encoding?: unknown, cb?: unknown) => boolean;
  const end = proto.end as (this: Logged, chunk?: unknown, encoding?: unknown, cb?: unknown) => Response;
  // Fixed parameters rather than rest arguments: these run on every response, and spreading allocates.
  proto.write = function (this: Logged, chunk: unknown, encoding?: unknown, cb?: unknown) {
    const record = this.locals?.[LOGGED];
    if (record) record.bytes += bodyBytes(chunk, encoding);
    return write.call(this, chunk, encoding, cb);
  } as typeof proto.write;
  proto.end = function (this: Logged, chunk?: unknown, encoding?: unknown, cb?: unknown) {
    // A large body comes as bytes already (response.ts encodes it once), so measuring a string here stays cheap.
    const record = this.locals?.[LOGGED];
    if (record) record.bytes += bodyBytes(chunk, encoding);
    return end.call(this, chunk, encoding, cb);
  } as typeof proto.end;
}

function bodyBytes(chunk: unknown, encoding: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding as BufferEncoding : 'utf8');
  return chunk instanceof Uint8Array ? chunk.length : 0;
}

/** The endpoint a path names, as a bounded label: an entity set, a fixed endpoint, or `other`. */
function endpoints(sets: readonly string[]): (url: string) => string {
  const known = new Set(sets);
  return (url) => {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path === SERVICE_ROOT || path === `${SERVICE_ROOT}/`) return 'service-document';
    if (path.startsWith(`${SERVICE_ROOT}/`)) {
      const segment = /^[^(/]*/.exec(path.slice(SERVICE_ROOT.length + 1))![0];
      if (segment === '$metadata') return '$metadata';
      return known.has(segment) ? segment : 'other';
    }
    return ROOT_ENDPOINTS[path] ?? 'other';
  };
}
