/**
 * `reso-server serve`: one server process, or a cluster of them (src/cluster/primary.ts) on every core. Either way
 * a process stops like a service: on SIGTERM or SIGINT (or, for a worker, when its primary is gone) it stops taking
 * connections, lets requests in progress finish for up to SHUTDOWN_TIMEOUT_MS, applies its usage journal, closes the
 * database and exits 0.
 */
import cluster from 'node:cluster';
import { serviceModel } from '../../generated';
import { runPrimary } from './cluster/primary';
import { LISTEN_WHEN_READY, WORKER_READY } from './cluster/messages';
import type { Config } from '../config/config';
import { ExitCode } from '../errors/operator-error';
import { createLogger, Logger } from '../observability/logger';
import { isTransient } from './readiness';
import { demoTokenNotice, startServer } from './server';
import { ListingService } from './service';
import { openOnUse } from '../storage/db/open-on-use';

/** `options.workers`: `serve --workers N`, over WORKERS. */
export async function serve(options: { workers?: number }, config: () => Config): Promise<number> {
  const { workers } = options;
  const settings = { ...config(), ...(workers === undefined ? {} : { workers }) };
  // The start-up banner, the shutdown line and this module's lines go through the request log's logger.
  const logger = createLogger(settings);
  const say = (line: string) => logger.info(line);
  if (cluster.isPrimary && settings.workers > 1) {
    await prepareOnce(settings, say);
    return runPrimary(settings.workers, settings, say);
  }
  return serveHere(settings, logger);
}

/**
 * A cluster's start-up work, done by the primary before it forks: a misconfiguration is reported once, the demo
 * data is written once, and the workers find the database prepared. While the database is away the workers start
 * anyway, each answering 503 and trying again (under the start-up lock, as any instances on one database).
 */
async function prepareOnce(config: Config, log: (line: string) => void): Promise<void> {
  const db = openOnUse(config.databaseUrl, config.databaseTimeouts, config.topology);
  const service = new ListingService(serviceModel, db, { pagingSecret: config.pagingSecret, demoToken: config.demoToken, seedListings: config.seedListings, log });
  try {
    const started = await service.readiness.start();
    if (started.newDemoToken) log(demoTokenNotice(started.newDemoToken, config.baseUrl ?? `http://localhost:${config.port}/odata`, serviceModel));
  } catch (e) {
    if (!isTransient(e)) throw e;
  } finally {
    await service.close();
  }
}

/** This process serves until told to stop; resolves with the exit code once it has stopped. */
async function serveHere(config: Config, logger: Logger): Promise<number> {
  const log = (line: string) => logger.info(line);
  const stop = stopRequested(log);
  const running = await startServer(serviceModel, config, undefined, { logger, listenWhenReady: cluster.isWorker && process.env[LISTEN_WHEN_READY] === '1' });
  if (cluster.isWorker) running.service.readiness.whenReady().then(() => process.send?.(WORKER_READY), () => undefined);
  const reason = await stop;
  const started = performance.now();
  await running.close(config.shutdownTimeoutMs, `${reason}; requests in progress get up to ${config.shutdownTimeoutMs} ms`);
  log(`stopped in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  // A worker's channel to its primary would keep it alive.
  if (cluster.isWorker && process.connected) process.disconnect();
  // Anything left holding the event loop (a driver's timer) does not keep a stopped server alive.
  setTimeout(() => process.exit(ExitCode.ok), 2000).unref();
  return ExitCode.ok;
}

/**
 * Resolves with what asked this process to stop: SIGTERM, SIGINT, or (a worker) its primary going away. Later
 * signals are taken too, so that a second one does not kill the process mid-drain.
 */
function stopRequested(log: (line: string) => void): Promise<string> {
  // SIGHUP would end the process by default: a worker leaves reloads to its primary; one process cannot reload itself.
  process.on('SIGHUP', () => { if (!cluster.isWorker) log('SIGHUP: a reload replaces workers, and this server runs as one process (WORKERS=1): ignored'); });
  return new Promise((resolve) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => resolve(signal));
    if (cluster.isWorker) process.on('disconnect', () => resolve('primary gone'));
  });
}
