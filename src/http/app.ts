/**
 * The application: the request pipeline (pipeline.ts), the server's request listener, which every request passes
 * first, with the OData service root under /odata and the routes of every entity set; the token
 * endpoint, admin API and console on an Express app it hands every other request to; and the one place where
 * error values become HTTP responses.
 */
import type { IncomingMessage, RequestListener } from 'node:http';
import express from 'express';
import type { ServiceModel } from '../model/service-model';
import type { AppOptions } from './app-options';
import type { SkipTokens } from '../paging/skiptoken';
import type { RecordStores } from '../storage/records/record-stores';
import type { ClientRegistry } from '../auth/clients';
import { Licences } from '../auth/licence';
import { TokenThrottle } from '../auth/token-throttle';
import type { ScopeEpochs } from '../paging/scope-epoch';
import { Errors, ServiceError } from '../errors/catalogue';
import type { UsageRecorder, UsageReport } from '../metering/meter';
import type { RateWindows } from '../metering/rate-limit';
import { RequestsInProgress } from '../metering/requests-in-progress';
import type { Clock } from '../foundation/clock';
import { requireBearer, tokenEndpoint } from './authentication';
import { concurrencyLimiter } from './concurrency-limit';
import { FormatNegotiation } from './odata/json-format';
import { errorAnswer } from './error-status';
import { parseQueryString } from './query-string';
import { rateLimiter } from './rate-limit';
import type { ChangeLogMarks } from '../paging/change-log-marks';
import type { WriteMark } from '../storage/records/write-mark';
import { resourceHandlers } from './odata/data-handlers';
import { ReaderGone } from './odata/response';
import { middlewareStep, requestPipeline, Step } from './pipeline';
import { ExpressRoutes } from './express-routes';
import { DataRoutes } from './odata/data-routes';
import { RequestContext, RequestContexts, SERVICE_ROOT, ServiceRoots } from './request-context';
import { metadataDocument, serviceDocument } from './odata/service-root';
import { requestId, requestLog } from './request-log';
import { cachingHeaders, DATA_CACHE_CONTROL } from './caching';
import { compressResponses, wholeBodyLength } from './compression';
import { corsFor } from './cors';
import { probes } from './health';
import { requireReady, ServiceReadiness, unavailableAnswer } from './readiness';
import { adminMetrics } from './admin/metrics-endpoint';
import { silentLogger } from '../observability/logger';
import { webhookReport } from './admin/webhooks-endpoint';
import { upstreamReport } from './admin/upstreams-endpoint';
import type { Upstreams } from '../pull/upstreams';
import type { Subscriptions } from '../webhooks/subscriptions';
import { usagePeriods, usageReport } from './admin/usage-endpoint';
import { adminClients, requireAdmin } from './admin/admin-clients';
import { explorerPolicy } from './admin/explorer-policy';
import { consoleRoutes } from '../console/console-routes';

/** What the application uses, each part for the handlers that need it. */
export interface AppParts extends ServiceReadiness {
  readonly model: ServiceModel;
  readonly stores: RecordStores;
  readonly clients: ClientRegistry;
  readonly meter: UsageRecorder & UsageReport;
  readonly skipTokens: () => SkipTokens;
  /** When what each client may see last changed without its records changing (ScopeChanged). */
  readonly scopeEpochs: ScopeEpochs;
  /** What marks into the change log are checked against, when there is one. */
  readonly changeLogMarks?: ChangeLogMarks;
  /** What every record write moves (storage/records/write-mark.ts): stitched gzip pages are kept whole while it stays. */
  readonly writeMark?: Pick<WriteMark, 'current'>;
  /** What the token endpoint's throttle is measured against. */
  readonly clock: Clock;
  /** The clients' request limits, shared with the other instances on the database. */
  readonly rateWindows: Pick<RateWindows, 'take'>;
  /** Webhook subscriptions, for /admin/webhooks. */
  readonly subscriptions?: Pick<Subscriptions, 'list'>;
  /** The upstreams `reso-server pull` replicates into this database, for /admin/upstreams. */
  readonly upstreams?: Pick<Upstreams, 'list'>;
}

export function createApp(parts: AppParts, options: AppOptions): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag'); // hashing every body costs more than it saves for a replicating client
  app.set('case sensitive routing', true);
  // Parsed by the pipeline rather than by Express's query parser, whose errors would surface before responses can be written.
  app.set('query parser', false);
  const licences = new Licences(parts.model, options.feedScope);
  const contexts = new RequestContexts(new ServiceRoots(options.baseUrl), licences);
  // Until the start-up work is done, nothing that needs the database is attempted: 503 with Retry-After.
  const ready = requireReady(parts.readiness);
  const authenticate = requireBearer(parts.clients);
  const rest = new ExpressRoutes(app);
  const pipeline = requestPipeline({
    contexts,
    requestId,
    every: everyRequest(parts, options),
    data: [readOnly, ready, ...options.anonymous ? [] : [
      authenticate, concurrencyLimiter(new RequestsInProgress(options.maxConcurrentRequests)), rateLimiter(parts.rateWindows),
    ], negotiateData(new FormatNegotiation())],
    routes: dataRoutes(parts, licences, options),
    rest,
    fail: sendError,
  });

  // Beside the service root, on Express's routes, each after the pipeline (which began the request's context).
  const guarded = (...steps: Step[]) => steps.map((s) => rest.step(s));
  const admin = (what: string) => guarded(ready, authenticate, requireAdmin(what));
  // A route, not a middleware: other requests never enter the token endpoint's router.
  app.post('/oauth2/token', ...guarded(ready), tokenEndpoint(parts.clients, new TokenThrottle(parts.clock)));
  app.get('/admin/usage', ...admin('usage'), rest.step(usageReport(parts.meter)));
  if (options.scrapeOnServicePort) app.get('/metrics', ...admin('metrics'), adminMetrics(options.scrapeOnServicePort));
  if (parts.subscriptions) app.get('/admin/webhooks', ...admin('webhooks'), webhookReport(parts.subscriptions));
  if (parts.upstreams) app.get('/admin/upstreams', ...admin('upstreams'), upstreamReport(parts.upstreams));
  app.get('/admin/usage/periods', ...admin('usage'), rest.step(usagePeriods(parts.meter)));
  app.use(adminClients({ model: parts.model, clients: parts.clients }, admin('the admin API')));
  // The console: a public static shell; what it shows comes from the token-checked routes above and below.
  app.get('/console/api/explorer', ...guarded(ready, authenticate), rest.step(explorerPolicy(parts.model)));
  app.use(consoleRoutes());

  app.use((req, _res, next) => next(Errors.ResourceNotFound(req.path, SERVICE_ROOT)));
  app.use(rest.failure(sendError));
  return pipeline;
}

