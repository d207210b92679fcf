/**
 * A page of an upstream written through ingest's path (the record check, the service's timestamps, an
 * EntityEvent per change downstream) with what the puller keeps of it in the same transaction: which upstream
 * wrote each record (with the upstream's own timestamp) and the checkpoint the page moves to. A puller killed at
 * any moment resumes from a checkpoint that covers exactly the records written.
 */
import type { EntitySetSpec } from '../model/service-model';
import { AlsoInTransaction, DELETE_MARK, emptyReport, IngestItem, IngestReport, IngestTarget, ingestBatch } from '../ingest/ingest';
import type { RecordTransaction } from '../storage/records/record-writer';
import type { PullProgress } from '../storage/tables/pull-progress';

/** Where a page leaves its strategy: the checkpoint written with its records. */
export interface PagePosition {
  readonly strategy: string;
  readonly position: string;
  /** The set the checkpoint is kept under, when not the page's (the event set's, for the events it followed). */
  readonly set?: string;
}

export interface PageLine extends IngestItem {
  /** The upstream's change timestamp of the record, kept beside it. */
  readonly upstreamTimestamp?: string | null;
}

/** A page not written whole for a reason a later pass may not meet (write conflicts): the pass ends there. */
export class PageNotWritten extends Error {}

export class PageWriter {
  constructor(
    private readonly target: IngestTarget, private readonly progress: PullProgress, private readonly upstream: string,
    private readonly clock: { now(): number },
  ) {}

  /**
   * Writes `lines` into `set` (a line with DELETE_MARK removes, as the dictionary says a removal is) and moves the
   * checkpoint to `position`, when given, in the same transaction. Returns ingest's report (records refused, with
   * their reasons, are in its errors).
   */
  async write(set: EntitySetSpec, lines: readonly PageLine[], position?: PagePosition): Promise<IngestReport> {
    const report = emptyReport();
    const stamps = new Map(lines.map((l) => [l.line, l.upstreamTimestamp ?? null]));
    // Ingest may write a page in parts (halves around a record the database refuses): the checkpoint goes with the
    // part holding the page's last line, which commits last; if that line was refused, it is written after them all.
    const last = lines.at(-1)?.line;
    let moved = false;
    const also: AlsoInTransaction = async (tx, written) => {
      const removed = written.filter((w) => w.input[DELETE_MARK] === true).map((w) => JSON.stringify(w.input[set.key]));
      const kept = written.filter((w) => w.input[DELETE_MARK] !== true)
        .map((w) => ({ key: JSON.stringify(w.input[set.key]), upstreamTimestamp: stamps.get(w.line) ?? null }));
      await this.progress.own(tx.executor, this.upstream, set.name, kept);
      await this.progress.disown(tx.executor, this.upstream, set.name, removed);
      moved = position !== undefined && written.some((w) => w.line === last);
      if (moved) await this.checkpoint(tx, set, position!);
    };
    await ingestBatch(this.target, set.name, lines, report, 'write', { also });
    // A record lost to other writers' conflicts is not refused for its content: the checkpoint stays before the page,
    // which the next pass reads again.
    const lost = report.errors.filter((e) => e.conflict);
    if (lost.length) throw new PageNotWritten(`${lost.length} record(s) of the page lost every attempt to other writers' changes (${lost[0].message})`);
    // Nothing was written (every record refused, or none): the checkpoint moves past them on its own.
    if (position && !moved) await this.target.writer.transaction((tx) => this.checkpoint(tx, set, position));
    return report;
  }

  /** Moves a checkpoint with no records to write (all of them written before it, in transactions of their own). */
  checkpointAlone(set: string, position: PagePosition): Promise<void> {
    return this.target.writer.transaction((tx) => this.checkpoint(tx, set, position));
  }

  private checkpoint(tx: RecordTransaction, set: EntitySetSpec | string, { strategy, position, set: kept }: PagePosition): Promise<void> {
    const name = kept ?? (typeof set === 'string' ? set : set.name);
    return this.progress.setCheckpoint(tx.executor, this.upstream, name, strategy, position, new Date(this.clock.now()).toISOString());
  }
}
