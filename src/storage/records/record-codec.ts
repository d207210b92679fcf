/**
 * The stored record, said once: what storage keeps of a record, how a row becomes the text a response carries, and
 * which edits of the stored text are made in place. Every write of a record goes through the encoder; every read
 * through a reader (recordReader); nothing else parses or edits the text.
 *
 * What is stored: a row per record, with its indexed fields' values in their columns (booleans as 1/0) and the
 * record in the record column (RECORD_COLUMN) as the exact JSON text a response carries: JSON.stringify of a flat
 * object with every declared field in dictionary order, null ones as null, values normalised (RESO formats). Flat:
 * each value is null, a string, a number, a boolean, or an array of strings or of numbers, never an object; field
 * names are identifiers (letters, digits, underscores). Validation happens here, once, at write time; reads never
 * rebuild a record field by field.
 *
 * Facts about that text the in-place edits rely on (each follows from JSON.stringify of such an object):
 *  1. An unescaped `"` always delimits a string (quotes inside strings are escaped as `\"`), and a string directly
 *     followed by `:` is a member's name.
 *  2. Members are `"<name>":<value>`, separated by `,` alone: no white space anywhere outside strings.
 *  3. A DateTimeOffset's text needs no escape: its member is `"<name>":"<value>"`, the value as its column holds it.
 *
 * What may be edited in place, and why it is safe:
 *  - A change timestamp (timestampEdit), by the database without reading the record (record-store.ts,
 *    restampByParent): the text `"<name>":"<the column's value>"` is replaced. By 1 and 3 it occurs exactly once,
 *    as that member (a string value holding it would have its quotes escaped).
 *  - Null members removed (withoutNulls, `omit-values=nulls`): `,"<name>":null` before `,` or `}`, and a first member
 *    `{"<name>":null`. By 1 the quotes are a string's, followed by `:`, so a name; except where one string ends and
 *    the next begins within an array: an element ending in `,` before one beginning `:null,` or `:null}`. Such a text
 *    holds `",":null` (names never begin with `:`), and is parsed and written again instead.
 *  - Int64 and Decimal values as strings (numbersAsStrings, `IEEE754Compatible=true`): `"<name>":<number>` or
 *    `"<name>":[<numbers>]` for those fields' names. By 1 the name matched is a member's name, and these fields'
 *    values are numbers or arrays of numbers (no `]` inside), or null (left as it is).
 * Anything else (a projection, full metadata) parses the text and writes it again.
 */
import type { EntitySetSpec, FieldSpec, LookupSpec, TableSpec } from '../../model/service-model';
import { randomInt } from 'node:crypto';
import { RECORD_COLUMN, REVISION_COLUMN } from '../../model/service-model';
import { isDate, normaliseTimestamp } from '../../model/edm-values';
import { FACET_WORDS, FieldFacets, lookupValueSets, setFacets } from '../../model/field-facets';
import type { Projection } from '../../query/projection';

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
  /** Values of the table's columns in table order: a new revision (REVISION_COLUMN) and the record column last. */
  readonly row: readonly unknown[];
}

/** Revisions are drawn at random below this (2^48: exact as a JS number and in a BIGINT). */
const REVISION_BOUND = 2 ** 48;

/**
 * A new revision for a row whose record is written. Drawn at random, not counted: writers in several processes
 * and on several cluster nodes need no shared counter, and what a reader relies on (record-cache.ts) is only that
 * a row's new revision differs from the one it held, which a draw of 48 bits misses once in 2.8 × 10^14 writes.
 */
export function newRevision(): number {
  return randomInt(1, REVISION_BOUND);
}

/** Encodes `input`, with the fields of `over` (when given) in place of its own: a record and its changes, not copied into one. */
export type RecordEncoder = (input: Readonly<Record<string, unknown>>, over?: Readonly<Record<string, unknown>>) => EncodedRecord;

