/**
 * The statements a read plan (query/request-plan.ts) runs, attached to it once: its condition (the licence's
 * visibility and the filter) compiled to SQL when the plan is made, the statements around it compiled by knex
 * once per shape (record-queries.ts), and what a plan always runs alike (the key fetch's text, the count) kept
 * here. A request of a known shape so pays neither the binder nor a compiler: it binds its values and runs.
 * A plan whose records leave as stored (`undecoded`) reads the record column as bytes: the drivers hand them over
 * as Buffers, and they reach the socket without ever being a JS string.
 */
import type { ReadPlan } from '../query/request-plan';
import type { Fragment } from './fragment';
import type { Statement } from './query-builder';
import { RECORD_COLUMN } from '../model/service-model';
import { JOINED_LENGTH, PARENT, RecordQueries, type RelatedQuery } from './record-queries';
import { scannedFields } from './scans';
import { recordReader } from './record-codec';

type Row = Record<string, unknown>;

/** A record as read: its stored bytes (an undecoded read), or its JSON text (projected, or for the service's own use). */
export type StoredRecord = string | Buffer;

/** Runs a statement (`scanned`: the fields that make it a scan, scans.ts): RecordStore's reader. */
export type StatementReader = (q: Statement, scanned?: readonly string[]) => Promise<Row[]>;

export interface RecordPage<R extends StoredRecord = string> {
  /** The records, in order. */
  readonly records: R[];
  /** Sort values of each record (for the keyset position of the last row). */
  readonly sortValues: unknown[][];
}

/** Where a page starts and how many rows it takes. */
export interface PageWindow {
  /** Keyset position: the sort values of the last row before. */
  readonly after?: readonly unknown[];
  readonly limit: number;
  /** Rows passed over first ($skip); only where no keyset position is given. */
  readonly offset?: number;
}

/** The reads of one plan: pages, their count, one record by key. */
export class PreparedRead {
  private readonly condition?: Fragment;
  private readonly scanned: readonly string[];
  /** The fields that make a count a scan (its condition's; a count has no order). */
  private readonly countScanned: readonly string[];
  private readonly orderColumns: readonly string[];
  private keyText?: string;
  private counted?: Statement;

  private readonly recordOf: (row: Row) => StoredRecord;

  constructor(private readonly queries: RecordQueries, private readonly reader: StatementReader, private readonly read: Omit<ReadPlan, 'set'>) {
    this.recordOf = recordOf(read);
    this.condition = queries.condition(read.where);
    this.scanned = scannedFields(read.where, read.orderBy);
    this.countScanned = scannedFields(read.where);
    this.orderColumns = read.orderBy.map((o) => o.column);
  }

  /** One record (projected), or undefined when there is none the plan's condition admits. */
  async byKey(key: string | number): Promise<StoredRecord | undefined> {
    const c = this.condition;
    const sql = (this.keyText ??= this.queries.byKey(key, recordReader(this.read.projection).columns, c, this.read.undecoded).sql);
    const rows = await this.reader({ sql, params: c ? [key, ...c.params] : [key] });
    return rows.length ? this.recordOf(rows[0]) : undefined;
  }

  /** Records after a keyset position, in the plan's order, with their sort values. */
  async page(w: PageWindow): Promise<RecordPage<StoredRecord>> {
    const r = this.read;
    const q = { condition: this.condition, after: w.after, orderBy: r.orderBy, limit: w.limit, offset: w.offset, projection: r.projection, undecoded: r.undecoded };
    const rows = await this.reader(this.queries.page(q, this.scanned.length > 0), this.scanned);
    const columns = this.orderColumns;
    return { records: rows.map(this.recordOf), sortValues: rows.map((row) => columns.map((c) => row[c] ?? null)) };
  }

  async count(): Promise<number> {
    const scanned = this.countScanned;
    const q = (this.counted ??= this.queries.count(this.condition, scanned.length > 0));
    return Number((await this.reader(q, scanned))[0].n);
  }
}

/**
 * A parent's related records as an expansion reads them: each one's JSON text (a projected read, or one the client's
 * format changes), or, read as stored, all of them as one run of stored bytes joined by commas, in order: the inside
 * of their JSON array, never decoded.
 */
export type RelatedRecords = readonly string[] | Buffer;

/** An expansion's read: the related records of many parents at once (one statement per batch, never per parent). */
export class PreparedRelated {
  private readonly condition?: Fragment;
  private readonly recordOf: (row: Row) => string;

  constructor(private readonly queries: RecordQueries, private readonly reader: StatementReader, private readonly read: Omit<ReadPlan, 'set'> & {
    readonly foreignKey: string; readonly perParent?: number;
  }) {
    this.condition = queries.condition(read.where);
    this.recordOf = recordReader(read.projection).json;
  }

  /** The related records, by parent key (parents without any are absent); with `perParent`, at most that many each. */
  async of(parents: readonly unknown[]): Promise<Map<unknown, RelatedRecords>> {
    if (parents.length === 0) return new Map();
    if (!this.read.undecoded) return this.each(parents);
    const out = new Map<unknown, RelatedRecords>();
    const cut: unknown[] = [];
    for (const row of await this.reader(this.queries.joinedRelated(this.query(parents), this.condition))) {
      const bytes = row[RECORD_COLUMN];
      if (Buffer.isBuffer(bytes) && bytes.length === Number(row[JOINED_LENGTH])) out.set(row[PARENT], bytes);
      else cut.push(row[PARENT]);
    }
    // Cut short by the database (MariaDB's max_allowed_packet): those parents' records are read a row each.
    if (cut.length) for (const [parent, records] of await this.each(cut)) out.set(parent, records);
    return out;
  }

  private async each(parents: readonly unknown[]): Promise<Map<unknown, string[]>> {
    const out = new Map<unknown, string[]>();
    for (const row of await this.reader(this.queries.related(this.query(parents), this.condition))) {
      const parent = row[PARENT];
      const list = out.get(parent) ?? out.set(parent, []).get(parent)!;
      list.push(this.recordOf(row));
    }
    return out;
  }

  private query(parents: readonly unknown[]): Omit<RelatedQuery, 'where'> {
    // Key lists are padded to a power of two (repeating the last key) so a few statement shapes serve every page.
    const size = 2 ** Math.ceil(Math.log2(parents.length));
    const keys = [...parents, ...Array(size - parents.length).fill(parents[parents.length - 1])];
    const r = this.read;
    return { foreignKey: r.foreignKey, keys, orderBy: r.orderBy, projection: r.projection, perParent: r.perParent };
  }
}

/** A row's record: the stored bytes of an undecoded read, else the projection's JSON text. */
function recordOf(read: Pick<ReadPlan, 'projection' | 'undecoded'>): (row: Row) => StoredRecord {
  return read.undecoded ? (row) => row[RECORD_COLUMN] as Buffer : recordReader(read.projection).json;
}
