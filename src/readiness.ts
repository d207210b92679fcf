/**
 * Whether the service has done its start-up work: a state reached once. The work runs from one place (`start`);
 * while the database cannot be reached it is tried again every `retryMs` in the background, and until it has
 * succeeded, requests that need the database are answered 503 with Retry-After (http/app.ts). Once reached,
 * readiness is kept: a database lost later fails only the requests it cannot answer (503 as well), and they
 * succeed again as soon as it is back.
 */
import { DatabaseUnavailable } from './storage/errors';

/** How long a failed start-up waits before trying again. */
const RETRY_MS = 1000;

export class Readiness<T> {
  private reached?: { value: T };
  private first?: Promise<T>;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private waiting: ((value: T) => void)[] = [];

  /** `work`: the start-up work, safe to repeat (each step creates what is absent) and to run in several instances at once. */
  constructor(private readonly work: () => Promise<T>, private readonly options: { retryMs?: number; log?: (line: string) => void } = {}) {}

  get ready(): boolean {
    return this.reached !== undefined;
  }

  /** What the start-up work produced; only once ready. */
  get value(): T {
    if (!this.reached) throw new Error('the service is not ready');
    return this.reached.value;
  }

  /**
   * Runs the work, once per process; resolves or rejects with its first attempt. After a DatabaseUnavailable, the
   * work goes on being tried in the background until it succeeds (or `stop`).
   */
  start(): Promise<T> {
    this.first ??= this.attempt();
    return this.first;
  }

  /** Resolves once ready. */
  whenReady(): Promise<T> {
    if (this.reached) return Promise.resolve(this.reached.value);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** No more attempts (the service is closing). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async attempt(): Promise<T> {
    try {
      const value = await this.work();
      this.reached = { value };
      for (const resolve of this.waiting.splice(0)) resolve(value);
      return value;
    } catch (e) {
      if (e instanceof DatabaseUnavailable) this.retry();
      throw e;
    }
  }

  private retry(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.attempt().then(
        () => this.options.log?.('the database is reachable: start-up done, serving'),
        (e: unknown) => {
          // Unavailable: attempt() has scheduled the next try. Anything else is the operator's to see, and tried again.
          if (!(e instanceof DatabaseUnavailable)) {
            this.options.log?.(`start-up failed (${(e as Error)?.message ?? e}); trying again`);
            this.retry();
          }
        },
      );
    }, this.options.retryMs ?? RETRY_MS);
    this.timer.unref();
  }
}
