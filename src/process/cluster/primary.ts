/**
 * `serve` on every core: the primary process forks the workers (node:cluster; each is a whole server, which does
 * the start-up work under the database's start-up lock, so exactly one of them does it), shares the listening
 * port among them, and serves nothing itself. It
 * - replaces a worker that dies, after a backoff (250 ms doubling to 30 s), and gives up (exit 1) after
 *   MAX_CRASHES deaths within CRASH_WINDOW_MS rather than restarting for ever;
 * - stops with exit code 2, 3 or 4 when a worker that never became ready exits with it: a configuration, database
 *   or port problem, which the worker has already explained in one line, and which every worker would meet alike;
 * - on SIGHUP replaces the workers one at a time: a new one is forked and ready before the old one drains, so
 *   the port always has a worker taking connections and no request in progress is cut;
 * - on SIGTERM or SIGINT has every worker drain (SHUTDOWN_TIMEOUT_MS), and exits 0 once all have stopped.
 * - answers scrapes with every worker's metrics summed (src/cluster/cluster-metrics.ts): on METRICS_PORT, whose
 *   listener it owns, and for the workers, whose service port takes `/metrics` and asks it over IPC.
 */
import cluster, { Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { Config } from '../../config/config';
import { startMetricsServer } from '../../http/admin/metrics-endpoint';
import { hostForUrl } from '../../config/operation';
import { ExitCode } from '../../errors/operator-error';
import { version } from '../version';
import { ClusterMetrics } from './cluster-metrics';
import { isFailed, isMessage, isReady, LISTEN_WHEN_READY } from './messages';

const RESTART_MIN_MS = 250;
const RESTART_MAX_MS = 30_000;
const MAX_CRASHES = 10;
const CRASH_WINDOW_MS = 60_000;
/** How long a reload waits for a new worker to be ready before it gives up (the old one keeps serving). */
const READY_TIMEOUT_MS = 60_000;
/** Beyond SHUTDOWN_TIMEOUT_MS, how long a stopping worker has to apply its journal and close before SIGKILL. */
const CLOSE_GRACE_MS = 5_000;
const CONFIGURATION_CODES: readonly number[] = [ExitCode.usage, ExitCode.database, ExitCode.listen];

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  /** Replaced by a reload, or stopping: its exit is expected. */
  retiring: boolean;
  /** Forked by a reload and not ready yet: if it fails, the reload says so and the old worker stays. */
  trial: boolean;
  /** It answers the primary's metrics requests (it said so once its registries existed). */
  sharesMetrics: boolean;
  readonly exited: Promise<void>;
}

/** Opens the METRICS_PORT listener (if set: a failure to bind is thrown before any worker starts), then forks. */
export async function runPrimary(count: number, config: Config, log: (line: string) => void): Promise<number> {
  let done!: (code: number) => void;
  const stopped = new Promise<number>((resolve) => { done = resolve; });
  const primary = new Primary(count, config, log, done);
  await primary.listenForScrapes();
  primary.start();
  return stopped;
}

class Primary {
  private readonly slots = new Set<Slot>();
  private crashes: number[] = [];
  private stopping = false;
  private exitCode: number = ExitCode.ok;
  private reloading = false;
  /** Lines of workers that failed, printed once each (every worker of a misconfigured cluster fails alike). */
  private readonly failuresShown = new Set<string>();
  private readonly metrics = new ClusterMetrics(() => [...this.slots].filter((s) => s.sharesMetrics).map((s) => s.worker));
  private metricsServer?: Server;

  constructor(
    private readonly count: number, private readonly config: Config, private readonly log: (line: string) => void,
    private readonly done: (code: number) => void,
  ) {}

  async listenForScrapes(): Promise<void> {
    if (this.config.metricsPort === undefined) return;
    this.metricsServer = await startMetricsServer(() => this.metrics.text(), this.config.metricsPort, this.config.metricsHost);
    const port = (this.metricsServer.address() as { port: number }).port;
    this.log(`metrics of every worker, summed, at http://${hostForUrl(this.config.metricsHost)}:${port}/metrics`);
  }

