/**
 * Reads and writes the records of one entity set. Each statement's SQL is built once, here, by knex
 * for the connected dialect, and then runs as a prepared statement through the driver.
 */
import type { EntitySetSpec, LookupSpec, TableSpec } from '../model/service-model';
import type { BoundOrder } from '../query/bound';
import { Projection, WHOLE_RECORD } from '../query/projection';
import { quoteIdentifier, SqlFragment } from '../query/translate';
import { RECORD_COLUMN } from '../model/service-model';
import type { Knex } from 'knex';
import type { Database, Executor } from './database';
import { EncodedRecord, recordEncoder, RecordEncoder } from './record-codec';

/** How many distinct query shapes keep their SQL text; a shape is the filter's SQL, the order and the columns. */
const SHAPE_CACHE_SIZE = 500;

export interface RecordQuery {
  readonly where?: SqlFragment;
  /** Keyset position: only rows after the last one of the previous page. */
  readonly after?: SqlFragment;
  readonly orderBy: readonly BoundOrder[];
  readonly limit: number;
  readonly projection: Projection;
}

export interface RecordPage {
  /** The records' JSON texts, in order. */
  readonly records: string[];
  /** Sort values of each record (for the keyset position of the last one). */
  readonly sortValues: unknown[][];
}

export interface RelatedQuery {
  /** The related set's column holding the parent key. */
  readonly foreignKey: string;
  readonly keys: readonly unknown[];
  readonly where?: SqlFragment;
  readonly orderBy: readonly BoundOrder[];
  readonly projection: Projection;
  readonly perParent?: number;
}

const PARENT = '_parent';
const ROW = '_row';

/** Keys per IN (…) list. */
const READ_BATCH = 200;

/** Rows per multi-row INSERT: large enough to amortise round trips, small enough for any placeholder limit. */
const WRITE_BATCH = 50;

export class RecordStore {
  readonly encode: RecordEncoder;
  private readonly byKeySql: string;
  private readonly countSql: string;
  private readonly upsertSql = new Map<number, string>();
  private readonly shapes = new Map<string, string>();
  private readonly columns: string[];
  /** knex writes INSERT columns in sorted order; this maps that order back to positions in an encoded row. */
  private readonly insertOrder: number[];

  constructor(readonly db: Database, readonly set: EntitySetSpec, readonly table: TableSpec, lookups: readonly LookupSpec[]) {
    this.encode = recordEncoder(set, table, lookups);
    this.columns = table.columns.map((c) => c.name);
    const sorted = [...this.columns].sort();
    this.insertOrder = sorted.map((c) => this.columns.indexOf(c));
    const q = () => db.sql(table.name);
    this.byKeySql = q().select(RECORD_COLUMN).where(set.key, 0).toSQL().toNative().sql;
    this.countSql = q().count({ n: '*' }).toSQL().toNative().sql;
  }

  /** One record's JSON text (projected when asked), or undefined; `scope` limits what may be seen. */
  async jsonByKey(key: string | number, projection: Projection = WHOLE_RECORD, scope?: SqlFragment): Promise<string | undefined> {
    const sql = projection === WHOLE_RECORD && !scope ? this.byKeySql
      : this.shape(`key|${projection.columns.join(',')}|${scope?.sql ?? ''}`, () => {
        const b = this.db.sql(this.table.name).select([...projection.columns]).where(this.set.key, 0);
        return scope ? b.whereRaw(scope.sql, [...scope.params] as Knex.RawBinding[]) : b;
      });
    const rows = await this.db.all(sql, scope ? [key, ...scope.params] : [key]);
    return rows.length ? projection.json(rows[0]) : undefined;
  }

  async count(where?: SqlFragment): Promise<number> {
    if (!where) return Number((await this.db.all(this.countSql))[0].n);
    const sql = this.shape(`count|${where.sql}`, () => this.db.sql(this.table.name).count({ n: '*' }).whereRaw(where.sql, [...where.params] as Knex.RawBinding[]));
    return Number((await this.db.all(sql, where.params))[0].n);
  }

