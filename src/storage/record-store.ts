/**
 * Reads and writes the records of one entity set. Reads take bound objects (record-queries.ts compiles
 * them); every statement runs as a prepared statement through the driver.
 */
import { Errors } from '../errors/catalogue';
import type { EntitySetSpec, LookupSpec, TableSpec } from '../model/service-model';
import { RECORD_COLUMN } from '../model/service-model';
import type { BoundPredicate } from '../query/bound';
import { Projection, WHOLE_RECORD } from '../query/projection';
import type { Database, Executor } from './database';
import { EncodedRecord, recordEncoder, RecordEncoder } from './record-codec';
import { countQuery, keyQuery, pageQuery, PARENT, RecordQuery, relatedQuery, RelatedQuery } from './record-queries';
import { param, Sql, sql } from './sql';
import { ValueTableWriter } from './value-tables';

export type { RecordQuery, RelatedQuery } from './record-queries';

export interface RecordPage {
  /** The records' JSON texts, in order. */
  readonly records: string[];
  /** Sort values of each record (for the keyset position of the last one). */
  readonly sortValues: unknown[][];
}

/** Keys per IN (…) list. */
const READ_BATCH = 200;

/** Rows per multi-row INSERT: large enough to amortise round trips, within the dialect's placeholder limit. */
const WRITE_BATCH = 50;

export class RecordStore {
  readonly encode: RecordEncoder;
  private readonly key: string;
  private readonly columns: string[];
  private readonly byKeySql: string;
  private readonly writeBatch: number;
  private readonly values: ValueTableWriter;

  constructor(readonly db: Database, readonly set: EntitySetSpec, readonly table: TableSpec, lookups: readonly LookupSpec[]) {
    this.encode = recordEncoder(set, table, lookups);
    this.key = table.primaryKey;
    this.columns = table.columns.map((c) => c.name);
    this.byKeySql = keyQuery(db.statements, table.name, this.key, null, [RECORD_COLUMN]).sql;
    this.writeBatch = Math.max(1, Math.min(WRITE_BATCH, Math.floor(db.dialect.maxParams / this.columns.length)));
    this.values = new ValueTableWriter(db.statements, set);
  }

  /** One record's JSON text (projected when asked), or undefined; `scope` limits what may be seen. */
  async jsonByKey(key: string | number, projection: Projection = WHOLE_RECORD, scope?: BoundPredicate): Promise<string | undefined> {
    const rows = projection === WHOLE_RECORD && !scope
      ? await this.db.all(this.byKeySql, [key])
      : await this.read(keyQuery(this.db.statements, this.table.name, this.key, key, projection.columns, scope));
    return rows.length ? projection.json(rows[0]) : undefined;
  }

  async count(where?: BoundPredicate): Promise<number> {
    return Number((await this.read(countQuery(this.db.statements, this.table.name, where)))[0].n);
  }

  /** Records matching a bound filter after a keyset position, in a bound order, as JSON texts with their sort values. */
  async query(q: RecordQuery): Promise<RecordPage> {
    const rows = await this.read(pageQuery(this.db.statements, this.table.name, q));
    const orderColumns = q.orderBy.map((o) => o.column);
    return {
      records: rows.map(q.projection.json),
      sortValues: rows.map((r) => orderColumns.map((c) => r[c] ?? null)),
    };
  }

  /**
   * Records related to many parents at once (one query per expansion per page, never one per parent),
   * grouped by the parent key in `foreignKey`. With `perParent`, each parent gets at most that many.
   */
  async related(q: RelatedQuery): Promise<Map<unknown, string[]>> {
    const out = new Map<unknown, string[]>();
    if (q.keys.length === 0) return out;
    // Key lists are padded to a power of two (repeating the last key) so a few statement shapes serve every page.
    const size = 2 ** Math.ceil(Math.log2(q.keys.length));
    const keys = [...q.keys, ...Array(size - q.keys.length).fill(q.keys[q.keys.length - 1])];
    for (const row of await this.read(relatedQuery(this.db.statements, this.table.name, { ...q, keys }))) {
      const list = out.get(row[PARENT]) ?? out.set(row[PARENT], []).get(row[PARENT])!;
      list.push(q.projection.json(row));
    }
    return out;
  }

  /** Every stored record, parsed; only for sets bounded by the dictionary (reference data), never by data. */
  async all(): Promise<Record<string, unknown>[]> {
    const rows = await this.read(this.db.statements.select({ from: this.table.name, columns: [RECORD_COLUMN] }));
    return rows.map((row) => JSON.parse(row[RECORD_COLUMN] as string) as Record<string, unknown>);
  }

