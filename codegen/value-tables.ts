/**
 * Filterable collection fields: each gets a value table (one row per record and element) beside its set's
 * table, so `any`/`all` lambdas and `has` are index seeks on both databases rather than scans of the
 * records' JSON. The stored record keeps the collection whole and stays the served value.
 */
import type { ColumnSpec, ValueTableSpec } from '../src/model/service-model';
import { VALUE_TABLE_KEY, VALUE_TABLE_TEXT_LENGTH, VALUE_TABLE_VALUE } from '../src/model/service-model';
import type { BuiltEntitySet } from './built-entity-set';
import { columnType, fitName } from './storage-columns';

/** The value tables of every filterable collection, naming each on its field (`valueTable`). */
export function valueTablesOf(sets: readonly BuiltEntitySet[]): ValueTableSpec[] {
  const out: ValueTableSpec[] = [];
  for (const set of sets) {
    const key = set.fields.find((f) => f.name === set.key)!;
    set.fields = set.fields.map((f) => {
      if (!f.collection || !f.filterable) return f;
      // The leading underscore keeps these apart from every entity set's table (dictionary names start with a letter).
      const name = fitName(`_values_${set.table}_${f.name}`);
      const columns: ColumnSpec[] = [
        sized({ name: VALUE_TABLE_KEY, type: columnType(key), nullable: false }, key.maxLength ?? 255),
        sized({ name: VALUE_TABLE_VALUE, type: columnType(f), nullable: false }, VALUE_TABLE_TEXT_LENGTH, f.precision, f.scale),
      ];
      out.push({
        name,
        table: set.table,
        field: f.name,
        columns,
        indexes: [{ name: fitName(`ix${name}`), columns: [VALUE_TABLE_VALUE, VALUE_TABLE_KEY] }],
      });
      return { ...f, valueTable: name };
    });
  }
  return out;
}

/** The column's facets as its type needs them: a length for text, precision and scale for decimals. */
function sized(c: ColumnSpec, length: number, precision?: number, scale?: number): ColumnSpec {
  if (c.type === 'string') return { ...c, length };
  return c.type === 'decimal' ? { ...c, precision: precision ?? 18, scale: scale ?? 0 } : c;
}
