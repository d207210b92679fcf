/**
 * When the next request to an upstream may go: spaced to its allowed rate (the waits a 429/503 asks for and the
 * backoff after a failure: foundation/retry-waits.ts).
 */
import type { Clock } from '../foundation/clock';

/** Spaces request starts by 1/rate seconds, callers in the order they asked. */
export class Pacer {
  private next = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly requestsPerSecond: number,
    private readonly clock: Clock,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  /** Resolves when a request may start. */
  turn(): Promise<void> {
    const mine = this.queue.then(async () => {
      const wait = this.next - this.clock.now();
      if (wait > 0) await this.sleep(wait);
      const gap = this.requestsPerSecond > 0 ? 1000 / this.requestsPerSecond : 0;
      this.next = Math.max(this.clock.now(), this.next) + gap;
    });
    this.queue = mine.catch(() => undefined);
    return mine;
  }
}

export const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
