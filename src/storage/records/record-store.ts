/**
 * Reads and writes the records of one entity set. Reads take bound objects (record-queries.ts compiles
 * them); every statement runs as a prepared statement through the driver.
 */
import { Errors } from '../../errors/catalogue';
import type { EntitySetSpec, LookupSpec, TableSpec } from '../../model/service-model';
import { RECORD_COLUMN, REVISION_COLUMN } from '../../model/service-model';
import type { BoundPredicate } from '../../query/bound';
import { Projection, WHOLE_RECORD } from '../../query/projection';
import type { ReadPlan } from '../../query/request-plan';
import type { Database, Executor } from '../db/database';
import { EncodedRecord, newRevision, parseRecord, recordEncoder, RecordEncoder, timestampEdit } from './record-codec';
import { Belonging, RecordQueries, RecordQuery, whereBelongs } from './record-queries';
import { compile, Knex, ShapeCache, shapeKey, Statement } from '../sql/query-builder';
import { ScanTimedOut } from '../db/errors';
import { PreparedRead, PreparedRelated, RecordPage } from './prepared-reads';
import { batchesOf, InsertBatches, KEYS_PER_STATEMENT } from '../sql/shapes';
import { ValueTableWriter } from './value-tables';
import type { RecordCache, TableRecordCache } from './record-cache';

export type { RecordQuery } from './record-queries';
export type { FoundRecord, NeededRecords, PagePositions, PreparedRead, PreparedRelated, RecordLinks, RecordPage, StoredRecord } from './prepared-reads';

/**
 * Records per multi-row upsert (rowsPerStatement's `most`): each row carries a whole record's text, up to tens of
 * kilobytes, so fewer than the 500 rows of lighter tables keep a statement far below MariaDB's max_allowed_packet.
 */
const RECORDS_PER_STATEMENT = 50;

/** Shapes of the by-key and by-parent statements kept (a batch's size is one of few: full, or the last one's). */
const KEY_SHAPES = 64;

export class RecordStore {
  readonly encode: RecordEncoder;
  private readonly key: string;
  private readonly columns: string[];
  private readonly queries: RecordQueries;
  private readonly byKeys = new ShapeCache(KEY_SHAPES);
  private readonly upserts: InsertBatches;
  private readonly values: ValueTableWriter;
  private readonly knex: Knex;

  private readonly kept?: TableRecordCache;

  /** `cache`: where reads of stored records keep their bytes by revision (none: every read reads them). */
  constructor(readonly db: Database, readonly set: EntitySetSpec, readonly table: TableSpec, lookups: readonly LookupSpec[], cache?: RecordCache) {
    this.encode = recordEncoder(set, table, lookups);
    this.key = table.primaryKey;
    this.columns = table.columns.map((c) => c.name);
    this.knex = db.knex;
    this.queries = new RecordQueries(db.knex, db.dialect, table.name, this.key);
    const replaced = this.columns.filter((c) => c !== this.key);
    this.upserts = new InsertBatches(db, table.name, this.columns, (insert) => insert.onConflict(this.key).merge(replaced), RECORDS_PER_STATEMENT);
    this.values = new ValueTableWriter(db, set);
    if (cache?.enabled && table.columns.some((c) => c.name === REVISION_COLUMN)) this.kept = cache.of(table.name);
  }

  /** The statements of a read plan (query/request-plan.ts), its condition compiled once: kept with the plan. */
  prepare(read: Omit<ReadPlan, 'set'>): PreparedRead {
    return new PreparedRead(this.queries, this.reader, read, this.kept, this.key);
  }

  /**
   * The statements of an expansion's read (the related records of many parents at once), kept with its plan;
   * `keepsRuns`: its related runs are kept in memory (not for a statement no later request runs again).
   */
  prepareRelated(read: Omit<ReadPlan, 'set'> & { readonly foreignKey: string; readonly perParent?: number }, keepsRuns = true): PreparedRelated {
    return new PreparedRelated(this.queries, this.reader, read, keepsRuns ? this.kept : undefined);
  }

  // The service's own reads below take records as JSON texts (not `undecoded`: the reads' records are strings).

  /** One record's JSON text (projected when asked), or undefined; `scope` limits what may be seen. */
  async jsonByKey(key: string | number, projection: Projection = WHOLE_RECORD, scope?: BoundPredicate): Promise<string | undefined> {
    return await this.prepare({ where: scope, orderBy: [], projection, undecoded: false }).byKey(key) as string | undefined;
  }

  count(where?: BoundPredicate): Promise<number> {
    return this.prepare({ where, orderBy: [], projection: WHOLE_RECORD, undecoded: false }).count();
  }

  /** Records matching a bound filter after a keyset position, in a bound order, as JSON texts with their sort values. */
  async query(q: RecordQuery): Promise<RecordPage> {
    return await this.prepare({ where: q.where, orderBy: q.orderBy, projection: q.projection, undecoded: false }).page(q) as RecordPage;
  }

  /** Every stored record, parsed; only for sets bounded by the dictionary (reference data), never by data. */
  async all(): Promise<Record<string, unknown>[]> {
    const rows = await this.read(compile(this.knex(this.table.name).select(RECORD_COLUMN)));
    return rows.map((row) => parseRecord(row[RECORD_COLUMN] as string));
  }

