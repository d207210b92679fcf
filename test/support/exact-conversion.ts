/**
 * docs/dictionary.md "Changing the dictionary", as a consumer of it reads it: which stored values a field's new type, facets or
 * lookup takes exactly, and so which records a start refuses (exit code 6), worked out from the records a client
 * was served before the change, independently of the server's own conversion. A value converts when nothing is
 * rounded, cut or guessed: "10522" → 10522, 2 → 2.0, 3 → "3", one value → a one-element collection, a
 * one-element collection → its value; not "12A" → an integer, 2.5 → an integer, a date → a date-time, a string
 * longer than the new MaxLength, a value the lookup no longer has, a number outside the type's range or the
 * decimal's Precision.
 */
import { isDate, normaliseTimestamp } from '../../src/model/edm-values';
import type { FieldSpec } from '../../src/model/service-model';
import { DeclaredField, scalarProblem } from './declared-fields';

/** A field as a dictionary declares it. */
export type FieldShape = Pick<FieldSpec, 'type' | 'collection' | 'maxLength' | 'precision' | 'scale' | 'lookupName'>;

const INTEGER = /^-?(0|[1-9]\d*)$/;
const DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/** The value `v` (one element) takes in a field of type `to`, exactly; undefined when it cannot. */
function converted(v: unknown, to: FieldShape): unknown {
  switch (to.type) {
    case 'Edm.Int16': case 'Edm.Int32': case 'Edm.Int64':
      return typeof v === 'number' ? v : typeof v === 'string' && INTEGER.test(v) ? Number(v) : undefined;
    case 'Edm.Decimal': case 'Edm.Double':
      return typeof v === 'number' ? v : typeof v === 'string' && DECIMAL.test(v) ? Number(v) : undefined;
    case 'Edm.String':
      return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
    case 'Edm.Date':
      return typeof v === 'string' && isDate(v) ? v : undefined;
    case 'Edm.DateTimeOffset':
      return typeof v === 'string' && !isDate(v) ? normaliseTimestamp(v) : undefined;
    default:
      return v;
  }
}

/**
 * Why a stored value (of a single field or a collection) cannot take the field's new shape, or undefined when it
 * converts exactly. `lookups` holds the values of closed lookups after the change.
 */
export function conversionProblem(v: unknown, to: FieldShape, lookups: ReadonlyMap<string, ReadonlySet<string>>): string | undefined {
  if (v === null || v === undefined) return undefined;
  const items = Array.isArray(v) ? v : [v];
  if (!to.collection && items.length > 1) return `${JSON.stringify(v)}: ${items.length} values for a single-valued field`;
  const field: DeclaredField = { name: '', nullable: true, ...to };
  for (const item of items) {
    const x = converted(item, to);
    if (x === undefined) return `${JSON.stringify(item)} is not a ${to.type}`;
    const problem = scalarProblem(field, x, lookups);
    if (problem) return problem;
  }
  return undefined;
}
