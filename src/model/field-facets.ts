/**
 * A field's facets, read once from what the generator emits (the field's spec, the column storing it, its
 * lookup's values): its EDM type, whether a collection, the bounds the dictionary declares, the bounds its
 * storage sets where the dictionary declares none, and the values its lookup allows. The generated record schema
 * (codegen/emit-record-schemas.ts), the record encoder (storage/records/record-codec.ts), ingest's messages
 * (ingest/line-check.ts) and the demo's fitting (demo/field-fit.ts) read a field through it, and say what is wrong
 * with a value in its words (FACET_WORDS), so that what ingest checks, what the encoder takes and what the demo
 * makes agree.
 *
 * Two sets of bounds, as the users differ on purpose: the encoder holds a value to the dictionary's own facets
 * (`declared`); the record schema, and so ingest and the demo, to the column's too where the dictionary states
 * none (`stored`: a string without MaxLength is as long as its column takes, a decimal without Precision as
 * precise).
 */
import { INTEGER_RANGES } from './edm-values';
import { ColumnSpec, EdmPrimitive, FieldSpec, LookupSpec, VALUE_TABLE_TEXT_LENGTH } from './service-model';

/** How long a single string and how large a decimal may be. */
export interface ValueBounds {
  /** The longest a single string may be (undefined: any length). A collection's MaxLength bounds the list, not an element. */
  readonly maxLength?: number;
  readonly precision?: number;
  /** The scale a decimal is rounded to. */
  readonly scale: number;
  /** The magnitude a decimal stays below (exclusive), from its precision and scale; Infinity: no bound. */
  readonly limit: number;
}

export interface FieldFacets {
  readonly name: string;
  /** The element type of a collection. */
  readonly type: EdmPrimitive;
  readonly collection: boolean;
  readonly nullable: boolean;
  readonly lookupName?: string;
  /** The values a lookup field may hold; undefined when any string will do (no lookup, or an open one: its values not in the model). */
  readonly allowed?: ReadonlySet<string>;
  /** The longest element of a filterable collection: its elements are indexed (a value table's text column). */
  readonly elementLength?: number;
  /** An integer's range, its EDM type's. */
  readonly range?: readonly [number, number];
  /** As the dictionary states them. */
  readonly declared: ValueBounds;
  /** As the dictionary states them, else as the field's column does. */
  readonly stored: ValueBounds;
}

/** The values of each lookup of the model, by lookup name: what `allowed` is read from. */
export type LookupValueSets = ReadonlyMap<string, ReadonlySet<string>>;

export function lookupValueSets(lookups: readonly LookupSpec[]): LookupValueSets {
  return new Map(lookups.map((l) => [l.name, new Set(l.values.map((v) => v.value))]));
}

/** The facets of `field`, stored in `column` (if it has one), its lookup's values among `lookups`. */
export function fieldFacets(field: FieldSpec, column?: ColumnSpec, lookups?: LookupValueSets): FieldFacets {
  const declared = boundsOf(field, field.maxLength, field.precision, field.scale);
  return {
    name: field.name,
    type: field.type,
    collection: field.collection,
    nullable: field.nullable,
    lookupName: field.lookupName,
    allowed: field.lookupName === undefined ? undefined : lookups?.get(field.lookupName),
    elementLength: field.collection && field.valueTable ? VALUE_TABLE_TEXT_LENGTH : undefined,
    range: INTEGER_RANGES[field.type],
    declared,
    stored: column ? boundsOf(field, field.maxLength ?? column.length, field.precision ?? column.precision, field.scale ?? column.scale) : declared,
  };
}

/** The facets of each field of a set, in its order; `table` is the set's, for its columns. */
export function setFacets(fields: readonly FieldSpec[], table: { readonly columns: readonly ColumnSpec[] } | undefined, lookups: LookupValueSets): FieldFacets[] {
  return fields.map((f) => fieldFacets(f, f.column === undefined ? undefined : table?.columns.find((c) => c.name === f.column), lookups));
}

function boundsOf(field: FieldSpec, maxLength: number | undefined, precision: number | undefined, scale = 0): ValueBounds {
  return {
    maxLength: field.collection ? undefined : maxLength,
    precision,
    scale,
    limit: field.type === 'Edm.Decimal' && precision !== undefined ? 10 ** (precision - scale) : Infinity,
  };
}

const TYPE_WORDS: Readonly<Record<EdmPrimitive, string>> = {
  'Edm.String': 'must be a string',
  'Edm.Guid': 'must be a string',
  'Edm.TimeOfDay': 'must be a string',
  'Edm.Boolean': 'must be true or false',
  'Edm.Int16': 'must be an integer',
  'Edm.Int32': 'must be an integer',
  'Edm.Int64': 'must be an integer',
  'Edm.Decimal': 'must be a number',
  'Edm.Double': 'must be a number',
  'Edm.Date': 'must be a date YYYY-MM-DD',
  'Edm.DateTimeOffset': 'must be an ISO 8601 date-time with Z or an offset',
};

/** What is wrong with a value that does not fit a facet, in the words the encoder and ingest both report. */
export const FACET_WORDS = {
  type: (type: EdmPrimitive) => TYPE_WORDS[type],
  maxLength: (maxLength: number) => `is longer than MaxLength ${maxLength}`,
  elementLength: (length: number) => `holds an element longer than ${length} characters, the longest a filterable collection takes`,
  /** `quoted`: the value as the caller quotes it. */
  lookup: (quoted: string, lookupName: string | undefined) => `${quoted} is not a value of lookup ${lookupName}`,
  precision: (b: ValueBounds) => `does not fit Precision ${b.precision}, Scale ${b.scale}`,
} as const;
