/**
 * Every ingest line is checked against its set's generated record schema (generated/schemas/<Type>.json) with
 * Ajv, compiled once per set and reporting every error of a line, each at its JSON pointer in the words of the
 * field's facets (model/field-facets.ts), the record codec's too (`/ListPrice must be a number; /MlsStatus "Foo" is
 * not a value of lookup MlsStatus`).
 * The codec still normalises what passes (timestamps to UTC, decimals to their scale) and checks what a schema
 * cannot say (a date on the calendar, a decimal rounded past its precision).
 *
 * Ingest takes a record as the schema states it, but for the fields the service sets (ModificationTimestamp and
 * the timestamps related records move): their values are ignored, so they may be absent or anything. A deletion
 * line (`"@delete": true`) is checked for its key and mark only.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { FACET_WORDS, fieldFacets, type FieldFacets } from '../model/field-facets';
import { EntitySetSpec, RecordSchema, ServiceModel, serviceKeptFields } from '../model/service-model';

/** A line's marker for deletion: `{"ListingKey": "L1", "@delete": true}`. */
export const DELETE_MARK = '@delete';

export interface Problem {
  /** JSON pointer into the line's object: `/ListPrice`, `/Appliances/2`. */
  readonly pointer: string;
  readonly message: string;
}

/** A line's problems (none: it may be written), and whether it asks for a deletion. */
export type LineCheck = (input: Readonly<Record<string, unknown>>) => { readonly deletion: boolean; readonly problems: readonly Problem[] };

/** The problems of a line as one report entry. */
export function problemsText(problems: readonly Problem[]): string {
  return problems.map((p) => `${p.pointer} ${p.message}`).join('; ');
}

/** Made on first use: a server process loads this module with the command line, and never checks a line. */
let ajv: Ajv | undefined;

/** Checks records against `schema` as it stands (a stored or served record: the service's fields required). */
export function recordCheck(set: EntitySetSpec, schema: RecordSchema): (input: Readonly<Record<string, unknown>>) => readonly Problem[] {
  const validate = compiled(schema);
  return (input) => (validate(input) ? [] : problemsOf(validate.errors ?? [], set, input));
}

/** Compiled checks by the schema they check (a set of another model has a schema of its own). */
const lineChecks = new WeakMap<RecordSchema, LineCheck>();

/** The check of ingest lines of `set`, compiled on first use. */
export function lineCheck(model: ServiceModel, set: EntitySetSpec): LineCheck {
  const schema = model.recordSchemas[set.name];
  if (!schema) throw new Error(`the service model has no record schema for ${set.name}: run \`npm run generate\``);
  let check = lineChecks.get(schema);
  if (!check) {
    const record = compiled(ingestSchema(set, schema));
    const deletion = compiled(deletionSchema(set, schema));
    check = (input) => {
      const mark = input[DELETE_MARK];
      // Anything but false under the mark is a deletion to check: "true" (a string) is refused, not taken as a record.
      const deleting = mark !== undefined && mark !== false;
      const validate = deleting ? deletion : record;
      return { deletion: deleting, problems: validate(input) ? [] : problemsOf(validate.errors ?? [], set, input) };
    };
    lineChecks.set(schema, check);
  }
  return check;
}

const compiledSchemas = new WeakMap<object, ValidateFunction>();

function compiled(schema: object): ValidateFunction {
  let validate = compiledSchemas.get(schema);
  // Union types (a number or its digits) are what the schemas state on purpose; Ajv refuses anything else it does not know.
  ajv ??= new Ajv({ allErrors: true, allowUnionTypes: true, strict: true });
  if (!validate) compiledSchemas.set(schema, (validate = ajv.compile(schema)));
  return validate;
}

function ingestSchema(set: EntitySetSpec, schema: RecordSchema): object {
  const kept = new Set(serviceKeptFields(set));
  const properties = Object.fromEntries(Object.entries(schema.properties).map(([name, s]) => [name, kept.has(name) ? true : s]));
  return { ...schema, properties, required: schema.required.filter((name) => !kept.has(name)) };
}

function deletionSchema(set: EntitySetSpec, schema: RecordSchema): object {
  return {
    type: 'object',
    properties: { [set.key]: schema.properties[set.key], [DELETE_MARK]: { type: 'boolean' } },
    required: [set.key],
  };
}

/** One problem per pointer (a value of the wrong type fails its type and its lookup: the type says it). */
function problemsOf(errors: readonly ErrorObject[], set: EntitySetSpec, input: Readonly<Record<string, unknown>>): Problem[] {
  const byPointer = new Map<string, Problem>();
  for (const e of errors) {
    const p = problemOf(e, set, input);
    if (!byPointer.has(p.pointer)) byPointer.set(p.pointer, p);
  }
  return [...byPointer.values()];
}

function problemOf(e: ErrorObject, set: EntitySetSpec, input: Readonly<Record<string, unknown>>): Problem {
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required') return { pointer: `/${pointerPart(String(params.missingProperty))}`, message: 'is required' };
  if (e.keyword === 'additionalProperties') return { pointer: `/${pointerPart(String(params.additionalProperty))}`, message: `is not a field of ${set.name}` };
  const [name, index] = e.instancePath.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const field = set.fieldsByName[name];
  if (name === DELETE_MARK || !field) return { pointer: e.instancePath, message: name === DELETE_MARK ? 'must be true or false' : e.message ?? e.keyword };
  const whole = input[name];
  const value = index === undefined ? whole : (whole as unknown[])[Number(index)];
  return { pointer: e.instancePath, message: fieldMessage(e, fieldFacets(field), value, index !== undefined) };
}

function pointerPart(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The message for one error on a field's value (or, `element`, on one element of a collection). */
function fieldMessage(e: ErrorObject, f: FieldFacets, value: unknown, element: boolean): string {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'type':
      if (value === null) return element ? 'must not contain null' : 'is required';
      return f.collection && !element ? 'must be an array' : FACET_WORDS.type(f.type);
    case 'pattern':
      return FACET_WORDS.type(f.type);
    case 'enum':
      return FACET_WORDS.lookup(JSON.stringify(value), f.lookupName);
    case 'maxLength':
      if (element) return FACET_WORDS.elementLength(params.limit as number);
      return f.declared.maxLength !== undefined ? FACET_WORDS.maxLength(f.declared.maxLength) : `is longer than ${String(params.limit)} characters, the most its column holds`;
    case 'minimum':
    case 'maximum':
      return `must be ${String(params.comparison)} ${String(params.limit)} (${f.type})`;
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return f.declared.precision !== undefined
        ? FACET_WORDS.precision(f.declared)
        : `must be ${String(params.comparison)} ${String(params.limit)}, the most its column holds`;
    default:
      return e.message ?? e.keyword;
  }
}
