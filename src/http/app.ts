/**
 * The Express application: the OData service root under /odata, the generated routes of every entity set,
 * and the one place where error values become HTTP responses.
 */
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import type { RouteTable, ServiceModel } from '../model/service-model';
import type { SkipTokens } from '../paging/skiptoken';
import { DatabaseUnavailable } from '../storage/errors';
import type { RecordStores } from '../storage/record-stores';
import type { ClientRegistry } from '../auth/clients';
import { Licences } from '../auth/licence';
import { TokenThrottle } from '../auth/token-throttle';
import type { ScopeEpochs } from '../paging/scope-epoch';
import { Errors, ServiceError } from '../errors/catalogue';
import { MeteringUnavailable, UsageRecorder, UsageReport } from '../metering/meter';
import type { RateWindows } from '../metering/rate-limit';
import { RequestsInProgress } from '../metering/requests-in-progress';
import type { Clock } from '../clock';
import { requireBearer, tokenEndpoint } from './authentication';
import { concurrencyLimiter } from './concurrency-limit';
import { negotiateJson } from './json-format';
import { errorAnswer } from './error-status';
import { parseQueryString } from './query-string';
import { rateLimiter } from './rate-limit';
import type { ChangeLogMarks } from '../paging/change-log-marks';
import { resourceHandlers } from './resource-handlers';
import { ReaderGone, SERVICE_ROOT } from './response';
import { metadataDocument, serviceDocument } from './service-root';
import { requestLog } from './request-log';
import { cachingHeaders, DATA_CACHE_CONTROL } from './caching';
import { compressResponses, wholeBodyLength } from './compression';
import { corsFor } from './cors';
import { probes } from './health';
import { adminMetrics, MetricsText } from './metrics-endpoint';
import type { Logger } from '../observability/logger';
import { silentLogger } from '../observability/logger';
import type { ServiceMetrics } from '../observability/metrics';
import type { Reachability } from '../storage/reachable';
import { webhookReport } from './webhooks-endpoint';
import type { Subscriptions } from '../webhooks/subscriptions';
import { usagePeriods, usageReport } from './usage-endpoint';
import { adminClients } from './admin-clients';
import { explorerPolicy } from './explorer-policy';
import { consoleRoutes } from '../console/console-routes';

export const RETRY_AFTER_SECONDS = 5;

export interface AppOptions {
  /** Records per page of a collection response, unless the client prefers fewer (or more, up to maxPageSize). */
  pageSize: number;
  /** Largest page a client may ask for with `Prefer: odata.maxpagesize`. */
  maxPageSize: number;
  /** Absolute service root for links; by default taken from the request's Host. */
  baseUrl?: string;
  /** Longest $filter accepted (413 beyond). */
  maxFilterLength: number;
  /** Records of a page read, expanded and written at a time (http/page-batches.ts). */
  pageBatchSize: number;
  /** How long a response waits for a reader that takes nothing before disconnecting it, in milliseconds. */
  writeStallMs: number;
  /** Requests one client may have in progress at once; more answer 429 (http/concurrency-limit.ts). */
  maxConcurrentRequests: number;
  /** The operator's distribution scope: an OData filter on Property (see query/visibility.ts). */
  feedScope?: string;
  /**
   * No authentication, licensing or metering: for measuring what they cost (bench/). Deliberately not
   * reachable from configuration or the command line.
   */
  anonymous?: boolean;
  /** Where request lines go (none: silent). */
  logger?: Logger;
  /** gzip and brotli by Accept-Encoding (http/compression.ts). */
  compression?: boolean;
  /** Origins browsers may call from (http/cors.ts); none: CORS off. */
  corsOrigins?: readonly string[];
  /** Observes every request. */
  metrics?: ServiceMetrics;
  /** With it, admin clients scrape /metrics on the service port, answered by it (one process's, or a cluster's). */
  scrapeOnServicePort?: MetricsText;
}

