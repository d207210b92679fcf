/**
 * Bounded waits for the database: a deadline per operation, a promise given up at a deadline, and the queue
 * that serialises writers, whose waiters give up at theirs instead of queueing behind a stuck writer forever.
 * Measured on the monotonic clock: these bound real waits on sockets and file locks, not the service's clock.
 */
import { performance } from 'node:perf_hooks';
import { DatabaseUnavailable } from './errors';

/** The settings that bound every wait on the database (docs/operating.md "Timeouts"). */
export interface DatabaseTimeouts {
  /** Longest wait to begin: for a pooled or new connection (MariaDB), or for a lock another writer holds (SQLite). */
  readonly acquireMs: number;
  /** Longest one statement may take once sent (MariaDB/MySQL; SQLite statements run in-process). */
  readonly statementMs: number;
}

export const DEFAULT_TIMEOUTS: DatabaseTimeouts = { acquireMs: 2000, statementMs: 2500 };

/** A moment on the monotonic clock after which a wait is given up. */
export class Deadline {
  private readonly at: number;

  constructor(ms: number) {
    this.at = performance.now() + ms;
  }

  /** Milliseconds left (0 once passed). */
  remaining(): number {
    return Math.max(0, this.at - performance.now());
  }
}

/**
 * `work`, or DatabaseUnavailable(`reason`) once `ms` have passed without an answer; `giveUp` runs then (to
 * close a connection that may still answer half of it, or hand back one that arrives late).
 */
export function boundedWait<T>(work: Promise<T>, ms: number, reason: string, giveUp: () => void = () => undefined): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      giveUp();
      reject(new DatabaseUnavailable(reason));
    }, ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** Runs async critical sections one at a time (one writer); a waiter gives up at its deadline. */
export class WriterQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(deadline: Deadline, fn: () => Promise<T>): Promise<T> {
    let gaveUp = false;
    const turn = this.tail.then(() => {
      if (gaveUp) return undefined;
      return { result: fn() };
    });
    // The next writer waits for this one's work, not only for its turn.
    this.tail = turn.then((t) => t?.result).catch(() => undefined);
    const started = boundedWait(turn, deadline.remaining(), 'waited too long for another writer', () => { gaveUp = true; });
    return started.then((t) => t!.result);
  }
}

/**
 * At most `size` pieces of work at once (scans, each on a connection or thread of its own); one more waits for a
 * place until its deadline, then gives up with DatabaseUnavailable (503), as a wait for a pooled connection does.
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number, private readonly what: string) {
    this.free = size;
  }

  async run<T>(deadline: Deadline, fn: () => Promise<T>): Promise<T> {
    await this.take(deadline);
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }

  private take(deadline: Deadline): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const handOver = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(handOver), 1);
        reject(new DatabaseUnavailable(`all ${this.size} ${this.what} were busy`));
      }, deadline.remaining());
      this.waiting.push(handOver);
    });
  }
}
