/**
 * Keeps the value tables of a set's filterable collections (ValueTableSpec) equal to its stored records, in
 * the writer's transaction: a record's rows are replaced whenever the record is written, and removed with it.
 */
import type { EntitySetSpec, FieldSpec } from '../../model/service-model';
import { VALUE_TABLE_KEY, VALUE_TABLE_VALUE } from '../../model/service-model';
import type { Database, Executor } from '../db/database';
import { type Knex, ShapeCache, shapeKey } from '../sql/query-builder';
import type { EncodedRecord } from './record-codec';
import { batchesOf, InsertBatches, KEYS_PER_STATEMENT } from '../sql/shapes';

type Key = string | number;

const COLUMNS = [VALUE_TABLE_KEY, VALUE_TABLE_VALUE];

export class ValueTableWriter {
  private readonly fields: readonly FieldSpec[];
  /**
   * Each field's inserts: an element a record lists twice is one row, a repeat changing nothing (a no-op merge,
   * where MariaDB's INSERT IGNORE would also turn other errors into warnings).
   */
  private readonly inserts: ReadonlyMap<string, InsertBatches>;
  private readonly deletes = new ShapeCache(64);

  constructor(private readonly db: Database, set: EntitySetSpec) {
    this.fields = set.fields.filter((f) => f.valueTable);
    const keepOne = (insert: Knex.QueryBuilder) => insert.onConflict(COLUMNS).merge([VALUE_TABLE_KEY]);
    this.inserts = new Map(this.fields.map((f) => [f.name, new InsertBatches(db, f.valueTable!, COLUMNS, keepOne)]));
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
      await this.inserts.get(f.name)!.insert(tx, rows);
    }
  }

  /** The elements of the records with these keys. */
  async remove(tx: Executor, keys: readonly Key[]): Promise<void> {
    for (const f of this.fields) {
      for (const batch of batchesOf(keys, KEYS_PER_STATEMENT)) {
        const q = this.deletes.statement(shapeKey('delete', f.valueTable!, batch.length), batch, () => this.db.knex(f.valueTable!).whereIn(VALUE_TABLE_KEY, batch).del());
        await tx.run(q.sql, q.params);
      }
    }
  }
}
