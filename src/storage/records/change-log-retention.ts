/**
 * The change log's retention and marks: how far back events are kept (ENTITY_EVENT_RETENTION_DAYS and
 * ENTITY_EVENT_RETENTION_COUNT), pruning the oldest in bounded batches, and what a consumer's mark
 * (`EntityEventSequence gt N`) is checked against: the oldest event kept, and when event N was committed.
 * The newest event is always kept, so the oldest kept is always known once anything was logged.
 */
import type { ChangeLogSpec, EntitySetSpec } from '../../model/service-model';
import type { Database } from '../db/database';
import { standIn, textTaking } from '../sql/shapes';

export interface RetentionPolicy {
  /** Events committed more than this many days ago go. */
  readonly days?: number;
  /** At most this many events are kept. */
  readonly count?: number;
}

const DAY_MS = 86_400_000;
const [SEQUENCE, CUTOFF] = [standIn('sequence'), standIn('cutoff')];
/** The one row a look-up reads (a parameter, as every limit). */
const ONE = 1;

export class ChangeLogRetention {
  private readonly spec: ChangeLogSpec;
  private readonly sequence: string;
  private readonly oldestSql: string;
  private readonly newestSql: string;
  /** The commit time of the latest kept event at or below a sequence, and of the oldest kept event. */
  private readonly committedAtSql: string;
  private readonly firstCommittedSql: string;
  /** The latest event committed before a time. */
  private readonly lastBeforeSql: string;
  private readonly pruneEventsSql: string;
  private readonly prunePriorsSql: string;

  constructor(private readonly db: Database, readonly log: EntitySetSpec, private readonly policy: RetentionPolicy) {
    this.spec = log.changeLog!;
    this.sequence = log.fieldsByName[log.key].column!;
    const p = this.spec.priorImage;
    const [events, priors] = [() => db.knex(log.table), () => db.knex(p.table)];
    this.oldestSql = textTaking(events().min({ n: this.sequence }), []);
    this.newestSql = textTaking(events().max({ n: this.sequence }), []);
    this.committedAtSql = textTaking(priors().select(p.committed).where(p.sequence, '<=', SEQUENCE).orderBy(p.sequence, 'desc').limit(ONE), [SEQUENCE, ONE]);
    this.firstCommittedSql = textTaking(priors().select(p.committed).orderBy(p.sequence, 'asc').limit(ONE), [ONE]);
    this.lastBeforeSql = textTaking(priors().select(p.sequence).where(p.committed, '<', CUTOFF)
      .orderBy([{ column: p.committed, order: 'desc' }, { column: p.sequence, order: 'desc' }]).limit(ONE), [CUTOFF, ONE]);
    this.pruneEventsSql = textTaking(events().where(this.sequence, '<=', SEQUENCE).delete(), [SEQUENCE]);
    this.prunePriorsSql = textTaking(priors().where(p.sequence, '<=', SEQUENCE).delete(), [SEQUENCE]);
  }

  /** The lowest sequence still kept; undefined while nothing was logged. */
  async oldest(): Promise<number | undefined> {
    const [row] = await this.db.all(this.oldestSql);
    return row?.n === null || row?.n === undefined ? undefined : Number(row.n);
  }

  async newest(): Promise<number | undefined> {
    const [row] = await this.db.all(this.newestSql);
    return row?.n === null || row?.n === undefined ? undefined : Number(row.n);
  }

  /**
   * When the latest kept event at or below `sequence` was committed (a ModificationTimestamp), or, when none
   * is kept, the oldest kept event's: no later than any event after it. Undefined when nothing is kept.
   */
  async committedBy(sequence: number): Promise<string | undefined> {
    const p = this.spec.priorImage;
    const rows = await this.db.all(this.committedAtSql, [sequence, ONE]);
    if (rows.length) return rows[0][p.committed] as string;
    const after = await this.db.all(this.firstCommittedSql, [ONE]);
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
    await this.db.transaction(async (tx) => {
      await tx.run(this.pruneEventsSql, [last]);
      await tx.run(this.prunePriorsSql, [last]);
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
      const cutoff = new Date(now.getTime() - this.policy.days * DAY_MS).toISOString();
      const rows = await this.db.all(this.lastBeforeSql, [cutoff, ONE]);
      if (rows.length) limits.push(Number(rows[0][p.sequence]));
    }
    if (limits.length === 0) return undefined;
    return Math.min(Math.max(...limits), newest - 1);
  }
}
