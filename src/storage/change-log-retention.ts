/**
 * The change log's retention and marks: how far back events are kept (ENTITY_EVENT_RETENTION_DAYS and
 * ENTITY_EVENT_RETENTION_COUNT), pruning the oldest in bounded batches, and what a consumer's mark
 * (`EntityEventSequence gt N`) is checked against: the oldest event kept, and when event N was committed.
 * The newest event is always kept, so the oldest kept is always known once anything was logged.
 */
import type { ChangeLogSpec, EntitySetSpec } from '../model/service-model';
import type { Database } from './database';

export interface RetentionPolicy {
  /** Events committed more than this many days ago go. */
  readonly days?: number;
  /** At most this many events are kept. */
  readonly count?: number;
}

const DAY_MS = 86_400_000;

export class ChangeLogRetention {
  private readonly spec: ChangeLogSpec;
  private readonly sequence: string;

  constructor(private readonly db: Database, readonly log: EntitySetSpec, private readonly policy: RetentionPolicy) {
    this.spec = log.changeLog!;
    this.sequence = log.fieldsByName[log.key].column!;
  }

  /** The lowest sequence still kept; undefined while nothing was logged. */
  async oldest(): Promise<number | undefined> {
    const [row] = await this.db.all(`SELECT MIN(${this.id(this.sequence)}) AS n FROM ${this.id(this.log.table)}`);
    return row?.n === null || row?.n === undefined ? undefined : Number(row.n);
  }

  async newest(): Promise<number | undefined> {
    const [row] = await this.db.all(`SELECT MAX(${this.id(this.sequence)}) AS n FROM ${this.id(this.log.table)}`);
    return row?.n === null || row?.n === undefined ? undefined : Number(row.n);
  }

  /**
   * When the latest kept event at or below `sequence` was committed (a ModificationTimestamp), or, when none
   * is kept, the oldest kept event's: no later than any event after it. Undefined when nothing is kept.
   */
  async committedBy(sequence: number): Promise<string | undefined> {
    const p = this.spec.priorImage;
    const s = this.db.statements;
    const at = s.select({ from: p.table, columns: [p.committed], where: s.compare(p.sequence, '<=', sequence), orderBy: [{ column: p.sequence, direction: 'desc' }], limit: 1 });
    const rows = await this.db.all(at.sql, at.params);
    if (rows.length) return rows[0][p.committed] as string;
    const first = s.select({ from: p.table, columns: [p.committed], orderBy: [{ column: p.sequence, direction: 'asc' }], limit: 1 });
    const after = await this.db.all(first.sql, first.params);
    return after.length ? (after[0][p.committed] as string) : undefined;
  }

  /**
   * Removes up to `batch` of the oldest events the policy no longer keeps (never the newest), in one write
   * transaction; answers how many went. `now` is the time retention is measured from.
   */
  async pruneBatch(now: Date, batch: number): Promise<number> {
    const upTo = await this.pruneUpTo(now);
    const oldest = await this.oldest();
    if (upTo === undefined || oldest === undefined || upTo < oldest) return 0;
    const last = Math.min(upTo, oldest + batch - 1);
    const s = this.db.statements;
    const p = this.spec.priorImage;
    await this.db.transaction(async (tx) => {
      const events = s.delete(this.log.table, s.compare(this.sequence, '<=', last));
      await tx.run(events.sql, events.params);
      const priors = s.delete(p.table, s.compare(p.sequence, '<=', last));
      await tx.run(priors.sql, priors.params);
    });
    return last - oldest + 1;
  }

  /** Prunes batch after batch until nothing more goes; answers how many went. */
  async prune(now: Date, batch = 5000): Promise<number> {
    let total = 0;
    for (let n = await this.pruneBatch(now, batch); n > 0; n = await this.pruneBatch(now, batch)) total += n;
    return total;
  }

  /** The highest sequence the policy lets go, if any: the later of the age and the count limits. */
  private async pruneUpTo(now: Date): Promise<number | undefined> {
    const newest = await this.newest();
    if (newest === undefined) return undefined;
    const limits: number[] = [];
    if (this.policy.count !== undefined) limits.push(newest - this.policy.count);
    if (this.policy.days !== undefined) {
      const p = this.spec.priorImage;
      const s = this.db.statements;
      const cutoff = new Date(now.getTime() - this.policy.days * DAY_MS).toISOString();
      const q = s.select({ from: p.table, columns: [p.sequence], where: s.compare(p.committed, '<', cutoff), orderBy: [{ column: p.committed, direction: 'desc' }, { column: p.sequence, direction: 'desc' }], limit: 1 });
      const rows = await this.db.all(q.sql, q.params);
      if (rows.length) limits.push(Number(rows[0][p.sequence]));
    }
    if (limits.length === 0) return undefined;
    return Math.min(Math.max(...limits), newest - 1);
  }

  private id(name: string): string {
    return this.db.statements.id(name).sql;
  }
}
