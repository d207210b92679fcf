/**
 * Keeps the value tables of a set's filterable collections (ValueTableSpec) equal to its stored records, in
 * the writer's transaction: a record's rows are replaced whenever the record is written, and removed with it.
 */
import type { EntitySetSpec, FieldSpec } from '../model/service-model';
import { VALUE_TABLE_KEY, VALUE_TABLE_VALUE } from '../model/service-model';
import type { Executor } from './database';
import type { EncodedRecord } from './record-codec';
import type { Statements } from './statements';

type Key = string | number;

/** Keys per DELETE … IN (…). */
const KEY_BATCH = 200;
const COLUMNS = [VALUE_TABLE_KEY, VALUE_TABLE_VALUE];
/** An element a record lists twice is one row. */
const KEEP_REPEATS = { key: COLUMNS, keep: true as const };

export class ValueTableWriter {
  private readonly fields: readonly FieldSpec[];
  private readonly rowsPerInsert: number;

  constructor(private readonly s: Statements, set: EntitySetSpec) {
    this.fields = set.fields.filter((f) => f.valueTable);
    this.rowsPerInsert = Math.max(1, Math.min(500, Math.floor(s.dialect.maxParams / COLUMNS.length)));
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
        const q = this.s.insert(f.valueTable!, COLUMNS, rows.slice(i, i + this.rowsPerInsert), KEEP_REPEATS);
        await tx.run(q.sql, q.params);
      }
    }
  }

  /** The elements of the records with these keys. */
  async remove(tx: Executor, keys: readonly Key[]): Promise<void> {
    for (const f of this.fields) {
      for (let i = 0; i < keys.length; i += KEY_BATCH) {
        const q = this.s.delete(f.valueTable!, this.s.in(VALUE_TABLE_KEY, keys.slice(i, i + KEY_BATCH)));
        await tx.run(q.sql, q.params);
      }
    }
  }
}