  start(): void {
    this.log(`reso-server ${version()}: primary ${process.pid} starting ${this.count} workers (SIGHUP replaces them one at a time; SIGTERM stops)`);
    for (let i = 0; i < this.count; i++) this.fork();
    process.on('SIGHUP', () => { void this.reload(); });
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => this.stop(signal, ExitCode.ok));
  }

  private fork(trial = false): Slot {
    const othersServe = [...this.slots].some((s) => s.ready && !s.retiring);
    // WORKERS: what the worker's banner reports, whether it came from WORKERS or --workers.
    const worker = cluster.fork({ WORKERS: String(this.count), ...(othersServe ? { [LISTEN_WHEN_READY]: '1' } : {}) });
    const slot: Slot = { worker, ready: false, retiring: false, trial, sharesMetrics: false, exited: new Promise((resolve) => worker.once('exit', () => resolve())) };
    this.slots.add(slot);
    worker.on('message', (message: unknown) => {
      if (isReady(message)) { slot.ready = true; slot.trial = false; }
      if (isMessage(message, 'reso-server:metrics-shared')) slot.sharesMetrics = true;
      this.metrics.received(worker, message);
      if (isMessage(message, 'reso-server:scrape-request')) {
        void this.metrics.collect().then((scrape) => {
          if (worker.isConnected()) worker.send({ kind: 'reso-server:scrape-answer', id: message.id, ...scrape }, undefined, undefined, () => undefined);
        });
      }
      if (isFailed(message) && !this.failuresShown.has(message.line)) {
        this.failuresShown.add(message.line);
        console.error(`reso-server: ${message.line}`);
      }
    });
    worker.once('exit', (code: number | null, signal: string | null) => this.exited(slot, code, signal));
    return slot;
  }

  private exited(slot: Slot, code: number | null, signal: string | null): void {
    this.slots.delete(slot);
    this.metrics.gone(slot.worker);
    if (this.stopping) {
      if (this.slots.size === 0) this.stopped();
      return;
    }
    if (slot.retiring || slot.trial) return;
    if (!slot.ready && code !== null && CONFIGURATION_CODES.includes(code)) {
      this.stop(`worker ${slot.worker.process.pid} could not start`, code);
      return;
    }
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < CRASH_WINDOW_MS), now];
    const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
    if (this.crashes.length > MAX_CRASHES) {
      this.log(`worker ${slot.worker.process.pid} ${how}: ${this.crashes.length} deaths within ${CRASH_WINDOW_MS / 1000} s, giving up`);
      this.stop('too many worker deaths', ExitCode.failure);
      return;
    }
    const delay = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** (this.crashes.length - 1));
    this.log(`worker ${slot.worker.process.pid} ${how}; starting another in ${(delay / 1000).toFixed(2)} s`);
    setTimeout(() => { if (!this.stopping) this.fork(); }, delay);
  }

  /** Replaces each worker in turn by a new one, once that one is ready; a new one that fails ends the reload. */
  private async reload(): Promise<void> {
    if (this.reloading || this.stopping) return;
    this.reloading = true;
    const started = performance.now();
    const old = [...this.slots].filter((s) => !s.retiring);
    this.log(`SIGHUP: replacing ${old.length} workers one at a time`);
    try {
      for (const previous of old) {
        const next = this.fork(true);
        if (!(await this.ready(next))) {
          if (!next.ready) void this.retire(next);
          this.log(`reload stopped: worker ${next.worker.process.pid} did not become ready; the others keep serving`);
          return;
        }
        await this.retire(previous);
      }
      this.log(`reload done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } finally {
      this.reloading = false;
    }
  }

  /** Resolves true once the worker is ready, false if it exits or takes longer than READY_TIMEOUT_MS. */
  private ready(slot: Slot): Promise<boolean> {
    return new Promise((resolve) => {
      if (slot.ready) return resolve(true);
      const timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
      slot.worker.on('message', (message: unknown) => { if (isReady(message)) { clearTimeout(timer); resolve(true); } });
      void slot.exited.then(() => { clearTimeout(timer); resolve(false); });
    });
  }

  /** Has the worker drain and stop (SIGTERM); SIGKILL if it has not within the drain bound and CLOSE_GRACE_MS. */
  private async retire(slot: Slot): Promise<void> {
    slot.retiring = true;
    slot.worker.process.kill('SIGTERM');
    const timer = setTimeout(() => slot.worker.process.kill('SIGKILL'), this.config.shutdownTimeoutMs + CLOSE_GRACE_MS);
    await slot.exited;
    clearTimeout(timer);
  }

  private stop(reason: string, code: number): void {
    if (this.stopping) return;
    this.stopping = true;
    this.exitCode = code;
    this.log(`${reason}: stopping ${this.slots.size} workers (requests in progress get up to ${this.config.shutdownTimeoutMs} ms)`);
    // Scrapes waiting on a collection are answered 503 now; the listener takes no more.
    this.metrics.stop();
    this.metricsServer?.close();
    if (this.slots.size === 0) { this.stopped(); return; }
    for (const slot of this.slots) void this.retire(slot);
  }

  /** Every worker is gone: a scrape's connection kept alive must not keep the primary running. */
  private stopped(): void {
    this.metricsServer?.closeAllConnections();
    this.done(this.exitCode);
  }
}