export function recordEncoder(set: EntitySetSpec, table: TableSpec, lookups: readonly LookupSpec[]): RecordEncoder {
  const normalisers = new Map(setFacets(set.fields, table, lookupValueSets(lookups)).map((f) => [f.name, normaliser(f)]));
  const stored = table.columns.map((c) => c.name).slice(-2);
  const revised = stored[0] === REVISION_COLUMN;
  if (stored[1] !== RECORD_COLUMN) throw new Error(`${table.name}: the record column must be the table's last`);
  const columns = table.columns.filter((c) => c.name !== RECORD_COLUMN && c.name !== REVISION_COLUMN).map((c) => {
    const field = set.fields.find((f) => f.column === c.name);
    if (!field) throw new Error(`${table.name}.${c.name}: no field stores into this column`);
    return field;
  });

  // Each field with its normaliser and its member's name as the text opens it, in dictionary order: made once, not
  // once per record (ingest's hot loop).
  const plan = set.fields.map((f, i) => ({ f, normalise: normalisers.get(f.name)!, member: `${i ? ',' : '{'}${JSON.stringify(f.name)}:` }));

  return (input, over) => {
    for (const name in input) {
      if (!normalisers.has(name) && !name.startsWith('@')) throw new RecordError(name, `is not a field of ${set.name}`);
    }
    for (const name in over) if (!normalisers.has(name)) throw new RecordError(name, `is not a field of ${set.name}`);
    const value: Record<string, unknown> = {};
    // Every field is in the stored text, a null one as null (JSON Format 4.01: a full entity carries every
    // property), so the default response is the stored text as it is. Written member by member, as
    // JSON.stringify of the object of every field would write it, without making that object.
    let json = '';
    for (const { f, normalise, member } of plan) {
      const v = normalise(over !== undefined && f.name in over ? over[f.name] : input[f.name]);
      if (v === null) {
        if (!f.nullable) throw new RecordError(f.name, 'is required');
        json += `${member}null`;
        continue;
      }
      json += member + JSON.stringify(v);
      value[f.name] = v;
    }
    json += plan.length ? '}' : '{}';
    const row = columns.map((f) => toColumn(f, value[f.name]));
    if (revised) row.push(newRevision());
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

function normaliser(f: FieldFacets): Normaliser {
  const scalar = scalarNormaliser(f);
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

/** Checks and normalises a value by the field's facets as the dictionary declares them. */
function scalarNormaliser(f: FieldFacets): Normaliser {
  const { maxLength, scale, limit } = f.declared;
  const wrongType = () => new RecordError(f.name, FACET_WORDS.type(f.type));
  switch (f.type) {
    case 'Edm.String':
    case 'Edm.Guid':
    case 'Edm.TimeOfDay':
      return (v) => {
        if (typeof v !== 'string') throw wrongType();
        if (maxLength !== undefined && v.length > maxLength) throw new RecordError(f.name, FACET_WORDS.maxLength(maxLength));
        if (f.elementLength !== undefined && v.length > f.elementLength) throw new RecordError(f.name, FACET_WORDS.elementLength(f.elementLength));
        if (f.allowed && !f.allowed.has(v)) throw new RecordError(f.name, FACET_WORDS.lookup(`"${v}"`, f.lookupName));
        return v;
      };
    case 'Edm.Boolean':
      return (v) => {
        if (typeof v !== 'boolean') throw wrongType();
        return v;
      };
    case 'Edm.Int16':
    case 'Edm.Int32':
    case 'Edm.Int64':
      return (v) => {
        const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
        if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw wrongType();
        // Ingest's schema checks the range first; a dictionary's change (Int64 to Int16) meets it here.
        const [min, max] = f.range!;
        if (n < min || n > max) throw new RecordError(f.name, `must be from ${min} to ${max} (${f.type})`);
        return n;
      };
    case 'Edm.Decimal':
    case 'Edm.Double':
      return (v) => {
        const n = typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
        if (typeof n !== 'number' || !Number.isFinite(n)) throw wrongType();
        if (f.type === 'Edm.Double') return n;
        const rounded = Number(n.toFixed(scale));
        if (Math.abs(rounded) >= limit) throw new RecordError(f.name, FACET_WORDS.precision(f.declared));
        return rounded;
      };
    case 'Edm.Date':
      return (v) => {
        if (typeof v !== 'string' || !isDate(v)) throw wrongType();
        return v;
      };
    case 'Edm.DateTimeOffset':
      return (v) => {
        const ts = typeof v === 'string' ? normaliseTimestamp(v) : undefined;
        if (ts === undefined) throw wrongType();
        return ts;
      };
  }
}

/** A row as the database returns it. */
type Row = Readonly<Record<string, unknown>>;

/** How the rows of a read become records' texts: the columns to read, and the text from a row. */
export interface RecordReader {
  readonly columns: readonly string[];
  readonly json: (row: Row) => string;
  /** The record's values by field, as `json` writes them (for the service's own reading of many records). */
  readonly values: (row: Row) => Record<string, unknown>;
}

/** Whole records: the stored text as it is. */
const WHOLE: RecordReader = {
  columns: [RECORD_COLUMN], json: (row) => row[RECORD_COLUMN] as string, values: (row) => JSON.parse(row[RECORD_COLUMN] as string) as Record<string, unknown>,
};
const readers = new WeakMap<Projection, RecordReader>();

/**
 * The reader of a projection (query/projection.ts): the stored text; the selected fields, from their columns when
 * each has one and is no collection (the removed-listings check selects ListingKey), else cut from the stored text,
 * every selected field present (null or [] when the record has no value); or the stored text less hidden fields.
 */
export function recordReader(p: Projection): RecordReader {
  if (p.kind === 'whole') return WHOLE;
  let reader = readers.get(p);
  if (!reader) readers.set(p, (reader = p.kind === 'selected' ? selectedFields(p.fields) : withoutFields(p.fields)));
  return reader;
}

function selectedFields(select: readonly FieldSpec[]): RecordReader {
  if (select.every((f) => f.column && !f.collection)) {
    const values = (row: Row) => Object.fromEntries(select.map((f) => [f.name, fromColumn(f, row[f.column!])]));
    return { columns: select.map((f) => f.column!), json: (row) => JSON.stringify(values(row)), values };
  }
  const empty = (f: FieldSpec) => (f.collection ? [] : null);
  const values = (row: Row) => {
    const record = JSON.parse(row[RECORD_COLUMN] as string) as Record<string, unknown>;
    return Object.fromEntries(select.map((f) => [f.name, record[f.name] ?? empty(f)]));
  };
  return { columns: [RECORD_COLUMN], json: (row) => JSON.stringify(values(row)), values };
}

/** Whole records less some fields: the `keep` ones, in the stored form. */
function withoutFields(keep: readonly FieldSpec[]): RecordReader {
  const values = (row: Row) => {
    const record = JSON.parse(row[RECORD_COLUMN] as string) as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const f of keep) if (record[f.name] !== undefined) out[f.name] = record[f.name];
    return out;
  };
  return { columns: [RECORD_COLUMN], json: (row) => JSON.stringify(values(row)), values };
}

/** A column's value back to its JSON form (booleans are stored as 1/0). */
function fromColumn(f: FieldSpec, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (f.type === 'Edm.Boolean') return v === 1 || v === true || v === '1';
  if (f.type === 'Edm.Decimal' || f.type === 'Edm.Double' || f.type.startsWith('Edm.Int')) return Number(v);
  return v;
}

/** A stored text parsed (every read that needs the values rather than the text). */
export function parseRecord(json: string): Record<string, unknown> {
  return JSON.parse(json) as Record<string, unknown>;
}

/**
 * The in-place edit of a change timestamp `field` of `set` (fact 3): its member's text is `before`, the column's
 * value, `after`; the edit puts the new value between them.
 */
export function timestampEdit(set: EntitySetSpec, field: string): { readonly column: string; readonly before: string; readonly after: string } {
  const f = set.fieldsByName[field];
  if (f?.type !== 'Edm.DateTimeOffset' || f.collection || !f.column) throw new Error(`${set.name}.${field} is no timestamp kept in a column of its own`);
  return { column: f.column, before: `${JSON.stringify(field)}:"`, after: '"' };
}

/** The text without its null members (see above for why the fast path is safe, and when it is not taken). */
export function withoutNulls(json: string): string {
  if (json.includes('",":null')) return JSON.stringify(Object.fromEntries(Object.entries(parseRecord(json)).filter(([, v]) => v !== null)));
  return json.replace(/,"[^"\\]+":null(?=[,}])/g, '').replace(/^\{"[^"\\]+":null(?:,|(?=\}))/, '{');
}

/** An edit of texts that writes the numbers of the fields named (Int64 and Decimal ones) as strings, single or in arrays. */
export function numbersAsStrings(names: readonly string[]): (json: string) => string {
  if (names.length === 0) return (json) => json;
  const member = new RegExp(`"(${names.join('|')})":(\\[[^\\]]*\\]|-?[0-9][0-9.eE+-]*)`, 'g');
  const quoted = (_m: string, name: string, value: string) =>
    `"${name}":${value.startsWith('[') ? value.replace(/-?[0-9][0-9.eE+-]*/g, (n) => `"${n}"`) : `"${value}"`}`;
  return (json) => json.replace(member, quoted);
}
