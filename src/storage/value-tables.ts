/**
 * Keeps the value tables of a set's filterable collections (ValueTableSpec) equal to its stored records, in
 * the writer's transaction: a record's rows are replaced whenever the record is written, and removed with it.
 */
import type { EntitySetSpec, FieldSpec } from '../model/service-model';
import { VALUE_TABLE_KEY, VALUE_TABLE_VALUE } from '../model/service-model';
import type { Database, Executor } from './database';
import { ShapeCache, shapeKey } from './query-builder';
import type { EncodedRecord } from './record-codec';

type Key = string | number;

/** Keys per DELETE … IN (…). */
const KEY_BATCH = 200;
const COLUMNS = [VALUE_TABLE_KEY, VALUE_TABLE_VALUE];
/** knex binds an inserted row's values in its columns' sorted order, which COLUMNS is in. */
const SORTED = [...COLUMNS].sort().join() === COLUMNS.join();
/** Rows per INSERT; within SQLite's 500 terms of a compound SELECT, which knex writes a multi-row insert as. */
const ROWS_PER_INSERT = 500;

export class ValueTableWriter {
  private readonly fields: readonly FieldSpec[];
  private readonly rowsPerInsert: number;
  private readonly shapes = new ShapeCache(64);

  constructor(private readonly db: Database, set: EntitySetSpec) {
    this.fields = set.fields.filter((f) => f.valueTable);
    this.rowsPerInsert = Math.max(1, Math.min(ROWS_PER_INSERT, Math.floor(db.dialect.maxParams / COLUMNS.length)));
    if (!SORTED) throw new Error('value table columns must be listed in sorted order');
  }

  get active(): boolean {
    return this.fields.length > 0;
  }

  /** The records' elements, replacing what their keys held before. */
  async write(tx: Executor, records: readonly EncodedRecord[]): Promise<void> {
    if (!this.active) return;
    // The last write of a key is the record that stands.
    const byKey = new Map(records.map((r) => [r.key, r]));
    await this.remove(tx, [...byKey.keys()]);
    for (const f of this.fields) {
      const rows: unknown[][] = [];
      for (const r of byKey.values()) {
        for (const v of (r.value[f.name] as readonly unknown[] | undefined) ?? []) rows.push([r.key, typeof v === 'boolean' ? (v ? 1 : 0) : v]);
      }
      for (let i = 0; i < rows.length; i += this.rowsPerInsert) {
        const batch = rows.slice(i, i + this.rowsPerInsert);
        // An element a record lists twice is one row: a repeat changes nothing (a no-op merge, where MariaDB's
        // INSERT IGNORE would also turn other errors into warnings).
        const q = this.shapes.statement(shapeKey('insert', f.valueTable!, batch.length), batch.flat(), () => this.db.knex(f.valueTable!)
          .insert(batch.map(([key, value]) => ({ [VALUE_TABLE_KEY]: key, [VALUE_TABLE_VALUE]: value })))
          .onConflict(COLUMNS).merge([VALUE_TABLE_KEY]));
        await tx.run(q.sql, q.params);
      }
    }
  }

  /** The elements of the records with these keys. */
  async remove(tx: Executor, keys: readonly Key[]): Promise<void> {
    for (const f of this.fields) {
      for (let i = 0; i < keys.length; i += KEY_BATCH) {
        const batch = keys.slice(i, i + KEY_BATCH);
        const q = this.shapes.statement(shapeKey('delete', f.valueTable!, batch.length), batch, () => this.db.knex(f.valueTable!).whereIn(VALUE_TABLE_KEY, batch).del());
        await tx.run(q.sql, q.params);
      }
    }
  }
}
