/**
 * Reads and writes the records of one entity set. Each statement's SQL is built once, here, by knex
 * for the connected dialect, and then runs as a prepared statement through the driver.
 */
import type { EntitySetSpec, LookupSpec, TableSpec } from '../model/service-model';
import { RECORD_COLUMN } from '../model/service-model';
import type { Database, Executor } from './database';
import { EncodedRecord, recordEncoder, RecordEncoder } from './record-codec';

/** Rows per multi-row INSERT: large enough to amortise round trips, small enough for any placeholder limit. */
const WRITE_BATCH = 50;

export class RecordStore {
  readonly encode: RecordEncoder;
  private readonly byKeySql: string;
  private readonly firstPageSql: string;
  private readonly countSql: string;
  private readonly upsertSql = new Map<number, string>();
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
    const order = set.defaultOrder.map((column) => ({ column, order: 'asc' as const }));
    this.firstPageSql = q().select(RECORD_COLUMN).orderBy(order).limit(1).toSQL().toNative().sql;
    this.countSql = q().count({ n: '*' }).toSQL().toNative().sql;
  }

  /** The stored JSON text of one record, or undefined. */
  async jsonByKey(key: string | number): Promise<string | undefined> {
    const rows = await this.db.all(this.byKeySql, [key]);
    return rows.length ? (rows[0][RECORD_COLUMN] as string) : undefined;
  }

  /** The first `limit` records in the set's default order, as JSON texts. */
  async firstPage(limit: number): Promise<string[]> {
    const rows = await this.db.all(this.firstPageSql, [limit]);
    return rows.map((r) => r[RECORD_COLUMN] as string);
  }

  async count(): Promise<number> {
    const rows = await this.db.all(this.countSql);
    return Number(rows[0].n);
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