/** What the application uses, each part for the handlers that need it. */
export interface AppParts {
  readonly model: ServiceModel;
  readonly stores: RecordStores;
  readonly clients: ClientRegistry;
  readonly meter: UsageRecorder & UsageReport;
  /** Whether the start-up work is done: until then, 503. */
  readonly readiness: { readonly ready: boolean };
  readonly skipTokens: () => SkipTokens;
  /** When what each client may see last changed without its records changing (ScopeChanged). */
  readonly scopeEpochs: ScopeEpochs;
  /** What marks into the change log are checked against, when there is one. */
  readonly changeLogMarks?: ChangeLogMarks;
  /** What the token endpoint's throttle is measured against. */
  readonly clock: Clock;
  /** The clients' request limits, shared with the other instances on the database. */
  readonly rateWindows: Pick<RateWindows, 'take'>;
  /** Whether the database answers now (GET /ready). */
  readonly database: Pick<Reachability, 'check'>;
  /** Webhook subscriptions, for /admin/webhooks. */
  readonly subscriptions?: Pick<Subscriptions, 'list'>;
}

export function createApp(parts: AppParts, options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag'); // hashing every body costs more than it saves for a replicating client
  app.set('case sensitive routing', true);
  // Parsed here rather than by Express's query parser, whose errors would surface before responses can be written.
  app.set('query parser', false);
  const log = requestLog(app, { logger: options.logger ?? silentLogger, metrics: options.metrics, sets: parts.model.entitySets.map((s) => s.name) });
  // The probes answer before the protocol version is settled: they speak no OData.
  app.use(inSeries(log, ...httpConventions(options), probes(parts), protocolVersion));

  const licences = new Licences(parts.model, options.feedScope);
  // Until the start-up work is done, nothing that needs the database is attempted: 503 with Retry-After.
  const ready = requireReady(parts.readiness);
  const authenticate = requireBearer(parts.clients);
  // A route, not a middleware: other requests never enter the token endpoint's router.
  app.post('/oauth2/token', ready, tokenEndpoint(parts.clients, new TokenThrottle(parts.clock)));

  const readOnly: RequestHandler = (req, res, next) => {
    res.setHeader('Cache-Control', DATA_CACHE_CONTROL);
    next(req.method === 'GET' || req.method === 'HEAD' ? undefined : Errors.MethodNotAllowed(req.method));
  };
  // Everything but $metadata is data, written in JSON at the metadata level the client asked for.
  const metadataPath = /^\/\$metadata$/;
  const negotiate = negotiateJson();
  const dataFormat: RequestHandler = (req, res, next) => (metadataPath.test(req.path) ? next() : negotiate(req, res, next));
  // Everything under the service root, on the app's own router: a router of its own would cost every data request
  // a second router's dispatch. Within this step, as within a mounted router, paths are the service root's.
  app.use(SERVICE_ROOT, inSeries(readOnly, ready, ...options.anonymous ? [] : [
    authenticate, concurrencyLimiter(new RequestsInProgress(options.maxConcurrentRequests)), rateLimiter(parts.rateWindows),
  ], dataFormat));
  const odata = underServiceRoot(app);
  odata.get(metadataPath, metadataDocument(licences));
  odata.get('/', serviceDocument(parts.model.entitySets, options));
  parts.model.mountRoutes(odata, resourceHandlers({ ...parts, licences }, options));
  app.get('/admin/usage', ready, authenticate, usageReport(parts.meter));
  if (options.scrapeOnServicePort) app.get('/metrics', ready, authenticate, adminMetrics(options.scrapeOnServicePort));
  if (parts.subscriptions) app.get('/admin/webhooks', ready, authenticate, webhookReport(parts.subscriptions));
  app.get('/admin/usage/periods', ready, authenticate, usagePeriods(parts.meter));
  app.use(adminClients({ model: parts.model, clients: parts.clients }, [ready, authenticate]));
  // The console: a public static shell; what it shows comes from the token-checked routes above and below.
  app.get('/console/api/explorer', ready, authenticate, explorerPolicy(parts.model, licences));
  app.use(consoleRoutes());

  app.use((req, _res, next) => next(Errors.ResourceNotFound(req.path, SERVICE_ROOT)));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => sendError(err, req, res));
  return app;
}

/**
 * The app's routes for paths given from the service root (as the generated routers give them): `/Property`
 * becomes `/odata/Property`, and a pattern `^\/…` becomes `^\/odata\/…`. Route handlers read their path below
 * the root with `resourcePath` (response.ts).
 */
