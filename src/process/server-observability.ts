/**
 * What a server process tells its operator: its logger, its metrics (with the database pool and usage journal
 * gauges), the metrics listener when METRICS_PORT is set, the start-up banner and the shutdown line. A cluster's
 * worker opens no metrics listener (its primary owns METRICS_PORT) and answers a scrape of its service port with
 * the primary's sum over every worker. It puts together parts of several layers (the cluster's worker side, the
 * metrics endpoint, the service), so it stands beside server.ts, at the top, not in observability/ below them.
 */
import { observePulls } from '../observability/pull-metrics';
import { upstreamsOver } from '../pull/upstreams';
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import type { Config } from '../config/config';
import { shareWithPrimary } from './cluster/worker-metrics';
import { MetricsText, startMetricsServer } from '../http/admin/metrics-endpoint';
import { hostForUrl } from '../config/operation';
import type { ListingService } from './service';
import { Logger, silentLogger } from '../observability/logger';
import { ServiceMetrics } from '../observability/metrics';

export interface ServerObservability {
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  /** What a scrape answers: this process's metrics, or in a cluster's worker every worker's (from the primary). */
  readonly scrape: MetricsText;
  /** Logs the banner once the server listens; starts the metrics listener (METRICS_PORT). */
  started(url: string, config: Config, ready: boolean): Promise<void>;
  /** Logs the shutdown line; closes the metrics listener. */
  stopping(reason?: string): Promise<void>;
}

/** Without a logger, the banner and the shutdown line go to `log` as plain lines (request lines go nowhere). */
export function serverObservability(service: ListingService, given: Logger | undefined, log: (line: string) => void): ServerObservability {
  const logger = given ?? silentLogger;
  const say = (fields: object, line: string) => (given ? given.info(fields, line) : log(line));
  const metrics = new ServiceMetrics({
    pool: service.db.poolStats ? () => service.db.poolStats?.() : undefined,
    conflicts: service.db.conflicts ? () => service.db.conflicts?.() : undefined,
    usageLag: () => service.meter.lag(),
    recordCache: () => service.recordCache.stats(),
  });
  const upstreams = upstreamsOver(service.db, service.model, service.clock);
  observePulls(metrics, () => upstreams.list());
  const shared = cluster.isWorker ? shareWithPrimary(() => metrics.registries()) : undefined;
  const scrape = shared ? () => shared.scrape() : () => metrics.text();
  let metricsServer: Server | undefined;
  return {
    logger,
    metrics,
    scrape,
    async started(url, config, ready) {
      let metricsUrl = `${url.replace(/\/odata$/, '')}/metrics (admin token)`;
      if (config.metricsPort !== undefined && cluster.isWorker) {
        metricsUrl = `METRICS_PORT ${config.metricsPort} (the primary's, over every worker)`;
      } else if (config.metricsPort !== undefined) {
        metricsServer = await startMetricsServer(scrape, config.metricsPort, config.metricsHost);
        const port = (metricsServer.address() as { port: number }).port;
        metricsUrl = `http://${hostForUrl(config.metricsHost)}:${port}/metrics`;
      }
      say({
        url, database: service.db.description, host: config.host, pageSize: config.pageSize, maxPageSize: config.maxPageSize,
        pageBatchSize: config.pageBatchSize, workers: cluster.isWorker ? config.workers : 1, compression: config.compression, corsOrigins: config.corsOrigins,
        metrics: metricsUrl, logLevel: config.logLevel, ready,
      }, `serving ${url} from ${service.db.description}${ready ? '' : ' (503 until the start-up work is done)'}`);
    },
    async stopping(reason = 'closing') {
      say({ reason }, `shutting down (${reason}): no new connections; in-flight requests end, then the database closes`);
      shared?.stop();
      if (metricsServer) await new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
    },
  };
}
