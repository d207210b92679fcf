/**
 * A plan's reads of stored records through the RecordCache (KeptRecords), and what the reads that keep things
 * in memory share: whether to look there first (mostlyKept), and key lists of a few statement shapes (padded).
 */
import { RECORD_COLUMN, REVISION_COLUMN } from '../../model/service-model';
import type { Statement } from '../sql/query-builder';
import { revisionOf, type TableRecordCache } from './record-cache';
import type { RecordQueries } from './record-queries';

export type Row = Record<string, unknown>;

/** Runs a statement (`scanned`: the fields that make it a scan, scans.ts): RecordStore's reader. */
export type StatementReader = (q: Statement, scanned?: readonly string[]) => Promise<Row[]>;

/**
 * Whether a plan's next read looks in memory first: when at least half of what its last read found (`of`) was
 * kept; a read that found nothing changes nothing.
 */
export function mostlyKept(kept: number, of: number, was: boolean): boolean {
  return of === 0 ? was : 2 * kept >= of;
}

/** Keys per read by key: a power of two (padded() pads to one) within the statement's bound on its list. */
const KEYS_PER_READ = 512;

/** Key lists padded to a power of two (repeating the last key), so that a few statement shapes serve every page. */
export function padded(keys: readonly unknown[]): unknown[] {
  const size = 2 ** Math.ceil(Math.log2(keys.length));
  return [...keys, ...Array(size - keys.length).fill(keys[keys.length - 1])];
}

/**
 * A plan's reads of stored records through the RecordCache. A read asks for its rows' positions and revisions
 * first (its own statement, condition and order, without the record column), takes the bytes of those kept at
 * their revisions, and reads the rest by key; a row found at another revision there (written in between) sends
 * the read back to reading its records whole, as it would without a cache. Which way comes first follows the
 * plan's last read: a plan whose rows were mostly kept asks for positions, one whose rows were mostly not reads
 * whole, one statement, and keeps what it read.
 * Only key fetches and first pages (a read from no keyset position) are kept and looked for: many clients ask for
 * them again. A page after a position is a walk's, each record read once, so it is read whole as without a cache
 * and kept nowhere: keeping it would only push the first pages out, and every record kept and then given up
 * outlives the young generation's collections, so a walk of the whole set would cost the collector its size in
 * promoted memory (docs/benchmarks.md).
 */
export class KeptRecords {
  /** What a read by positions selects: the key and the revision (the order's columns are added by the query). */
  readonly positionColumns: readonly string[];
  /** What a whole read selects: the record, with what it is kept by. */
  readonly wholeColumns: readonly string[];
  positionsFirst = false;

  constructor(private readonly cache: TableRecordCache, readonly key: string, private readonly queries: RecordQueries, private readonly reader: StatementReader) {
    this.positionColumns = [key, REVISION_COLUMN];
    this.wholeColumns = [RECORD_COLUMN, key, REVISION_COLUMN];
  }

  /** Rows read whole: the ones not kept yet are kept now, and whether most were kept already decides the next read. */
  keep(rows: readonly Row[]): void {
    let known = 0;
    for (const row of rows) {
      const revision = revisionOf(row[REVISION_COLUMN]);
      if (this.cache.has(row[this.key], revision)) known++;
      else this.cache.put(row[this.key], revision, row[RECORD_COLUMN] as Buffer);
    }
    this.cache.readFromDatabase(rows.length);
    this.positionsFirst = mostlyKept(known, rows.length, this.positionsFirst);
  }

  /** The records of rows read by position, in order; undefined when one was written since (read them whole). */
  async records(positions: readonly Row[]): Promise<Buffer[] | undefined> {
    const records: (Buffer | undefined)[] = positions.map((row) => this.cache.get(row[this.key], revisionOf(row[REVISION_COLUMN])));
    const missing = positions.filter((_, i) => !records[i]);
    this.positionsFirst = mostlyKept(positions.length - missing.length, positions.length, this.positionsFirst);
    if (missing.length === 0) return records as Buffer[];
    const read = await this.atRevisions(missing);
    if (!read) return undefined;
    for (let i = 0; i < positions.length; i++) {
      if (records[i]) continue;
      const bytes = read.get(positions[i][this.key])!;
      this.cache.put(positions[i][this.key], revisionOf(positions[i][REVISION_COLUMN]), bytes);
      records[i] = bytes;
    }
    return records as Buffer[];
  }

  /**
   * The records of rows read by position, by key, each at the revision its position gave (nothing kept here);
   * undefined when one was written since.
   */
  async atRevisions(positions: readonly Row[]): Promise<Map<unknown, Buffer> | undefined> {
    const read = new Map<unknown, Row>();
    for (let from = 0; from < positions.length; from += KEYS_PER_READ) {
      const keys = positions.slice(from, from + KEYS_PER_READ).map((row) => row[this.key]);
      for (const row of await this.reader(this.queries.byKeysWithRevisions(padded(keys)))) read.set(row[this.key], row);
    }
    const records = new Map<unknown, Buffer>();
    for (const position of positions) {
      const row = read.get(position[this.key]);
      const revision = revisionOf(position[REVISION_COLUMN]);
      if (!row || revision === undefined || revisionOf(row[REVISION_COLUMN]) !== revision) return undefined;
      records.set(position[this.key], row[RECORD_COLUMN] as Buffer);
    }
    return records;
  }
}
