/** Whether the database serves now: the readiness probe's check (GET /ready), bounded by its own deadline. */
import type { Database } from './database';
import { boundedWait } from './deadline';
import { DatabaseUnavailable } from './errors';
import { SETTINGS_TABLE } from '../tables/internal-schema';

/**
 * A statement that reads a table: a Galera node outside the primary component refuses it (a statement that reads
 * none, `SELECT 1`, it answers), and the settings table exists wherever the start-up work has been done.
 */
const PROBE = `SELECT 1 FROM ${SETTINGS_TABLE} LIMIT 1`;

/**
 * Resolves when the database runs a trivial statement within `ms`; rejects with DatabaseUnavailable otherwise.
 * Probes arriving while one is under way share it, so a flood of probes costs one statement at a time.
 */
export class Reachability {
  private pending?: Promise<void>;

  /** The probe as this database runs it (dialect.probe). */
  private readonly sql: string;

  constructor(private readonly db: Database, private readonly ms: number) {
    this.sql = db.dialect.probe(PROBE);
  }

  check(): Promise<void> {
    this.pending ??= boundedWait(this.db.all(this.sql), this.ms, `no answer within ${this.ms} ms`)
      .then(() => undefined, (e: unknown) => {
        throw e instanceof DatabaseUnavailable ? e : new DatabaseUnavailable((e as Error)?.message ?? String(e));
      })
      .finally(() => { this.pending = undefined; });
    return this.pending;
  }
}
