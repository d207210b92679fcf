/**
 * A stored record brought to the dictionary the server now runs, for a migration. Values are converted only
 * where the conversion is exact (the string "10522" to the integer 10522, 2 to 2.0, one value to a one-element
 * collection); a value that would be cut, rounded or guessed (2.5 to an integer, "12A" to a number, a string
 * longer than the new MaxLength, a value the lookup no longer has, null in a field now required) is refused,
 * and the whole migration with it, naming the record: no value ever changes without a word.
 * A field the dictionary dropped leaves the record; a new field is null in it.
 */
import type { EntitySetSpec, FieldSpec } from '../../model/service-model';
import { EncodedRecord, RecordEncoder, RecordError } from '../records/record-codec';

export interface ConvertedRecord {
  readonly encoded: EncodedRecord;
  /**
   * What the record serves changed: a value converted to another JSON value, or a dropped field that held one.
   * Gaining a null field (or an empty collection) is not a change: a consumer reading the new $metadata knows it.
   */
  readonly changed: boolean;
}

/** A record that cannot take the dictionary's change, with every reason. */
export class RecordRefused extends Error {
  constructor(readonly key: unknown, readonly problems: readonly string[]) {
    super(`${String(key)}: ${problems.join('; ')}`);
  }
}

export type RecordConverter = (stored: Readonly<Record<string, unknown>>) => ConvertedRecord;

export function recordConverter(set: EntitySetSpec, encode: RecordEncoder): RecordConverter {
  const fields = new Set(set.fields.map((f) => f.name));
  return (stored) => {
    const problems: string[] = [];
    const refused = new Set<string>();
    const input: Record<string, unknown> = {};
    for (const f of set.fields) {
      try {
        input[f.name] = convertValue(stored[f.name], f);
      } catch (e) {
        if (!(e instanceof RecordError)) throw e;
        problems.push(e.message);
        refused.add(f.name);
      }
    }
    const encoded = encodeNamingAll(encode, input, refused, problems);
    const rounded = set.fields.filter((f) => encoded && !refused.has(f.name) && typeof input[f.name] === 'number' && encoded.value[f.name] !== input[f.name]);
    problems.push(...rounded.map((f) => `${f.name}: ${String(input[f.name])} does not fit Scale ${f.scale ?? 0} without rounding`));
    if (problems.length || !encoded) throw new RecordRefused(stored[set.key], problems);
    const dropped = Object.keys(stored).some((name) => !fields.has(name) && !isEmpty(stored[name]));
    return { encoded, changed: dropped || set.fields.some((f) => !sameValue(stored[f.name], encoded.value[f.name])) };
  };
}

/**
 * The record encoded without the fields already `refused`. The encoder stops at the first field it refuses: that
 * one is named (with its value) and set aside too, and the rest encoded again, so that a refusal names every field
 * of the record that cannot take the change, not only the first. Undefined when the rest could not be encoded.
 */
function encodeNamingAll(encode: RecordEncoder, converted: Readonly<Record<string, unknown>>, refused: Set<string>, problems: string[]): EncodedRecord | undefined {
  const input = { ...converted };
  for (const field of refused) input[field] = null;
  for (;;) {
    try {
      return encode(input);
    } catch (e) {
      if (!(e instanceof RecordError)) throw e;
      // A field set aside that may not be null says so again: its own reason is named already.
      if (e.field !== undefined && refused.has(e.field)) return undefined;
      problems.push(withValue(e, input));
      if (e.field === undefined) return undefined;
      refused.add(e.field);
      input[e.field] = null;
    }
  }
}

/**
 * The encoder's reason, naming the value it refused where its words do not (`is longer than MaxLength 5`, `does not
 * fit Precision 4, Scale 2`, `must be an ISO 8601 date-time …`): a refusal names each record's fields and values.
 */
function withValue(e: RecordError, input: Readonly<Record<string, unknown>>): string {
  if (e.field === undefined || !/^(is|does|must|holds) /.test(e.detail)) return e.message;
  return `${e.field}: ${JSON.stringify(input[e.field])} ${e.detail}`;
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (isEmpty(a) || isEmpty(b)) return isEmpty(a) && isEmpty(b);
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A stored value in the field's present type, exactly, or a RecordError saying why not. */
function convertValue(v: unknown, f: FieldSpec): unknown {
  if (v === undefined || v === null) return null;
  if (f.collection) {
    const items = Array.isArray(v) ? v : [v];
    return items.map((x) => convertScalar(x, f));
  }
  if (!Array.isArray(v)) return convertScalar(v, f);
  if (v.length === 0) return null;
  if (v.length === 1) return convertScalar(v[0], f);
  throw new RecordError(f.name, `${JSON.stringify(v)} holds ${v.length} values, and a single-valued field takes one`);
}

function convertScalar(v: unknown, f: FieldSpec): unknown {
  const refuse = (what: string) => new RecordError(f.name, `${JSON.stringify(v)} ${what}`);
  switch (f.type) {
    case 'Edm.Int16': case 'Edm.Int32': case 'Edm.Int64': {
      const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
      if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw refuse('is not an integer');
      return n;
    }
    case 'Edm.Decimal': case 'Edm.Double': {
      const n = typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
      if (typeof n !== 'number' || !Number.isFinite(n)) throw refuse('is not a number');
      return n;
    }
    case 'Edm.Boolean':
      if (typeof v !== 'boolean') throw refuse('is not true or false');
      return v;
    case 'Edm.String':
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      return v;
    default:
      // Dates, times, GUIDs: the codec checks the form (a date-time is never made from a date: its offset is unknown).
      return v;
  }
}
