/**
 * $select. When every selected field has a column (the removed-listings check selects ListingKey), the
 * record is built from those columns alone; otherwise the stored record is read and cut down.
 */
import type { EntitySetSpec, FieldSpec } from '../model/service-model';
import { RECORD_COLUMN } from '../model/service-model';

/** A row as the database returns it. */
type Row = Readonly<Record<string, unknown>>;

export interface Projection {
  /** Columns to read. */
  readonly columns: readonly string[];
  /** The record's JSON text from a row. */
  readonly json: (row: Row) => string;
  /** `(A,B)` for the context URL, or '' for whole records. */
  readonly contextSuffix: string;
}

export const WHOLE_RECORD: Projection = {
  columns: [RECORD_COLUMN],
  json: (row) => row[RECORD_COLUMN] as string,
  contextSuffix: '',
};

/** `hidden`: fields this client may not see; whole records then lose them (the client's metadata lacks them too). */
export function projection(set: EntitySetSpec, selected: readonly FieldSpec[] | undefined, hidden?: ReadonlySet<string>): Projection {
  if (!selected && !hidden?.size) return WHOLE_RECORD;
  const contextSuffix = selected ? `(${selected.map((f) => f.name).join(',')})` : '';
  const select = selected ?? set.fields.filter((f) => !hidden!.has(f.name));
  if (!selected) return { ...cutDown(select), contextSuffix };
  // Selected fields are always present in the result, null when the record has no value.
  const empty = (f: FieldSpec) => (f.collection ? [] : null);
  if (select.every((f) => f.column && !f.collection)) {
    return {
      columns: select.map((f) => f.column!),
      json: (row) => JSON.stringify(Object.fromEntries(select.map((f) => [f.name, fromColumn(f, row[f.column!])]))),
      contextSuffix,
    };
  }
  return {
    columns: [RECORD_COLUMN],
    json: (row) => {
      const record = JSON.parse(row[RECORD_COLUMN] as string) as Record<string, unknown>;
      return JSON.stringify(Object.fromEntries(select.map((f) => [f.name, record[f.name] ?? empty(f)])));
    },
    contextSuffix,
  };
}

/** Whole records less some fields, which keep the stored form (absent when null). */
function cutDown(keep: readonly FieldSpec[]): Omit<Projection, 'contextSuffix'> {
  return {
    columns: [RECORD_COLUMN],
    json: (row) => {
      const record = JSON.parse(row[RECORD_COLUMN] as string) as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const f of keep) if (record[f.name] !== undefined) out[f.name] = record[f.name];
      return JSON.stringify(out);
    },
  };
}

/** Column values back to their JSON form (booleans are stored as 1/0). */
function fromColumn(f: FieldSpec, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (f.type === 'Edm.Boolean') return v === 1 || v === true || v === '1';
  if (f.type === 'Edm.Decimal' || f.type === 'Edm.Double' || f.type.startsWith('Edm.Int')) return Number(v);
  return v;
}
