/**
 * A cluster's metrics, in its primary: every worker's figures summed into one scrape (prom-client's
 * `AggregatorRegistry.aggregate`, each metric by its `aggregator`: counters and histograms summed, gauges as each
 * declares). The primary asks the workers itself over their IPC channel instead of through prom-client's
 * `clusterMetrics()`, whose fixed 5 s timer held a stopping primary and whose answers could not leave out a worker
 * that exits mid-collection.
 *
 * A collection is bounded by COLLECT_TIMEOUT_MS. A worker that exits meanwhile is left out (its figures went
 * with it, as after any restart). A running worker that does not answer in time fails the scrape with
 * MetricsUnavailable (503) rather than a smaller sum: Prometheus reads a counter that goes down as a reset, and
 * would count the missing worker's whole total again when it came back. Stopping fails every pending collection
 * at once, so that no scrape holds up a shutdown.
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { Errors } from '../../errors/catalogue';
import { isMessage, MetricsReply } from './messages';

/** How long the primary waits for every worker's figures before the scrape fails. */
export const COLLECT_TIMEOUT_MS = 2000;

export const STOPPING = 'the server is stopping';

/** The cluster's exposition text, or why there is none (MetricsUnavailable's reason). */
export type Scrape = { readonly text: string } | { readonly unavailable: string };

interface Collection {
  readonly waiting: Set<Worker>;
  readonly replies: object[][];
  readonly settle: (outcome: Scrape) => void;
}

export class ClusterMetrics {
  private nextId = 0;
  private readonly pending = new Map<number, Collection>();
  private stopped = false;

  /** `workers()`: the running workers that have said they answer (METRICS_SHARED). */
  constructor(private readonly workers: () => Worker[], private readonly timeoutMs = COLLECT_TIMEOUT_MS) {}

  /** For the primary's METRICS_PORT listener: the text, or a MetricsUnavailable rejection. */
  async text(): Promise<string> {
    const scrape = await this.collect();
    if ('unavailable' in scrape) throw Errors.MetricsUnavailable(scrape.unavailable);
    return scrape.text;
  }

  /** Every worker's figures summed, or why not, within the bound. */
  collect(): Promise<Scrape> {
    if (this.stopped) return Promise.resolve({ unavailable: STOPPING });
    const id = this.nextId++;
    const asked = this.workers().filter((w) => w.isConnected());
    return new Promise<Scrape>((resolve) => {
      const timer = setTimeout(() => {
        finish({ unavailable: `${collection.waiting.size} of ${asked.length} workers did not answer within ${this.timeoutMs} ms` });
      }, this.timeoutMs);
      // A scrape in progress never keeps a stopping primary alive.
      timer.unref();
      const finish = (outcome: Scrape) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        resolve(outcome);
      };
      const collection: Collection = { waiting: new Set(asked), replies: [], settle: finish };
      this.pending.set(id, collection);
      for (const worker of asked) {
        worker.send({ kind: 'reso-server:metrics-request', id }, undefined, undefined, (e: Error | null) => { if (e) this.gone(worker); });
      }
      this.complete(collection);
    });
  }

  /** A message from a worker: a reply to a collection. */
  received(worker: Worker, message: unknown): void {
    if (!isMessage(message, 'reso-server:metrics-reply')) return;
    const collection = this.pending.get(message.id);
    if (!collection || !collection.waiting.delete(worker)) return;
    collection.replies.push(...(message as MetricsReply).registries as object[][]);
    this.complete(collection);
  }

  /** A worker exited (or its channel closed): no collection waits for it any longer. */
  gone(worker: Worker): void {
    for (const collection of [...this.pending.values()]) {
      if (collection.waiting.delete(worker)) this.complete(collection);
    }
  }

  /** Fails every pending collection and any later one. */
  stop(): void {
    this.stopped = true;
    for (const collection of [...this.pending.values()]) collection.settle({ unavailable: STOPPING });
  }

  private complete(collection: Collection): void {
    if (collection.waiting.size > 0) return;
    try {
      void AggregatorRegistry.aggregate(collection.replies).metrics().then(
        (text) => collection.settle({ text }),
        (e: unknown) => collection.settle({ unavailable: `summing the workers' figures failed (${String(e)})` }),
      );
    } catch (e) {
      collection.settle({ unavailable: `summing the workers' figures failed (${String(e)})` });
    }
  }
}
