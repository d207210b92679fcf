/**
 * The statements a read plan (query/request-plan.ts) runs, attached to it once: its condition (the licence's
 * visibility and the filter) compiled to SQL when the plan is made, the statements around it compiled by knex
 * once per shape (record-queries.ts), and what a plan always runs alike (the key fetch's text, the count) kept
 * here. A request of a known shape so pays neither the binder nor a compiler: it binds its values and runs.
 * A plan whose records leave as stored (`undecoded`) reads the record column as bytes: the drivers hand them over
 * as Buffers, and they reach the socket without ever being a JS string.
 */
import { createHash } from 'node:crypto';
import { without } from '../../foundation/bench-without';
import type { ReadPlan } from '../../query/request-plan';
import type { Fragment } from '../sql/fragment';
import type { Statement } from '../sql/query-builder';
import { RECORD_COLUMN, REVISION_COLUMN } from '../../model/service-model';
import type { TableRecordCache } from './record-cache';
import { digestCount, digestOf, JOINED_LENGTH, PARENT, RecordQueries, type RelatedQuery } from './record-queries';
import { scannedFields } from '../sql/scans';
import { recordReader } from './record-codec';

import { KeptRecords, mostlyKept, padded, type Row, type StatementReader } from './kept-records';

export type { StatementReader } from './kept-records';

/** A record as read: its stored bytes (an undecoded read), or its JSON text (projected, or for the service's own use). */
export type StoredRecord = string | Buffer;


/** A record's values of its plan's link columns (ReadPlan.links), by column. */
export type RecordLinks = Readonly<Record<string, unknown>>;

export interface RecordPage<R extends StoredRecord = string> {
  /** The records, in order. */
  readonly records: R[];
  /** Sort values of each record (for the keyset position of the last row). */
  readonly sortValues: unknown[][];
  /** Each record's links, when the plan reads any. */
  readonly links?: RecordLinks[];
  /** Each record's revision, when the read knows them (a read of stored records with the record cache on). */
  readonly revisions?: unknown[];
}

/** Records as their values by field, in order, with each one's sort values. */
export interface RecordValues {
  readonly values: Record<string, unknown>[];
  readonly sortValues: unknown[][];
}

/** One record found by key, with its links when the plan reads any. */
export interface FoundRecord {
  readonly record: StoredRecord;
  readonly links?: RecordLinks;
  /** Its row's revision, when the read knows it (as RecordPage.revisions). */
  readonly revision?: unknown;
}

/** Which of a page's records its reader needs read, given their keys and revisions in order (PreparedRead.pageAt). */
export type NeededRecords = (keys: readonly unknown[], revisions: readonly unknown[]) => readonly boolean[];

/** A record a read by pageAt did not read. */
const EMPTY = Buffer.alloc(0);

/** Where a page starts and how many rows it takes. */
export interface PageWindow {
  /** Keyset position: the sort values of the last row before. */
  readonly after?: readonly unknown[];
  readonly limit: number;
  /** Rows passed over first ($skip); only where no keyset position is given. */
  readonly offset?: number;
}

/**
 * The positions of a page's rows, read in one statement and handed out a batch at a time: a page of 1,000 whose
 * runs are kept so costs one read of its index instead of one per batch (docs/benchmarks/gzip.md). Rows without
 * their records: a page's worth is small, and bounded by the window asked for.
 */
export class PagePositions {
  private at = 0;

  constructor(private readonly rows: readonly Row[], private readonly asked: number) {}

  /**
   * The next `n` rows and the one after them (which tells whether another follows); undefined when the rows read
   * end before that and the window was full (more rows may follow it: read the next window).
   */
  take(n: number): readonly Row[] | undefined {
    const end = this.at + n + 1;
    if (end > this.rows.length && this.rows.length >= this.asked) return undefined;
    const rows = this.rows.slice(this.at, end);
    this.at += n;
    return rows;
  }
}

