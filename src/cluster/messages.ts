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