  /** Stored records by key, parsed, read through `ex` (a transaction sees its own writes). */
  async recordsByKeys(ex: Executor, keys: readonly (string | number)[]): Promise<Map<string | number, Record<string, unknown>>> {
    const out = new Map<string | number, Record<string, unknown>>();
    for (let i = 0; i < keys.length; i += READ_BATCH) {
      const q = this.db.statements.select({ from: this.table.name, columns: [RECORD_COLUMN], where: this.db.statements.in(this.key, keys.slice(i, i + READ_BATCH)) });
      for (const row of await ex.all(q.sql, q.params)) {
        const record = JSON.parse(row[RECORD_COLUMN] as string) as Record<string, unknown>;
        out.set(record[this.set.key] as string | number, record);
      }
    }
    return out;
  }

  /**
   * Stored records, parsed, whose `field` holds one of `values` and, when given, whose `belongs` field holds
   * its value or nothing (the join's discriminator), read through `ex`: the records that belong to parents.
   */
  async recordsByParent(
    ex: Executor, field: string, values: readonly (string | number)[], belongs?: { readonly field: string; readonly value: string },
  ): Promise<Record<string, unknown>[]> {
    const s = this.db.statements;
    const out: Record<string, unknown>[] = [];
    const owner = belongs && this.columnOf(belongs.field);
    const ownerMatches = owner ? sql`${s.eq(owner, belongs!.value)} OR ${s.id(owner)} IS NULL` : undefined;
    const column = this.columnOf(field);
    for (let i = 0; i < values.length; i += READ_BATCH) {
      const where = s.and([s.in(column, values.slice(i, i + READ_BATCH)), ownerMatches]);
      const q = s.select({ from: this.table.name, columns: [RECORD_COLUMN], where });
      for (const row of await ex.all(q.sql, q.params)) out.push(JSON.parse(row[RECORD_COLUMN] as string) as Record<string, unknown>);
    }
    return out;
  }

  /**
   * Moves the change timestamp of the records that belong to parents (as `recordsByParent` finds them) to
   * `now`, in its column and in the stored JSON text, without reading them. The text holds the member exactly
   * as `"<field>":"<old value>"` (the codec's JSON.stringify of a flat record; inside a string value those
   * quotes would be escaped), so replacing that text is replacing the value.
   */
  async restampByParent(
    ex: Executor, field: string, values: readonly (string | number)[], belongs: { readonly field: string; readonly value: string } | undefined, now: string,
  ): Promise<void> {
    const s = this.db.statements;
    const stamp = this.set.changeTimestamp;
    if (!stamp) throw new Error(`${this.set.name} has no change timestamp to move`);
    const [column, record] = [s.id(this.columnOf(stamp)), s.id(RECORD_COLUMN)];
    const member = `${JSON.stringify(stamp)}:`;
    const old = this.db.dialect.concat([param(`${member}"`), column, param('"')]);
    // The text first: MariaDB evaluates assignments left to right, each seeing the ones before it.
    const assignments = sql`${record} = REPLACE(${record}, ${old}, ${param(member + JSON.stringify(now))}), ${column} = ${param(now)}`;
    const owner = belongs && this.columnOf(belongs.field);
    const ownerMatches = owner ? sql`${s.eq(owner, belongs!.value)} OR ${s.id(owner)} IS NULL` : undefined;
    const parent = this.columnOf(field);
    for (let i = 0; i < values.length; i += READ_BATCH) {
      const q = sql`UPDATE ${s.id(this.table.name)} SET ${assignments} WHERE ${s.and([s.in(parent, values.slice(i, i + READ_BATCH)), ownerMatches])!}`;
      await ex.run(q.sql, q.params);
    }
  }

  /** Removes records by key (and their collections' elements), in the caller's transaction. */
  async deleteByKeys(tx: Executor, keys: readonly (string | number)[]): Promise<void> {
    for (let i = 0; i < keys.length; i += READ_BATCH) {
      const q = this.db.statements.delete(this.table.name, this.db.statements.in(this.key, keys.slice(i, i + READ_BATCH)));
      await tx.run(q.sql, q.params);
    }
    await this.values.remove(tx, keys);
  }

  /** Inserts or replaces records by key, with their collections' elements, in the caller's transaction. */
  async upsert(tx: Executor, records: readonly EncodedRecord[]): Promise<void> {
    const replace = { key: [this.key], replace: this.columns.filter((c) => c !== this.key) };
    for (let i = 0; i < records.length; i += this.writeBatch) {
      const rows = records.slice(i, i + this.writeBatch).map((r) => r.row);
      const q = this.db.statements.insert(this.table.name, this.columns, rows, replace);
      await tx.run(q.sql, q.params);
    }
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
   */
  private read(q: Sql) {
    const limit = this.db.dialect.maxParams;
    if (q.params.length > limit) return Promise.reject(Errors.FilterTooComplex(q.params.length, limit));
    return this.db.all(q.sql, q.params);
  }
}
