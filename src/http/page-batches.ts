/**
 * A page of a collection read in batches: each batch is one keyset query continuing after the last record of
 * the one before (as pages continue one another), expanded on its own, then handed on to be written. So the
 * memory a page takes is one batch's, whatever its size and however slowly its reader reads; a page no
 * larger than a batch is one query, as it always was.
 */
import type { PreparedRead, StoredRecord } from '../storage/record-store';

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
  /** Splices the expansions into a batch of records (http/expansions.ts), given their keys. */
  readonly expand: (keys: readonly unknown[], records: readonly StoredRecord[]) => Promise<Buffer[]>;
}

export class PageBatches {
  /** Records read so far. */
  read = 0;
  /** No batch follows. */
  done = false;
  /** Rows remain after the page (then a next link is due). */
  more = false;
  /** The sort values of the last record read: where the next page starts. */
  last?: readonly unknown[];

  constructor(private readonly records: PreparedRead, private readonly page: PageRead) {
    this.last = page.after;
    this.done = page.limit <= 0;
  }

  /** The next batch's records as the bytes written, expanded; [] once done. */
  async next(): Promise<Buffer[]> {
    if (this.done) return [];
    const p = this.page;
    const take = Math.min(p.batch, p.limit - this.read);
    // One row more than the batch tells whether another row follows.
    const offset = this.last === undefined ? p.skip : undefined;
    const rows = await this.records.page({ after: this.last, limit: take + 1, offset });
    const n = Math.min(rows.records.length, take);
    this.read += n;
    if (n > 0) this.last = rows.sortValues[n - 1];
    const moreRows = rows.records.length > take;
    this.done = !moreRows || this.read >= p.limit;
    this.more = moreRows && this.read >= p.limit;
    const records = rows.records.length > n ? rows.records.slice(0, n) : rows.records;
    return p.expand(rows.sortValues.slice(0, n).map((v) => v[p.keyAt]), records);
  }
}
