/**
 * Whether the service has done its start-up work: a state reached once. The work runs from one place (`start`);
 * while the database cannot be used, or another instance is doing the work, it is tried again in the
 * background, backing off from `retryMs` to `maxRetryMs`, and until it has succeeded, requests that need the
 * database are answered 503 with Retry-After (http/readiness.ts). Once reached, readiness is kept: a database lost
 * later fails only the requests it cannot answer (503 as well), and they succeed again as soon as it is back.
 */
import { DatabaseUnavailable } from '../storage/db/errors';
import { StartupInProgress } from '../storage/tables/startup-lock';

const RETRY_MS = 250;
const MAX_RETRY_MS = 4000;

/**
 * A failure that goes away by itself: the database is away or locked, or another instance is doing the work
 * (not a SQLite file that cannot be opened at all).
 */
export function isTransient(e: unknown): boolean {
  return (e instanceof DatabaseUnavailable && !e.permanent) || e instanceof StartupInProgress;
}

export interface ReadinessOptions {
  /** The first wait before trying again; it doubles on every failure up to `maxRetryMs`. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
  readonly log?: (line: string) => void;
}

export class Readiness<T> {
  private reached?: { value: T };
  private first?: Promise<T>;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private attempts = 0;
  private failures = 0;
  private lastComplaint = '';
  private readonly startedAt = performance.now();
  private waiting: { resolve: (value: T) => void; reject: (e: unknown) => void; orTransient: boolean }[] = [];

  /** `work`: the start-up work, safe to repeat and to run in several instances at once. */
  constructor(private readonly work: () => Promise<T>, private readonly options: ReadinessOptions = {}) {}

  get ready(): boolean {
    return this.reached !== undefined;
  }

  /** What the start-up work produced; only once ready. */
  get value(): T {
    if (!this.reached) throw new Error('the service is not ready');
    return this.reached.value;
  }

  /**
   * Runs the work, once per process; resolves or rejects with its first attempt. After a transient failure, the
   * work goes on being tried in the background until it succeeds (or `stop`).
   */
  start(): Promise<T> {
    this.first ??= this.attempt();
    return this.first;
  }

  /** Resolves once ready. */
  whenReady(): Promise<T> {
    if (this.reached) return Promise.resolve(this.reached.value);
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject, orTransient: false }));
  }

  /**
   * Starts, and resolves once ready; rejects at the first failure other than another instance doing the work
   * (a command waits for that instance, and fails if the database is away).
   */
  async settle(): Promise<T> {
    if (this.reached) return this.reached.value;
    const ready = new Promise<T>((resolve, reject) => this.waiting.push({ resolve, reject, orTransient: true }));
    this.start().catch(() => undefined);
    return ready;
  }

  /** No more attempts (the service is closing). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async attempt(): Promise<T> {
    const first = this.attempts++ === 0;
    try {
      const value = await this.work();
      this.reached = { value };
      this.options.log?.(`start-up done in ${((performance.now() - this.startedAt) / 1000).toFixed(1)} s; ready`);
      for (const w of this.waiting.splice(0)) w.resolve(value);
      return value;
    } catch (e) {
      this.failures++;
      // After the first attempt every failure is tried again: a start that got that far should not give up.
      if (isTransient(e) || !first) this.retry(e);
      this.waiting = this.waiting.filter((w) => {
        const keep = w.orTransient ? e instanceof StartupInProgress : true;
        if (!keep) w.reject(e);
        return keep;
      });
      throw e;
    }
  }

  private retry(e: unknown): void {
    if (this.stopped) return;
    const base = Math.min(this.options.maxRetryMs ?? MAX_RETRY_MS, (this.options.retryMs ?? RETRY_MS) * 2 ** (this.failures - 1));
    // Jitter: instances that found one another waiting do not all come back at the same moment.
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.complain(e, delay);
    this.timer = setTimeout(() => { this.attempt().catch(() => undefined); }, delay);
    this.timer.unref();
  }

  /** One log line per distinct reason, not one per attempt. */
  private complain(e: unknown, delay: number): void {
    const reason = e instanceof DatabaseUnavailable ? e.explanation : String((e as Error)?.message ?? e);
    if (reason === this.lastComplaint) return;
    this.lastComplaint = reason;
    const line = e instanceof StartupInProgress
      ? `${reason}; waiting for it (taken over if it shows no sign of life for ${Math.ceil(e.takeoverInMs / 1000)} s)`
      : isTransient(e) ? reason : `start-up failed (${reason})`;
    this.options.log?.(`${line}; answering 503 until the start-up work is done (next try in ${(delay / 1000).toFixed(1)} s, backing off)`);
  }
}