/**
 * What every request takes, in order: the request log (first, so it sees every request, and counts the bytes sent
 * after compression); CORS; compression (inside the ETag coding hook, whose header hook must run after
 * compression's); the Content-Length of a body sent whole (inside compression, which removes it when it
 * compresses, and leaves a HEAD uncompressed); the probes, which answer before the protocol version is settled
 * (they speak no OData); the protocol version and the query options.
 */
function everyRequest(parts: AppParts, options: AppOptions): Step[] {
  const cors = corsFor(options.corsOrigins ?? []);
  const log = requestLog({ logger: options.logger ?? silentLogger, metrics: options.metrics, sets: parts.model.entitySets.map((s) => s.name) });
  const middleware = [...cors ? [cors] : [], ...options.compression ? [compressResponses(cachingHeaders())] : [], wholeBodyLength(), probes(parts)];
  return [log, ...middleware.map(middlewareStep), protocolVersion];
}

/** The data routes: the service document, $metadata, and the routes of every entity set. */
function dataRoutes(parts: AppParts, licences: Licences, options: AppOptions): DataRoutes {
  const routes = new DataRoutes();
  routes.get(METADATA_PATH, metadataDocument());
  routes.get('/', serviceDocument(parts.model.entitySets));
  routes.sets(parts.model.entitySets, resourceHandlers({ ...parts, licences }, options), parts.model.namespace);
  return routes;
}

const METADATA_PATH = /^\/\$metadata$/;

const readOnly: Step = (ctx, next) => {
  ctx.res.setHeader('Cache-Control', DATA_CACHE_CONTROL);
  const method = ctx.req.method;
  next(method === 'GET' || method === 'HEAD' ? undefined : Errors.MethodNotAllowed(String(method)));
};

/** Everything but $metadata is data, written in JSON at the metadata level the client asked for. */
function negotiateData(negotiation: FormatNegotiation): Step {
  return (ctx, next) => {
    if (!METADATA_PATH.test(ctx.path!)) ctx.format = negotiation.format(ctx.req, ctx.query, ctx.version);
    next();
  };
}

/** The version the response speaks, and the query options. */
const protocolVersion: Step = (ctx, next) => {
  const version = odataVersion(ctx.req);
  if (version === undefined) return next(Errors.ProtocolVersionNotSupported(String(ctx.req.headers['odata-maxversion'])));
  ctx.version = version;
  if (version !== ctx.format.version) ctx.format = { ...ctx.format, version };
  ctx.res.setHeader('OData-Version', version);
  ctx.query = parseQueryString(ctx.search);
  next();
};

/**
 * The version a response speaks: 4.01, or 4.0 for a client whose OData-MaxVersion is 4.0; undefined for a
 * client that can speak no version this service has (below 4.0, as RESO's Web API Core asks: 400). What
 * differs in a 4.0 response: json-format.ts and its users.
 */
function odataVersion(req: IncomingMessage): '4.0' | '4.01' | undefined {
  const max = req.headers['odata-maxversion'];
  const m = typeof max === 'string' ? /^\s*(\d+)\.(\d+)\s*$/.exec(max) : null;
  if (!m) return '4.01';
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major < 4) return undefined;
  return major === 4 && minor === 0 ? '4.0' : '4.01';
}

function sendError(ctx: RequestContext, err: unknown): void {
  // For the request's log line (http/request-log.ts): server errors are logged with it.
  ctx.error = err;
  const res = ctx.res;
  if (res.headersSent || err instanceof ReaderGone) {
    // A status can no longer be given (or no one is there to read it): the connection is cut before the
    // body's end, so the client sees a truncated response (an unterminated chunked body), never a
    // complete-looking partial page.
    res.destroy();
    return;
  }
  const { status, headers, body } = errorAnswer(asServiceError(err));
  // What the failed answer had said of its own body (a stitched gzip page sets its coding before its first byte).
  for (const h of ['Content-Encoding', 'Content-Length', 'ETag']) res.removeHeader(h);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.statusCode = status;
  res.end(body);
}

/** Failures below the catalogue (the database, the usage journal, Express itself) as the errors clients see. */
function asServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  const unavailable = unavailableAnswer(err);
  if (unavailable) return unavailable;
  // Express and its body parser raise these for malformed URLs (bad percent-encoding), oversized or
  // undecodable bodies and the like.
  const status = (err as { status?: number })?.status;
  const reason = (err as Error)?.message ?? '';
  if (status === 413) return Errors.RequestTooLarge(reason);
  if (status === 415) return Errors.MediaTypeNotSupported(reason);
  if (typeof status === 'number' && status >= 400 && status < 500) return Errors.RequestMalformed(reason);
  return Errors.InternalError();
}
