/**
 * Turns an incoming record into what storage keeps: the record as the exact JSON text a response carries
 * (every declared field, null ones as null, in dictionary order, RESO value formats) and the values of its indexed columns.
 * Validation happens here, once, at write time; reads never rebuild a record field by field.
 */
import type { EntitySetSpec, FieldSpec, LookupSpec, TableSpec } from '../model/service-model';
import { RECORD_COLUMN, VALUE_TABLE_TEXT_LENGTH } from '../model/service-model';
import { isDate, normaliseTimestamp } from '../model/edm-values';

export class RecordError extends Error {
  /** `detail` says what is wrong with the field's value: "is required". */
  constructor(readonly field: string | undefined, readonly detail: string) {
    super(field ? `${field}: ${detail}` : detail);
  }
}

export interface EncodedRecord {
  readonly key: string | number;
  /** The record's JSON text, as served. */
  readonly json: string;
  /** The record as a plain object (normalised values), for callers that compare or derive. */
  readonly value: Readonly<Record<string, unknown>>;
  /** Values of the table's columns in table order, the record column last. */
  readonly row: readonly unknown[];
}

export type RecordEncoder = (input: Readonly<Record<string, unknown>>) => EncodedRecord;

export function recordEncoder(set: EntitySetSpec, table: TableSpec, lookups: readonly LookupSpec[]): RecordEncoder {
  const allowed = new Map(lookups.map((l) => [l.name, new Set(l.values.map((v) => v.value))]));
  const normalisers = new Map(set.fields.map((f) => [f.name, normaliser(f, f.lookupName ? allowed.get(f.lookupName) : undefined)]));
  const columns = table.columns.filter((c) => c.name !== RECORD_COLUMN).map((c) => {
    const field = set.fields.find((f) => f.column === c.name);
    if (!field) throw new Error(`${table.name}.${c.name}: no field stores into this column`);
    return field;
  });

  return (input) => {
    for (const name of Object.keys(input)) {
      if (!normalisers.has(name) && !name.startsWith('@')) throw new RecordError(name, `is not a field of ${set.name}`);
    }
    const value: Record<string, unknown> = {};
    // Every field is in the stored text, a null one as null (JSON Format 4.01: a full entity carries every
    // property), so the default response is the stored text as it is.
    const served: Record<string, unknown> = {};
    for (const f of set.fields) {
      const v = normalisers.get(f.name)!(input[f.name]);
      served[f.name] = v;
      if (v === null) {
        if (!f.nullable) throw new RecordError(f.name, 'is required');
        continue;
      }
      value[f.name] = v;
    }
    const json = JSON.stringify(served);
    const row = columns.map((f) => toColumn(f, value[f.name]));
    row.push(json);
    return { key: value[set.key] as string | number, json, value, row };
  };
}

/** Booleans are stored as 1/0: better-sqlite3 binds no JS booleans, and both databases compare them as integers. */
function toColumn(f: FieldSpec, v: unknown): unknown {
  if (v === undefined) return null;
  if (f.type === 'Edm.Boolean') return v ? 1 : 0;
  return v;
}

type Normaliser = (v: unknown) => unknown;

function normaliser(f: FieldSpec, allowed: ReadonlySet<string> | undefined): Normaliser {
  const scalar = scalarNormaliser(f, allowed);
  if (!f.collection) return (v) => (v === undefined || v === null ? null : scalar(v));
  return (v) => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new RecordError(f.name, 'must be an array');
    return v.map((x) => {
      if (x === null || x === undefined) throw new RecordError(f.name, 'must not contain null');
      return scalar(x);
    });
  };
}

function scalarNormaliser(f: FieldSpec, allowed: ReadonlySet<string> | undefined): Normaliser {
  switch (f.type) {
    case 'Edm.String':
    case 'Edm.Guid':
    case 'Edm.TimeOfDay':
      return (v) => {
        if (typeof v !== 'string') throw new RecordError(f.name, 'must be a string');
        if (f.maxLength !== undefined && !f.collection && v.length > f.maxLength) {
          throw new RecordError(f.name, `is longer than MaxLength ${f.maxLength}`);
        }
        if (f.valueTable && v.length > VALUE_TABLE_TEXT_LENGTH) {
          throw new RecordError(f.name, `holds an element longer than ${VALUE_TABLE_TEXT_LENGTH} characters, the longest a filterable collection takes`);
        }
        if (allowed && !allowed.has(v)) throw new RecordError(f.name, `"${v}" is not a value of lookup ${f.lookupName}`);
        return v;
      };
    case 'Edm.Boolean':
      return (v) => {
        if (typeof v !== 'boolean') throw new RecordError(f.name, 'must be true or false');
        return v;
      };
    case 'Edm.Int16':
    case 'Edm.Int32':
    case 'Edm.Int64':
      return (v) => {
        const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
        if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new RecordError(f.name, 'must be an integer');
        return n;
      };
    case 'Edm.Decimal':
    case 'Edm.Double':
      return (v) => {
        const n = typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
        if (typeof n !== 'number' || !Number.isFinite(n)) throw new RecordError(f.name, 'must be a number');
        if (f.type === 'Edm.Double') return n;
        const scale = f.scale ?? 0;
        const rounded = Number(n.toFixed(scale));
        if (f.precision !== undefined && Math.abs(rounded) >= 10 ** (f.precision - scale)) {
          throw new RecordError(f.name, `does not fit Precision ${f.precision}, Scale ${scale}`);
        }
        return rounded;
      };
    case 'Edm.Date':
      return (v) => {
        if (typeof v !== 'string' || !isDate(v)) throw new RecordError(f.name, 'must be a date YYYY-MM-DD');
        return v;
      };
    case 'Edm.DateTimeOffset':
      return (v) => {
        const ts = typeof v === 'string' ? normaliseTimestamp(v) : undefined;
        if (ts === undefined) throw new RecordError(f.name, 'must be an ISO 8601 date-time with Z or an offset');
        return ts;
      };
  }
}