/** The reads of one plan: pages, their count, one record by key. */
export class PreparedRead {
  private readonly condition?: Fragment;
  private readonly scanned: readonly string[];
  /** The fields that make a count a scan (its condition's; a count has no order). */
  private readonly countScanned: readonly string[];
  private readonly orderColumns: readonly string[];
  /** Columns read beside each record for its single-valued expansions (read in the same statement as it). */
  private readonly links: readonly string[];
  private keyText?: string;
  private keyPositionText?: string;
  private counted?: Statement;

  private readonly recordOf: (row: Row) => StoredRecord;
  /** Where the records' bytes are kept by revision: for a read of stored records (undecoded) only. */
  private readonly kept?: KeptRecords;

  constructor(
    private readonly queries: RecordQueries, private readonly reader: StatementReader, private readonly read: Omit<ReadPlan, 'set'>,
    cache?: TableRecordCache, key?: string,
  ) {
    this.recordOf = recordOf(read);
    this.condition = queries.condition(read.where);
    this.scanned = scannedFields(read.where, read.orderBy);
    this.countScanned = scannedFields(read.where);
    this.orderColumns = read.orderBy.map((o) => o.column);
    this.links = read.links ?? [];
    if (read.undecoded && cache && key) this.kept = new KeptRecords(cache, key, queries, reader);
  }

  /** One record (projected), or undefined when there is none the plan's condition admits. */
  async byKey(key: string | number): Promise<StoredRecord | undefined> {
    return (await this.entity(key))?.record;
  }

  /** One record (projected) with its links, or undefined when there is none the plan's condition admits. */
  async entity(key: string | number): Promise<FoundRecord | undefined> {
    const c = this.condition;
    const params = c ? [key, ...c.params] : [key];
    const kept = this.kept;
    if (kept?.positionsFirst) {
      const sql = (this.keyPositionText ??= this.queries.byKey(key, this.withLinks(kept.positionColumns), c, true).sql);
      const positions = await this.reader({ sql, params });
      const found = await kept.records(positions);
      if (found) return found.length ? this.found(found[0], positions[0]) : undefined;
    }
    const columns = this.withLinks(kept ? kept.wholeColumns : recordReader(this.read.projection).columns);
    const sql = (this.keyText ??= this.queries.byKey(key, columns, c, this.read.undecoded).sql);
    const rows = await this.reader({ sql, params });
    kept?.keep(rows);
    return rows.length ? this.found(this.recordOf(rows[0]), rows[0]) : undefined;
  }

  private found(record: StoredRecord, row: Row): FoundRecord {
    const revision = this.kept ? { revision: row[REVISION_COLUMN] } : {};
    return this.links.length ? { record, links: this.linksOf(row), ...revision } : { record, ...revision };
  }

  /** `columns` and the link columns (none twice). */
  private withLinks(columns: readonly string[]): readonly string[] {
    return this.links.length ? [...new Set([...columns, ...this.links])] : columns;
  }

  private linksOf(row: Row): RecordLinks {
    return Object.fromEntries(this.links.map((c) => [c, row[c]]));
  }

  /** Records after a keyset position, in the plan's order, with their sort values. */
  async page(w: PageWindow): Promise<RecordPage<StoredRecord>> {
    const r = this.read;
    // Only a first page (a read from no position) is looked for in memory: a later page is a walk's.
    const kept = w.after === undefined ? this.kept : undefined;
    if (kept?.positionsFirst) {
      const positions = await this.positions(w, kept);
      const records = await kept.records(positions);
      if (records) return this.pageOf(records, positions);
    }
    const whole = this.kept?.wholeColumns ?? (this.links.length ? recordReader(r.projection).columns : undefined);
    const rows = await this.reader(this.queries.page({ ...this.window(w), columns: whole && this.withLinks(whole) }, this.scanned.length > 0), this.scanned);
    kept?.keep(rows);
    return this.pageOf(rows.map(this.recordOf), rows);
  }

  /**
   * The positions of a window's rows (keys, revisions, sort values, links; no records), read once for a whole page
   * and handed out batch by batch (pageAt); undefined when the read knows no revisions.
   */
  async positionsOf(w: PageWindow): Promise<PagePositions | undefined> {
    const kept = this.kept;
    return kept && new PagePositions(await this.positions(w, kept), w.limit);
  }

