/**
 * generated/schemas/<Type>.json: a JSON Schema (draft-07, which Ajv 8's default class implements) of each entity
 * type's records as the service takes them, which ingest validates every line against (src/ingest/line-check.ts)
 * and a feed's producer can check its files with. It states what the record codec accepts: integers and decimals
 * as JSON numbers or as strings of digits (OData's IEEE754Compatible form), timestamps with Z or an offset, null
 * for an absent value, a collection as an array (null for empty), instance annotations (`@…`) beside the fields,
 * and no other property. Bounds come from the dictionary (MaxLength, Precision and Scale, lookup values, the EDM
 * integer ranges) or, where it states none, from the column that stores the field. Dates and timestamps are
 * patterns (no `format`: that needs ajv-formats); the calendar itself (no 30 February) is the codec's check.
 */
import type { FieldSpec } from '../src/model/service-model';
import { fieldFacets } from '../src/model/field-facets';
import { serviceKeptFields } from '../src/model/service-model';
import type { BuiltModel } from './build-model';
import type { BuiltEntitySet } from './built-entity-set';
import type { EmittedFile } from './emitted-file';
import { closedLookup, columnOf } from './record-fields';
import type { EmitContext } from './typescript-source';

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
const DATE = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$';
const TIMESTAMP = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])[Tt]([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,12})?)?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)$';
const INTEGER_TEXT = '^-?\\d+$';
const NUMBER_TEXT = '^-?\\d+(\\.\\d+)?$';

type Schema = Record<string, unknown>;

export function emitRecordSchemas(model: BuiltModel, context: EmitContext): EmittedFile[] {
  const done = new Set<string>();
  return model.entitySets.flatMap((set) => {
    if (done.has(set.typeDef.name)) return [];
    done.add(set.typeDef.name);
    return [{ path: recordSchemaPath(set), text: `${jsonText(recordSchema(model, set, context.header), '')}\n` }];
  });
}

/** Where a set's schema is written, under the output folder. */
export function recordSchemaPath(set: BuiltEntitySet): string {
  return `schemas/${set.typeDef.name}.json`;
}

function recordSchema(model: BuiltModel, set: BuiltEntitySet, header: string): Schema {
  const kept = [...serviceKeptFields(set)];
  return {
    $schema: DRAFT_07,
    $comment: header,
    title: set.entityType,
    description: `A record of ${set.entityType}, as reso-server ingests and serves it. `
      + (kept.length ? `The service sets ${kept.join(', ')}: ingest ignores the values given.` : 'Every value is the record\'s own.'),
    type: 'object',
    properties: Object.fromEntries(set.fields.map((f) => [f.name, propertySchema(model, set, f)])),
    required: set.fields.filter((f) => !f.nullable && !f.collection).map((f) => f.name),
    patternProperties: { '^@': true },
    additionalProperties: false,
  };
}

/** JSON indented by two, with short lists of plain values (`"type": ["string", "null"]`) on one line. */
function jsonText(v: unknown, indent: string): string {
  if (Array.isArray(v)) {
    const flat = v.every((x) => x === null || typeof x !== 'object') ? `[${v.map((x) => JSON.stringify(x)).join(', ')}]` : undefined;
    if (flat !== undefined && flat.length <= 60) return flat;
    return `[\n${v.map((x) => `${indent}  ${jsonText(x, `${indent}  `)}`).join(',\n')}\n${indent}]`;
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([k, x]) => `${indent}  ${JSON.stringify(k)}: ${jsonText(x, `${indent}  `)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(v);
}

function propertySchema(model: BuiltModel, set: BuiltEntitySet, f: FieldSpec): Schema {
  const element = elementSchema(model, set, f);
  if (f.collection) return { type: ['array', 'null'], items: element };
  if (!f.nullable) return element;
  const { type, enum: values, ...rest } = element;
  return { type: [...(Array.isArray(type) ? type : [type]), 'null'], ...rest, ...(values ? { enum: [...(values as unknown[]), null] } : {}) };
}

function elementSchema(model: BuiltModel, set: BuiltEntitySet, f: FieldSpec): Schema {
  // The bounds as stored: the column's where the dictionary states none.
  const facets = fieldFacets(f, columnOf(model, set, f));
  switch (f.type) {
    case 'Edm.String':
    case 'Edm.Guid':
    case 'Edm.TimeOfDay': {
      // A collection's MaxLength bounds the list, not an element; a filterable one's elements are indexed.
      const maxLength = f.collection ? facets.elementLength : facets.stored.maxLength;
      // A declared lookup without values takes none; JSON Schema has no empty enum, so that is left to the codec.
      const values = closedLookup(model, f)?.values.map((v) => v.value) ?? [];
      return { type: 'string', ...(maxLength !== undefined ? { maxLength } : {}), ...(values.length ? { enum: values } : {}) };
    }
    case 'Edm.Boolean':
      return { type: 'boolean' };
    case 'Edm.Int16':
    case 'Edm.Int32':
    case 'Edm.Int64': {
      const [minimum, maximum] = facets.range!;
      return { type: ['integer', 'string'], pattern: INTEGER_TEXT, minimum, maximum };
    }
    case 'Edm.Decimal': {
      const { limit } = facets.stored;
      // A range, not multipleOf: more decimals than the scale are rounded to it, and a float multipleOf misjudges.
      return { type: ['number', 'string'], pattern: NUMBER_TEXT, ...(limit !== Infinity ? { exclusiveMinimum: -limit, exclusiveMaximum: limit } : {}) };
    }
    case 'Edm.Double':
      return { type: ['number', 'string'], pattern: NUMBER_TEXT };
    case 'Edm.Date':
      return { type: 'string', pattern: DATE };
    case 'Edm.DateTimeOffset':
      return { type: 'string', pattern: TIMESTAMP };
  }
}
