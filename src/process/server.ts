/** Starting and stopping the HTTP server over a database. */
import { AddressInfo, Server as NetServer } from 'node:net';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { Config, maxRequestHead, usageOptions } from '../config/config';
import type { Clock } from '../foundation/clock';
import { createApp } from '../http/app';
import type { AppOptions } from '../http/app-options';
import { answerClientErrors } from '../http/client-errors';
import { ScopeEpochs } from '../paging/scope-epoch';
import { EntitySetSpec, listingRootOf, ServiceModel } from '../model/service-model';
import { isTransient } from './readiness';
import { ListingService } from './service';
import { openOnUse } from '../storage/db/open-on-use';
import { Reachability } from '../storage/db/reachable';
import type { Logger } from '../observability/logger';
import { serverObservability } from './server-observability';
import { hostForUrl } from '../config/operation';
import { observeWebhooks } from '../observability/webhook-metrics';

/** The readiness probe's bound on its database check (GET /ready). */
const READY_CHECK_MS = 1000;
import type { DeliveryOptions, DeliveryWorker } from '../webhooks/delivery-worker';
import { deliveryWorker, subscriptions } from '../webhooks/webhooks';
import { upstreamsOver, Upstreams } from '../pull/upstreams';
import type { PullLagRequirement } from '../http/readiness';

export interface RunningServer {
  readonly url: string;
  readonly service: ListingService;
  readonly server: Server;
  /** Pushes each webhook subscription's events (absent when the dictionary has no event set). */
  readonly webhooks?: DeliveryWorker;
  /**
   * Stops taking connections, lets requests in progress finish for up to `drainMs` (0: cuts them at once), then
   * closes the rest, applies the usage journal and closes the database.
   */
  close(drainMs?: number, reason?: string): Promise<void>;
}

/** Options beyond configuration: bench/ starts the app anonymous to measure what auth and metering cost; tests pass a clock. */
export interface ServerOptions extends Pick<AppOptions, 'anonymous'> {
  /** What token lifetimes and rate-limit windows are measured against (a test moves one by hand). */
  readonly clock?: Clock;
  /** Request lines, the banner and the shutdown line (none: request lines go nowhere, the rest to `log`). */
  readonly logger?: Logger;
  /** Tests: the worker's backoff and jitter, and `manual` to run its turns by hand (runOnce) instead of every WEBHOOK_POLL_MS. */
  readonly webhooks?: Partial<Pick<DeliveryOptions, 'random' | 'backoffMs' | 'maxBackoffMs'>> & { readonly manual?: boolean };
  /**
   * Take connections only once the start-up work is done, instead of at once with 503 meanwhile: for a worker
   * that replaces another in a cluster, where ready workers are taking the connections.
   */
  readonly listenWhenReady?: boolean;
}

/**
 * Listens at once, then does the start-up work: the returned server is ready, or (the database is away or
 * locked, or another instance is doing the work) answers 503 with Retry-After until the work, tried again in
 * the background, is done.
 */
export async function startServer(
  model: ServiceModel, config: Config, lines?: (line: string) => void, app: ServerOptions = {},
): Promise<RunningServer> {
  const log = lines ?? (app.logger ? (line: string) => app.logger!.info(line) : () => undefined);
  const db = openOnUse(config.databaseUrl, config.databaseTimeouts, config.topology);
  const service = new ListingService(model, db, {
    pagingSecret: config.pagingSecret,
    demoToken: config.demoToken,
    seedListings: config.seedListings,
    usage: usageOptions(config, log),
    clock: app.clock,
    changeLogRetention: config.changeLogRetention,
    recordCacheBytes: config.recordCacheBytes,
    log,
  });
  const observed = serverObservability(service, app.logger, log);
  const parts = {
    database: new Reachability(db, READY_CHECK_MS), ...pulls(config, upstreamsOver(db, model, service.clock)),
    model, dialect: db.dialect, stores: service.stores, clients: service.clients, meter: service.meter, clock: service.clock,
    rateWindows: service.rateWindows,
    readiness: service.readiness, skipTokens: () => service.readiness.value.skipTokens,
    // The feed scope this process serves is recorded (with an epoch when it differs from the last one) at its first query.
    scopeEpochs: new ScopeEpochs(() => service.settings.scopeEpoch('feed', config.feedScope ?? '')),
    subscriptions: subscriptions(service, config.feedScope),
    changeLogMarks: service.changeLog,
    writeMark: service.writeMark,
  };
  const { manual, ...tuning } = app.webhooks ?? {}; // guards: pushes are refused where the client's own query would be
  const webhooks = deliveryWorker(service, config.feedScope, service.changeLog && { marks: service.changeLog, epochs: parts.scopeEpochs }, { ...config.webhooks, ...tuning, log });
  if (webhooks) observeWebhooks(observed.metrics, () => parts.subscriptions.lags());
  const handler = createApp(parts, appOptions(config, app, observed));
  // Long query strings must reach the service, which answers 413 with an OData body; beyond even this head
  // limit, client-errors.ts answers 431 with one.
  const server = createServer({ maxHeaderSize: maxRequestHead(config) }, handler);
  answerClientErrors(server, maxRequestHead(config));
  server.keepAliveTimeout = 65_000;
  const pruning = pruneChangeLog(service, config.changeLogPruneMs, log);
  const inFlight = requestsInFlight(server);
  const close = async (drainMs = 0, reason?: string) => {
    clearInterval(pruning);
    await webhooks?.stop();
    await observed.stopping(reason);
    await drain(server, inFlight, drainMs);
    await service.close();
  };
  if (!app.listenWhenReady) await listen(server, config.port, config.host);
  try {
    await service.readiness.start();
  } catch (e) {
    if (!isTransient(e)) {
      await close();
      throw e;
    }
  }
  if (app.listenWhenReady) {
    await service.readiness.whenReady().then(() => listen(server, config.port, config.host)).catch(async (e: unknown) => { await close(); throw e; });
  }
  const url = `http://${hostForUrl(config.host)}:${(server.address() as AddressInfo).port}/odata`;
  service.readiness.whenReady().then((started) => {
    // Journaled counts move to the database from now on, starting with any a process that died left behind.
    if (!app.anonymous) service.meter.start();
    if (!manual) webhooks?.start();
    if (started.newDemoToken) log(demoTokenNotice(started.newDemoToken, url, model));
  }, () => undefined);
  await observed.started(url, config, service.readiness.ready).catch(async (e: unknown) => { await close(); throw e; });
  return { url, service, server, webhooks, close };
}