  /**
   * A batch of a page read by positions (positionsOf), with only the records `needed` asks for read, by key: the
   * others' bytes the reader holds elsewhere by revision (a gzip answer's kept runs, http/gzip), and they are
   * empty here. Undefined when a record asked for was written since its position was read: then read the page().
   */
  async pageAt(positions: readonly Row[], needed: NeededRecords): Promise<RecordPage<Buffer> | undefined> {
    const kept = this.kept!;
    const wanted = needed(positions.map((row) => row[kept.key]), positions.map((row) => row[REVISION_COLUMN]));
    const read = await kept.atRevisions(positions.filter((_, i) => wanted[i]));
    if (!read) return undefined;
    return this.pageOf(positions.map((row, i) => (wanted[i] ? read.get(row[kept.key])! : EMPTY)), positions);
  }

  /** The window's rows' keys, revisions, sort values and links, without their records. */
  private positions(w: PageWindow, kept: KeptRecords): Promise<Row[]> {
    return this.reader(this.queries.page({ ...this.window(w), columns: this.withLinks(kept.positionColumns) }, this.scanned.length > 0), this.scanned);
  }

  private window(w: PageWindow) {
    const r = this.read;
    return { condition: this.condition, after: w.after, orderBy: r.orderBy, limit: w.limit, offset: w.offset, projection: r.projection, undecoded: r.undecoded };
  }

  /** Records with what their rows tell: sort values, links, and (a read of stored records with the cache on) revisions. */
  private pageOf<R extends StoredRecord>(records: R[], rows: readonly Row[]): RecordPage<R> {
    const columns = this.orderColumns;
    return {
      records,
      sortValues: rows.map((row) => columns.map((c) => row[c] ?? null)),
      ...this.links.length ? { links: rows.map((row) => this.linksOf(row)) } : {},
      ...this.kept ? { revisions: rows.map((row) => row[REVISION_COLUMN]) } : {},
    };
  }

