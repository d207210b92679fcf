/**
 * A page of a collection read in batches: each batch is one keyset query continuing after the last record of
 * the one before (as pages continue one another), expanded on its own, then handed on to be written. While one
 * batch is written, the next is read (its position is known once the one before is read): on MariaDB/MySQL the
 * database's time overlaps the socket's instead of adding to it. So the memory a page takes is two batches' at
 * most, whatever its size and however slowly its reader reads; a page no larger than a batch is one query, as it
 * always was.
 */
import type { PagePositions, PreparedRead, RecordPage, StoredRecord } from '../../storage/records/record-store';
import type { Parents } from './expansions';
import type { RecordBytes } from './response';

export interface PageRead {
  /** Keyset position the page starts after (from its $skiptoken). */
  readonly after?: readonly unknown[];
  /** Records the page holds at most. */
  readonly limit: number;
  /** Records passed over before the page ($skip; a first page only: a next page continues by position). */
  readonly skip?: number;
  /** Records per batch. */
  readonly batch: number;
  /** Where the set's key is among the sort values. */
  readonly keyAt: number;
  /**
   * Splices the expansions into a batch of records (http/expansions.ts), given their keys and links; `first`: the
   * batch is read from no position, as a first page is (its related records are looked for in memory).
   */
  readonly expand: (parents: Parents, records: readonly StoredRecord[], first: boolean) => Promise<RecordBytes[]>;
  /**
   * Which of a batch's records must be read (given their keys and revisions, and how many records come before it
   * in the page), the others' bytes being held elsewhere (a gzip answer's kept runs, http/gzip); undefined when
   * not asked now: a batch is then read whole.
   */
  readonly needed?: () => ((keys: readonly unknown[], revisions: readonly unknown[], position: number) => readonly boolean[]) | undefined;
}

/** Which records a batch holds: their keys, and their revisions when the read knows them. */
export interface BatchIds {
  readonly keys: readonly unknown[];
  readonly revisions?: readonly unknown[];
}

/** One batch as read: its records (expanded), and what reading it told about the rows after it. */
interface Batch {
  readonly records: RecordBytes[];
  readonly ids: BatchIds;
  /** Sort values of its last record (undefined when it has none). */
  readonly last?: readonly unknown[];
  /** Rows remain after it. */
  readonly moreRows: boolean;
}

/** Batches whose positions one read takes at most: with batches of 100, a page of 1,000 (the largest by default) in one. */
const POSITION_BATCHES = 10;

export class PageBatches {
  /** Records handed out so far. */
  read = 0;
  /** No batch follows the ones handed out. */
  done = false;
  /** Rows remain after the page (then a next link is due). */
  more = false;
  /** The sort values of the last record handed out: where the next page starts. */
  last?: readonly unknown[];
  /** The keys and revisions of the batch last handed out (a gzip body's runs are kept by them: http/gzip). */
  ids: BatchIds = { keys: [] };
  /** The batch after the ones handed out, being read; at most one is read ahead. */
  private ahead?: Promise<Batch>;
  /** The positions of the page's rows not handed out yet, when its batches are read by position (PageRead.needed). */
  private positions?: PagePositions;

  constructor(private readonly records: PreparedRead, private readonly page: PageRead) {
    this.last = page.after;
    this.done = page.limit <= 0;
  }

  /**
   * The next batch's records as the bytes written, expanded; [] once done. The state above is the batches handed
   * out, never the one read ahead, so a caller that stops here writes exactly what the state says.
   */
  async next(): Promise<RecordBytes[]> {
    if (this.done) return [];
    const reading = this.ahead ?? this.readAfter(this.last, this.read);
    this.ahead = undefined;
    const batch = await reading;
    const n = batch.records.length;
    this.ids = batch.ids;
    this.read += n;
    if (n > 0) this.last = batch.last;
    this.done = !batch.moreRows || this.read >= this.page.limit;
    this.more = batch.moreRows && this.read >= this.page.limit;
    if (!this.done) {
      this.ahead = this.readAfter(this.last, this.read);
      // Its failure is met by the next call; a page abandoned before then (its reader gone) leaves it unawaited.
      this.ahead.catch(() => undefined);
    }
    return batch.records;
  }

  /** The batch after position `after`, `read` records into the page. */
  private async readAfter(after: readonly unknown[] | undefined, read: number): Promise<Batch> {
    const p = this.page;
    const take = Math.min(p.batch, p.limit - read);
    // One row more than the batch tells whether another row follows.
    const offset = after === undefined ? p.skip : undefined;
    const rows = await this.rowsAfter({ after, limit: take + 1, offset }, read);
    const n = Math.min(rows.records.length, take);
    const records = rows.records.length > n ? rows.records.slice(0, n) : rows.records;
    const keys = rows.sortValues.slice(0, n).map((v) => v[p.keyAt]);
    const expanded = await p.expand({ keys, links: rows.links?.slice(0, n) }, records, after === undefined);
    const ids = { keys, revisions: rows.revisions?.slice(0, n) };
    return { records: expanded, ids, last: n > 0 ? rows.sortValues[n - 1] : undefined, moreRows: rows.records.length > take };
  }

  /**
   * A batch's rows (one more than the batch, to tell whether another follows): by position when the page's reader
   * asks for only some records (needed), the positions of the whole rest of the page read once, at its first batch
   * (up to POSITION_BATCHES batches'); else, or when a record was written since its position was read, read whole.
   */
  private async rowsAfter(window: { after?: readonly unknown[]; limit: number; offset?: number }, read: number): Promise<RecordPage<StoredRecord>> {
    const needed = this.page.needed?.();
    const take = window.limit - 1;
    if (needed) {
      let positions = this.positions?.take(take);
      if (!positions) {
        const rest = Math.min(POSITION_BATCHES * this.page.batch, Math.max(take, this.page.limit - read));
        this.positions = await this.records.positionsOf({ ...window, limit: rest + 1 });
        positions = this.positions?.take(take);
      }
      const rows = positions && await this.records.pageAt(positions, (keys, revisions) => needed(keys.slice(0, take), revisions.slice(0, take), read));
      if (rows) return rows;
    }
    this.positions = undefined;
    return this.records.page(window);
  }
}