  /** Records matching a translated filter, in a bound order, as JSON texts with their sort values. */
  async query(q: RecordQuery): Promise<RecordPage> {
    const where = q.where && q.after
      ? { sql: `(${q.where.sql}) AND ${q.after.sql}`, params: [...q.where.params, ...q.after.params] }
      : q.where ?? q.after;
    const orderColumns = q.orderBy.map((o) => o.column);
    const columns = [...new Set([...q.projection.columns, ...orderColumns])];
    const order = q.orderBy.map((o) => `${o.column} ${o.direction}`).join(',');
    const sql = this.shape(`rows|${where?.sql ?? ''}|${order}|${columns.join(',')}`, () => {
      let b = this.db.sql(this.table.name).select(columns);
      if (where) b = b.whereRaw(where.sql, [...where.params] as Knex.RawBinding[]);
      return b.orderBy(q.orderBy.map((o) => ({ column: o.column, order: o.direction }))).limit(q.limit);
    });
    const rows = await this.db.all(sql, [...(where?.params ?? []), q.limit]);
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
    const fk = quoteIdentifier(q.foreignKey);
    const columns = [...new Set([...q.projection.columns])].map(quoteIdentifier);
    const order = q.orderBy.map((o) => `${quoteIdentifier(o.column)} ${o.direction === 'desc' ? 'DESC' : 'ASC'}`).join(', ');
    const where = `${fk} IN (${keys.map(() => '?').join(', ')})${q.where ? ` AND (${q.where.sql})` : ''}`;
    const table = quoteIdentifier(this.table.name);
    const select = `${fk} AS ${PARENT}, ${columns.join(', ')}`;
    const sql = q.perParent === undefined
      ? `SELECT ${select} FROM ${table} WHERE ${where} ORDER BY ${fk}, ${order}`
      : `SELECT * FROM (SELECT ${select}, ROW_NUMBER() OVER (PARTITION BY ${fk} ORDER BY ${order}) AS ${ROW} FROM ${table} WHERE ${where}) ranked`
        + ` WHERE ${ROW} <= ? ORDER BY ${PARENT}, ${ROW}`;
    const params = [...keys, ...(q.where?.params ?? []), ...(q.perParent === undefined ? [] : [q.perParent])];
    for (const row of await this.db.all(sql, params)) {
      const list = out.get(row[PARENT]) ?? out.set(row[PARENT], []).get(row[PARENT])!;
      list.push(q.projection.json(row));
    }
    return out;
  }

  /** SQL text per query shape, built by knex once; values stay parameters. */
  private shape(key: string, build: () => { toSQL(): { toNative(): { sql: string } } }): string {
    let sql = this.shapes.get(key);
    if (sql === undefined) {
      sql = build().toSQL().toNative().sql;
      if (this.shapes.size >= SHAPE_CACHE_SIZE) this.shapes.delete(this.shapes.keys().next().value as string);
      this.shapes.set(key, sql);
    }
    return sql;
  }

  /** Stored records by key, parsed, read through `ex` (a transaction sees its own writes). */
  async recordsByKeys(ex: Executor, keys: readonly (string | number)[]): Promise<Map<string | number, Record<string, unknown>>> {
    const out = new Map<string | number, Record<string, unknown>>();
    for (let i = 0; i < keys.length; i += READ_BATCH) {
      const batch = keys.slice(i, i + READ_BATCH);
      const sql = this.shape(`keys|${batch.length}`, () => this.db.sql(this.table.name).select(RECORD_COLUMN).whereIn(this.set.key, batch.map(() => 0)));
      for (const row of await ex.all(sql, batch)) {
        const record = JSON.parse(row[RECORD_COLUMN] as string) as Record<string, unknown>;
        out.set(record[this.set.key] as string | number, record);
      }
    }
    return out;
  }

  /** Removes records by key, in the caller's transaction. */
  async deleteByKeys(tx: Executor, keys: readonly (string | number)[]): Promise<void> {
    for (let i = 0; i < keys.length; i += READ_BATCH) {
      const batch = keys.slice(i, i + READ_BATCH);
      const sql = this.shape(`delete|${batch.length}`, () => this.db.sql(this.table.name).whereIn(this.set.key, batch.map(() => 0)).del());
      await tx.run(sql, batch);
    }
  }

  /** Inserts or replaces records by key, in the caller's transaction. */
  async upsert(tx: Executor, records: readonly EncodedRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += WRITE_BATCH) {
      const batch = records.slice(i, i + WRITE_BATCH);
      await tx.run(this.upsertStatement(batch.length), batch.flatMap((r) => this.insertOrder.map((i) => r.row[i])));
    }
  }

  private upsertStatement(rows: number): string {
    let sql = this.upsertSql.get(rows);
    if (!sql) {
      const placeholder = Object.fromEntries(this.columns.map((c) => [c, null]));
      sql = this.db.sql(this.table.name)
        .insert(Array.from({ length: rows }, () => placeholder))
        .onConflict(this.set.key)
        .merge(this.columns.filter((c) => c !== this.set.key))
        .toSQL().toNative().sql;
      const expected = [...this.columns].sort().map((c) => this.db.sql.ref(c).toQuery()).join(', ');
      if (!sql.includes(`(${expected})`)) throw new Error(`unexpected INSERT column order for ${this.table.name}: ${sql.slice(0, 200)}`);
      this.upsertSql.set(rows, sql);
    }
    return sql;
  }
}
