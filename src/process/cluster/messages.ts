/** What a worker tells its primary (over node:cluster's IPC channel). */

/**
 * Set in the environment of a worker forked while others are ready (a replacement, a reload): it takes connections
 * only once ready, so that none of them gets a 503 while it starts.
 */
export const LISTEN_WHEN_READY = 'RESO_SERVER_LISTEN_WHEN_READY';

/** The worker's start-up work is done: it answers requests (a reload replaces the next worker only then). */
export const WORKER_READY = { kind: 'reso-server:ready' } as const;

export function isReady(message: unknown): boolean {
  return (message as { kind?: unknown })?.kind === WORKER_READY.kind;
}

/** A worker could not start: the line it would have printed, sent for the primary to print once for all workers. */
export interface WorkerFailed {
  readonly kind: 'reso-server:failed';
  readonly line: string;
  readonly code: number;
}

export function failed(line: string, code: number): WorkerFailed {
  return { kind: 'reso-server:failed', line, code };
}

export function isFailed(message: unknown): message is WorkerFailed {
  return (message as { kind?: unknown })?.kind === 'reso-server:failed';
}

/*
 * Metrics across workers (src/cluster/cluster-metrics.ts, src/cluster/worker-metrics.ts). The primary asks each
 * worker that has said it answers (METRICS_SHARED) for its metrics as prom-client's JSON, and sums them; a worker
 * whose service port took a scrape asks the primary for that sum (SCRAPE_REQUEST), and gets the text or the reason
 * there is none.
 */

/** The worker answers METRICS_REQUEST from now on (sent once its registries exist). */
export const METRICS_SHARED = { kind: 'reso-server:metrics-shared' } as const;

export interface MetricsRequest { readonly kind: 'reso-server:metrics-request'; readonly id: number }
/** prom-client's `getMetricsAsJSON()` of each of the worker's registries. */
export interface MetricsReply { readonly kind: 'reso-server:metrics-reply'; readonly id: number; readonly registries: readonly unknown[][] }
export interface ScrapeRequest { readonly kind: 'reso-server:scrape-request'; readonly id: number }
/** The cluster's exposition text, or why it could not be collected (MetricsUnavailable's reason). */
export interface ScrapeAnswer { readonly kind: 'reso-server:scrape-answer'; readonly id: number; readonly text?: string; readonly unavailable?: string }

type Message = typeof METRICS_SHARED | MetricsRequest | MetricsReply | ScrapeRequest | ScrapeAnswer;

export function isMessage<K extends Message['kind']>(message: unknown, kind: K): message is Extract<Message, { kind: K }> {
  return (message as { kind?: unknown })?.kind === kind;
}