  /**
   * Records after a keyset position, in the plan's order, as their values by field (projected as `page` projects
   * them) with their sort values: for the service's own reading of many records (a digest), which sends no text.
   */
  async values(w: PageWindow): Promise<RecordValues> {
    const r = this.read;
    const reader = recordReader(r.projection);
    const q = { condition: this.condition, after: w.after, orderBy: r.orderBy, limit: w.limit, projection: r.projection, columns: reader.columns };
    const rows = await this.reader(this.queries.page(q, this.scanned.length > 0), this.scanned);
    return { values: rows.map(reader.values), sortValues: rows.map((row) => this.orderColumns.map((c) => row[c] ?? null)) };
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

/**
 * An expansion's read: the related records of many parents at once (one statement per batch, never per parent).
 * Read as stored, each parent's run of bytes is kept by the digest of its rows' revisions (TableRecordCache.runs), for the
 * parents of a key fetch or a first page (`kept`), as a page's own records are (KeptRecords).
 */
export class PreparedRelated {
  private readonly condition?: Fragment;
  private readonly recordOf: (row: Row) => string;
  private readonly kept?: KeptRuns;

  constructor(private readonly queries: RecordQueries, private readonly reader: StatementReader, private readonly read: Omit<ReadPlan, 'set'> & {
    readonly foreignKey: string; readonly perParent?: number;
  }, cache?: TableRecordCache) {
    this.condition = queries.condition(read.where);
    this.recordOf = recordReader(read.projection).json;
    // A run cut to `perParent` records is not what the digest of all of them describes: such reads are not kept.
    if (read.undecoded && cache && read.perParent === undefined && !without('expansion-cache')) this.kept = new KeptRuns(cache.runs(statementIdentity(read, this.condition)));
  }

  /**
   * The related records, by parent key (parents without any are absent); with `perParent`, at most that many each.
   * `kept`: the parents are a key fetch's or a first page's, whose related runs are looked for in memory and kept.
   */
  async of(parents: readonly unknown[], kept = false): Promise<Map<unknown, RelatedRecords>> {
    if (parents.length === 0) return new Map();
    if (!this.read.undecoded) return this.each(parents);
    const runs = kept ? this.kept : undefined;
    if (!runs?.digestsFirst) return this.joined(parents, runs);
    const { found, missing } = runs.take(await this.reader(this.queries.relatedDigests(this.query(parents), this.condition)));
    if (missing.length) for (const [parent, records] of await this.joined(missing, runs, true)) found.set(parent, records);
    return found;
  }

  /** The parents' runs as the database joins them (and keeps them, with `runs`; `missed`: counted as missed already). */
  private async joined(parents: readonly unknown[], runs?: KeptRuns, missed = false): Promise<Map<unknown, RelatedRecords>> {
    const out = new Map<unknown, RelatedRecords>();
    const cut: unknown[] = [];
    const rows = await this.reader(this.queries.joinedRelated(this.query(parents), this.condition, runs !== undefined));
    for (const row of rows) {
      const bytes = row[RECORD_COLUMN];
      if (Buffer.isBuffer(bytes) && bytes.length === Number(row[JOINED_LENGTH])) out.set(row[PARENT], bytes);
      else cut.push(row[PARENT]);
    }
    runs?.keep(rows.filter((row) => out.has(row[PARENT])), missed);
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
    const r = this.read;
    return { foreignKey: r.foreignKey, keys: padded(parents), orderBy: r.orderBy, projection: r.projection, perParent: r.perParent };
  }
}

/**
 * What tells an expansion's statement from every other on its table, whatever plan holds it: its foreign key,
 * condition (the licence's and the filter's, with their values) and order. Two plans with the same statement
 * read the same runs, and share them.
 */
function statementIdentity(read: Pick<ReadPlan, 'orderBy'> & { readonly foreignKey: string }, condition?: Fragment): string {
  const order = read.orderBy.map((o) => [o.column, o.direction]);
  const text = JSON.stringify([read.foreignKey, condition?.sql ?? '', condition?.params ?? [], order], (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return createHash('sha256').update(text).digest('base64url');
}

/**
 * An expansion's reads of related runs through the RecordCache: a read asks for each parent's digest first (from
 * the foreign key's index), takes the runs kept at those digests, and reads only the other parents' joined. As for
 * KeptRecords, the plan's last read decides which way comes first.
 */
class KeptRuns {
  digestsFirst = false;

  constructor(private readonly runs: TableRecordCache) {}

  /**
   * Runs read joined with their digests: kept. Read whole (not `missed` by a look in memory first), they are
   * counted as read from the database, and whether most were kept already decides the next read.
   */
  keep(rows: readonly Row[], missed: boolean): void {
    let known = 0;
    for (const row of rows) {
      const digest = digestOf(row);
      if (this.runs.has(row[PARENT], digest)) known++;
      else this.runs.put(row[PARENT], digest, row[RECORD_COLUMN] as Buffer);
    }
    if (missed) return;
    this.runs.readFromDatabase(rows.reduce((n, row) => n + digestCount(row), 0));
    this.digestsFirst = mostlyKept(known, rows.length, this.digestsFirst);
  }

  /** The runs kept at the digests read, by parent, and the parents whose runs are not. */
  take(digests: readonly Row[]): { found: Map<unknown, RelatedRecords>; missing: unknown[] } {
    const found = new Map<unknown, RelatedRecords>();
    const missing: unknown[] = [];
    for (const row of digests) {
      const run = this.runs.get(row[PARENT], digestOf(row), digestCount(row));
      if (run) found.set(row[PARENT], run);
      else missing.push(row[PARENT]);
    }
    this.digestsFirst = mostlyKept(found.size, digests.length, this.digestsFirst);
    return { found, missing };
  }
}

/** A row's record: the stored bytes of an undecoded read, else the projection's JSON text. */
function recordOf(read: Pick<ReadPlan, 'projection' | 'undecoded'>): (row: Row) => StoredRecord {
  return read.undecoded ? (row) => row[RECORD_COLUMN] as Buffer : recordReader(read.projection).json;
}
