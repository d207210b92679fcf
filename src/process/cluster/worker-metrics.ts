/**
 * A cluster worker's side of the cluster's metrics (src/cluster/cluster-metrics.ts has the primary's): it gives
 * its registries' figures when the primary asks, and answers a scrape of its service port with the primary's sum
 * over every worker, so that a scrape says the same whichever worker took its connection.
 */
import type { Registry } from 'prom-client';
import { Errors } from '../../errors/catalogue';
import { COLLECT_TIMEOUT_MS, STOPPING } from './cluster-metrics';
import { isMessage, METRICS_SHARED } from './messages';

/** Beyond the primary's own bound, how long a worker waits for its answer (IPC both ways, and the summing). */
const ANSWER_MARGIN_MS = 1000;

export interface WorkerMetrics {
  /** The cluster's exposition text; rejects with MetricsUnavailable. */
  scrape(): Promise<string>;
  /** Fails the scrapes waiting on the primary and any later one: a stopping worker waits on none. */
  stop(): void;
}

/** Call once per worker process, with the registries its scrapes would read. */
export function shareWithPrimary(registries: () => Registry[]): WorkerMetrics {
  const waiting = new Map<number, (answer: { text?: string; unavailable?: string }) => void>();
  let nextId = 0;
  let stopped = false;
  const onMessage = (message: unknown) => {
    if (isMessage(message, 'reso-server:metrics-request')) {
      void Promise.all(registries().map((r) => r.getMetricsAsJSON())).then(
        (figures) => send({ kind: 'reso-server:metrics-reply', id: message.id, registries: figures }),
        // No reply: the primary's bound fails that scrape, and says how many workers did not answer.
        () => undefined,
      );
    }
    if (isMessage(message, 'reso-server:scrape-answer')) waiting.get(message.id)?.(message);
  };
  const failAll = (reason: string) => { for (const answer of [...waiting.values()]) answer({ unavailable: reason }); };
  process.on('message', onMessage);
  process.once('disconnect', () => failAll('this worker lost its primary process'));
  send(METRICS_SHARED);
  return {
    scrape() {
      if (stopped || !process.connected) return Promise.reject(Errors.MetricsUnavailable(STOPPING));
      const id = nextId++;
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => answer({ unavailable: `the primary process did not answer within ${COLLECT_TIMEOUT_MS + ANSWER_MARGIN_MS} ms` }), COLLECT_TIMEOUT_MS + ANSWER_MARGIN_MS);
        timer.unref();
        const answer = (a: { text?: string; unavailable?: string }) => {
          if (!waiting.delete(id)) return;
          clearTimeout(timer);
          if (a.text !== undefined) resolve(a.text);
          else reject(Errors.MetricsUnavailable(a.unavailable ?? 'no answer'));
        };
        waiting.set(id, answer);
        send({ kind: 'reso-server:scrape-request', id }, () => answer({ unavailable: 'this worker lost its primary process' }));
      });
    },
    stop() {
      stopped = true;
      failAll(STOPPING);
    },
  };
}

/** To the primary, if the channel is still open; a send that fails calls `failed` instead of throwing. */
function send(message: object, failed: () => void = () => undefined): void {
  if (!process.connected || !process.send) return failed();
  process.send(message, undefined, undefined, (e: Error | null) => { if (e) failed(); });
}
