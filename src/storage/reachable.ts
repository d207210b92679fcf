/** Whether the database answers now: the readiness probe's check (GET /ready), bounded by its own deadline. */
import type { Database } from './database';
import { boundedWait } from './deadline';
import { DatabaseUnavailable } from './errors';

/**
 * Resolves when the database runs a trivial statement within `ms`; rejects with DatabaseUnavailable otherwise.
 * Probes arriving while one is under way share it, so a flood of probes costs one statement at a time.
 */
export class Reachability {
  private pending?: Promise<void>;

  constructor(private readonly db: Database, private readonly ms: number) {}

  check(): Promise<void> {
    this.pending ??= boundedWait(this.db.all('SELECT 1'), this.ms, `no answer within ${this.ms} ms`)
      .then(() => undefined, (e: unknown) => {
        throw e instanceof DatabaseUnavailable ? e : new DatabaseUnavailable((e as Error)?.message ?? String(e));
      })
      .finally(() => { this.pending = undefined; });
    return this.pending;
  }
}