function underServiceRoot(app: express.Express): RouteTable {
  const root = SERVICE_ROOT.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const under = (path: string | RegExp): string | RegExp => {
    if (typeof path === 'string') return path === '/' ? SERVICE_ROOT : `${SERVICE_ROOT}${path}`;
    if (!path.source.startsWith('^\\/')) throw new Error(`a route pattern must start at the service root: ${path.source}`);
    return new RegExp(`^${root}${path.source.slice(1)}`, path.flags);
  };
  return {
    get(path: string | RegExp | (string | RegExp)[], ...handlers: RequestHandler[]) {
      return app.get(Array.isArray(path) ? path.map(under) : under(path), ...handlers);
    },
  } as RouteTable;
}

/**
 * After the request log (which so sees every request, and counts the bytes sent after compression): CORS, then
 * compression (inside the ETag coding hook, whose header hook must run after compression's), then the
 * Content-Length of a body sent whole (inside compression, which removes it when it compresses, and leaves a HEAD
 * uncompressed).
 */
function httpConventions(options: AppOptions): RequestHandler[] {
  const cors = corsFor(options.corsOrigins ?? []);
  return [...cors ? [cors] : [], ...options.compression ? [compressResponses(cachingHeaders())] : [], wholeBodyLength()];
}

/** The version the response speaks, and the query options. */
const protocolVersion: RequestHandler = (req, res, next) => {
  const version = odataVersion(req);
  if (version === undefined) return next(Errors.ProtocolVersionNotSupported(String(req.headers['odata-maxversion'])));
  res.setHeader('OData-Version', version);
  const q = req.url.indexOf('?');
  (req as { query: unknown }).query = parseQueryString(q < 0 ? '' : req.url.slice(q + 1));
  next();
};

/**
 * Handlers run one after another as one of Express's layers: every data request passes all of them, and each
 * layer costs Express a path match and a dispatch of its own. The first error ends the series.
 */
function inSeries(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err || i === handlers.length) return next(err);
      // As Express does for each layer: a handler that throws passes its error on (some run in a promise's callback).
      try {
        handlers[i++](req, res, step);
      } catch (e) {
        next(e);
      }
    };
    step();
  };
}

/**
 * The version a response speaks: 4.01, or 4.0 for a client whose OData-MaxVersion is 4.0; undefined for a
 * client that can speak no version this service has (below 4.0, as RESO's Web API Core asks: 400). What
 * differs in a 4.0 response: json-format.ts and its users.
 */
function odataVersion(req: Request): '4.0' | '4.01' | undefined {
  const max = req.headers['odata-maxversion'];
  const m = typeof max === 'string' ? /^\s*(\d+)\.(\d+)\s*$/.exec(max) : null;
  if (!m) return '4.01';
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major < 4) return undefined;
  return major === 4 && minor === 0 ? '4.0' : '4.01';
}

/** Passes a request on once the service is ready; before, 503 with Retry-After. */
function requireReady(readiness: { readonly ready: boolean }): RequestHandler {
  return (_req, _res, next) => next(readiness.ready ? undefined : Errors.ServiceUnavailable('starting', RETRY_AFTER_SECONDS));
}

function sendError(err: unknown, _req: Request, res: Response): void {
  // For the request's log line (http/request-log.ts): server errors are logged with it.
  res.locals.error = err;
  if (res.headersSent || err instanceof ReaderGone) {
    // A status can no longer be given (or no one is there to read it): the connection is cut before the
    // body's end, so the client sees a truncated response (an unterminated chunked body), never a
    // complete-looking partial page.
    res.destroy();
    return;
  }
  const { status, headers, body } = errorAnswer(asServiceError(err));
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.statusCode = status;
  res.end(body);
}

/** Failures below the catalogue (the database, the usage journal, Express itself) as the errors clients see. */
function asServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof DatabaseUnavailable) return Errors.ServiceUnavailable('database', RETRY_AFTER_SECONDS);
  if (err instanceof MeteringUnavailable) return Errors.ServiceUnavailable('metering', RETRY_AFTER_SECONDS);
  // Express and its body parser raise these for malformed URLs (bad percent-encoding), oversized or
  // undecodable bodies and the like.
  const status = (err as { status?: number })?.status;
  const reason = (err as Error)?.message ?? '';
  if (status === 413) return Errors.RequestTooLarge(reason);
  if (status === 415) return Errors.MediaTypeNotSupported(reason);
  if (typeof status === 'number' && status >= 400 && status < 500) return Errors.RequestMalformed(reason);
  return Errors.InternalError();
}