  /** Stored records by key, parsed, read through `ex` (a transaction sees its own writes). */
  async recordsByKeys(ex: Executor, keys: readonly (string | number)[]): Promise<Map<string | number, Record<string, unknown>>> {
    const out = new Map<string | number, Record<string, unknown>>();
    for (const batch of batchesOf(keys, KEYS_PER_STATEMENT)) {
      const q = this.byKeys.statement(shapeKey('byKeys', batch.length), batch, () => this.knex(this.table.name).select(RECORD_COLUMN).whereIn(this.key, batch));
      for (const row of await ex.all(q.sql, q.params)) {
        const record = parseRecord(row[RECORD_COLUMN] as string);
        out.set(record[this.set.key] as string | number, record);
      }
    }
    return out;
  }

  /**
   * Stored records, parsed, whose `field` holds one of `values` and, when given, whose `belongs` field holds
   * its value or nothing (the join's discriminator), read through `ex`: the records that belong to parents.
   */
  async recordsByParent(ex: Executor, field: string, values: readonly (string | number)[], belongs?: Belonging): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (const batch of batchesOf(values, KEYS_PER_STATEMENT)) {
      const q = this.byParent('select', field, batch, belongs, () => this.knex(this.table.name).select(RECORD_COLUMN));
      for (const row of await ex.all(q.sql, q.params)) out.push(parseRecord(row[RECORD_COLUMN] as string));
    }
    return out;
  }

  /**
   * Moves the change timestamp of the records that belong to parents (as `recordsByParent` finds them) to
   * `now`, in its column and in the stored text, without reading them: the codec's in-place edit of a timestamp
   * (record-codec.ts, timestampEdit, which says why it is safe), written as SQL's REPLACE.
   */
  async restampByParent(ex: Executor, field: string, values: readonly (string | number)[], belongs: Belonging | undefined, now: string): Promise<void> {
    const stamp = this.set.changeTimestamp;
    if (!stamp) throw new Error(`${this.set.name} has no change timestamp to move`);
    const { column, before, after } = timestampEdit(this.set, stamp);
    const k = this.knex;
    // The text first: MariaDB evaluates assignments left to right, each seeing the ones before it.
    const old = this.db.dialect.concat([{ sql: '?', params: [before] }, this.db.dialect.id(column), { sql: '?', params: [after] }]);
    const edited = before + now + after;
    // A new revision with the new text: a reader that knows the old text by its revision must not serve it again.
    const revision = newRevision();
    const assignments = {
      [RECORD_COLUMN]: k.raw(`REPLACE(??, ${old.sql}, ?)`, [RECORD_COLUMN, ...old.params as string[], edited]), [column]: now, [REVISION_COLUMN]: revision,
    };
    for (const batch of batchesOf(values, KEYS_PER_STATEMENT)) {
      const q = this.byParent('restamp', field, batch, belongs, () => k(this.table.name).update(assignments), [...old.params, edited, now, revision]);
      await ex.run(q.sql, q.params);
    }
  }

  /**
   * A statement on the records of parents: `start` (a select or an update, whose own values are `leading`) where
   * `field` holds one of `batch` and, with `belongs`, the discriminator names the parent's set or nothing.
   */
  private byParent(
    kind: string, field: string, batch: readonly (string | number)[], belongs: Belonging | undefined, start: () => Knex.QueryBuilder, leading: readonly unknown[] = [],
  ): Statement {
    const owner = belongs && this.columnOf(belongs.field);
    const column = this.columnOf(field);
    const params = [...leading, ...batch, ...(owner ? [belongs!.value] : [])];
    return this.byKeys.statement(shapeKey(kind, field, owner ?? '', batch.length), params, () => {
      const q = start().whereIn(column, batch);
      return owner ? whereBelongs(q, owner, belongs!.value) : q;
    });
  }

  /** Removes records by key (and their collections' elements), in the caller's transaction. */
  async deleteByKeys(tx: Executor, keys: readonly (string | number)[]): Promise<void> {
    for (const batch of batchesOf(keys, KEYS_PER_STATEMENT)) {
      const q = this.byKeys.statement(shapeKey('delete', batch.length), batch, () => this.knex(this.table.name).whereIn(this.key, batch).del());
      await tx.run(q.sql, q.params);
    }
    await this.values.remove(tx, keys);
  }

  /** Inserts or replaces records by key, with their collections' elements, in the caller's transaction. */
  async upsert(tx: Executor, records: readonly EncodedRecord[]): Promise<void> {
    await this.upserts.insert(tx, records.map((r) => r.row));
    await this.values.write(tx, records);
  }

  private columnOf(field: string): string {
    const column = this.set.fieldsByName[field]?.column;
    if (!column) throw new Error(`${this.set.name}.${field} has no column to find records by`);
    return column;
  }

  /**
   * A read, refused when it carries more values than the database binds: long in (…) lists cost one parameter
   * (value-list.ts), but a filter may still chain more comparisons than that (at FILTER_MAX_LENGTH, tens of thousands).
   * `scanned`: the fields that make the statement a scan (scans.ts).
   */
  private readonly reader = (q: Statement, scanned?: readonly string[]) => this.read(q, scanned);

  private read(q: Statement, scanned: readonly string[] = []) {
    const limit = this.db.dialect.maxParams;
    if (q.params.length > limit) return Promise.reject(Errors.FilterTooComplex(q.params.length, limit));
    if (scanned.length === 0) return this.db.all(q.sql, q.params);
    // A filter or order on fields without an index, or a lambda: a scan, bounded (Database.scan); past it, the spec's 501.
    return this.db.scan(q.sql, q.params).catch((e: unknown) => {
      throw e instanceof ScanTimedOut ? Errors.ScanLimitExceeded(scanned, this.set.name, e.ms) : e;
    });
  }
}