/** Prunes the change log's old events in the background, in bounded batches (storage/change-log-retention.ts). */
/** The upstreams pulled into the database, for /admin/upstreams, and PULL_MAX_LAG_SECONDS as /ready's requirement (none when unset). */
function pulls(config: Config, upstreams: Upstreams): { upstreams: Upstreams; pullLag?: PullLagRequirement } {
  const max = config.pullMaxLagSeconds;
  return { upstreams, pullLag: max === undefined ? undefined : { maxLagSeconds: max, lagging: () => upstreams.lagging(max) } };
}

/** The application's settings from the configuration, with what observes it. */
function appOptions(config: Config, app: ServerOptions, observed: ReturnType<typeof serverObservability>): AppOptions {
  return {
    ...app,
    pageSize: config.pageSize,
    maxPageSize: Math.max(config.maxPageSize, config.pageSize),
    baseUrl: config.baseUrl,
    maxFilterLength: config.maxFilterLength,
    pageBatchSize: config.pageBatchSize,
    writeStallMs: config.writeStallMs,
    maxConcurrentRequests: config.maxConcurrentRequests,
    feedScope: config.feedScope,
    compression: config.compression, gzipRunCacheBytes: config.gzipRunCacheBytes, gzipPageCacheBytes: config.gzipPageCacheBytes,
    corsOrigins: config.corsOrigins,
    metrics: observed.metrics,
    scrapeOnServicePort: config.metricsPort === undefined ? observed.scrape : undefined,
  };
}

function pruneChangeLog(service: ListingService, everyMs: number, log: (line: string) => void): NodeJS.Timeout {
  let running = false;
  const timer = setInterval(() => {
    if (running || !service.changeLog || !service.readiness.ready) return;
    running = true;
    service.changeLog.prune(new Date(service.clock.now()))
      .catch((e: Error) => log(`pruning the change log failed (tried again later): ${e.message}`))
      .finally(() => { running = false; });
  }, everyMs);
  timer.unref();
  return timer;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

/** The responses being written, so that a drain knows when they are done. */
function requestsInFlight(server: Server): Set<ServerResponse> {
  const responses = new Set<ServerResponse>();
  // One listener for every response ('close' comes once for each), rather than a closure per response.
  function written(this: ServerResponse) {
    responses.delete(this);
  }
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    responses.add(res);
    // A request that arrives on a kept-alive connection while draining ends that connection.
    if (!server.listening) res.shouldKeepAlive = false;
    res.on('close', written);
  });
  return responses;
}

/**
 * How long a draining server still reads requests from connections that have none in progress: a connection just
 * handed over (a cluster's primary accepted it) whose request has not been read yet looks idle, and so does a
 * kept-alive one whose next request is on its way; either would be reset if closed at once. Their requests are
 * answered (with Connection: close) meanwhile.
 */
const IDLE_GRACE_MS = 500;

/**
 * No new connections; requests in progress (and those arriving within IDLE_GRACE_MS) are answered, each
 * connection closed after its response, and whatever is still running after `drainMs` is cut.
 */
async function drain(server: Server, inFlight: Set<ServerResponse>, drainMs: number): Promise<void> {
  // net.Server's close stops accepting; http.Server's would also close the connections that look idle at once.
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  for (const res of inFlight) res.shouldKeepAlive = false;
  const start = Date.now();
  const deadline = start + drainMs;
  const grace = start + Math.min(drainMs, IDLE_GRACE_MS);
  while (Date.now() < deadline && (inFlight.size > 0 || Date.now() < grace)) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(50, deadline - Date.now()))));
    if (Date.now() >= grace) server.closeIdleConnections();
  }
  server.closeAllConnections();
  await closed;
}

/**
 * A first query worth pasting: five listings, a few fields (a whole first page is half a megabyte of JSON): the
 * key, the lookups a client may filter on (status, type), the change timestamp.
 */
function exampleQuery(set: EntitySetSpec | undefined): string {
  if (!set) return '';
  const lookups = set.fields.filter((f) => f.filterable && f.lookupName && !f.collection && !f.restricted).slice(0, 2).map((f) => f.name);
  const fields = [set.key, ...lookups, set.changeTimestamp].filter((f): f is string => f !== undefined);
  return `${set.name}?$top=5&$select=${[...new Set(fields)].join(',')}`;
}

/** What the first start prints: the demo client's new token, and a request to paste. */
export function demoTokenNotice(token: string, serviceRoot: string, model: ServiceModel): string {
  const example = `${serviceRoot}/${exampleQuery(listingRootOf(model))}`;
  return `demo client "demo" created; its access token (set DEMO_TOKEN to choose your own):\n\n  ${token}\n\n`
    + `  curl -H 'Authorization: Bearer ${token}' '${example}'\n`;
}
