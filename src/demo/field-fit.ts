/**
 * Values fitted to a field as the dictionary declares it: its type, MaxLength, precision and scale, lookup values, and
 * the bounds of its storage column where the dictionary states none (as the generated schema bounds it), so that
 * every demo record passes the store's encoder and its set's schema.
 *
 * A given value (what a rule of the demo's story says a field named so holds) must already be of the field's kind: a
 * string for text, a number for a number, a boolean for a flag, a Date for a date or timestamp, a value of the field's
 * own lookup. Anything else does not fit (NO_FIT): the rule does not apply, and the field is made as any other. A
 * generic value (made for the field from its type) is of the field's kind by construction and is only brought within
 * its bounds.
 */
import { ColumnSpec, EdmPrimitive, FieldSpec, VALUE_TABLE_TEXT_LENGTH } from '../model/service-model';

/** A given value that the field cannot hold as it is declared. */
export const NO_FIT: unique symbol = Symbol('does not fit');

/** A non-null given value → its stored form, or NO_FIT. */
export type GivenFit = (v: unknown) => unknown;
/** A generic value → its stored form, or undefined (null). */
export type GenericFit = (v: unknown) => unknown;

interface Bounds {
  /** Of a scalar string. */
  readonly maxLength?: number;
  /** Of a collection's string element (a filterable collection's elements are indexed). */
  readonly itemLength?: number;
  /** The largest magnitude a decimal may reach (exclusive), and its scale. */
  readonly limit: number;
  readonly scale: number;
  /** The values a lookup field may hold (undefined: any string). */
  readonly allowed?: ReadonlySet<string>;
}

const INTEGER_LIMITS: Partial<Record<EdmPrimitive, number>> = {
  'Edm.Int16': 32_767,
  'Edm.Int32': 2_147_483_647,
  'Edm.Int64': Number.MAX_SAFE_INTEGER,
};
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const TIME_OF_DAY = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,12})?)?$/;

function boundsOf(f: FieldSpec, column: ColumnSpec | undefined, allowed: ReadonlySet<string> | undefined): Bounds {
  const precision = f.precision ?? column?.precision;
  const scale = f.scale ?? column?.scale ?? 0;
  return {
    maxLength: f.collection ? undefined : f.maxLength ?? column?.length,
    itemLength: f.collection && f.valueTable ? VALUE_TABLE_TEXT_LENGTH : undefined,
    limit: f.type === 'Edm.Decimal' && precision !== undefined ? 10 ** (precision - scale) : Infinity,
    scale,
    allowed,
  };
}

/** Fitting for given values: the stored form of a value the field can hold, else NO_FIT. */
export function givenFitter(f: FieldSpec, column: ColumnSpec | undefined, allowed: ReadonlySet<string> | undefined): GivenFit {
  const scalar = strictScalar(f.type, boundsOf(f, column, allowed));
  if (!f.collection) return (v) => (Array.isArray(v) ? NO_FIT : scalar(v));
  return (v) => {
    const items = Array.isArray(v) ? v : [v];
    const out: unknown[] = [];
    for (const item of items) {
      const x = item === undefined || item === null ? NO_FIT : scalar(item);
      if (x !== NO_FIT && !out.includes(x)) out.push(x);
    }
    // Items the field cannot hold are left out; none at all that it can: the rule does not apply.
    return out.length === 0 && items.length > 0 ? NO_FIT : out;
  };
}

function strictScalar(type: EdmPrimitive, b: Bounds): (v: unknown) => unknown {
  switch (type) {
    case 'Edm.String':
      return (v) => {
        if (typeof v !== 'string' || (b.allowed && !b.allowed.has(v)) || (b.itemLength !== undefined && v.length > b.itemLength)) return NO_FIT;
        return b.maxLength !== undefined && v.length > b.maxLength ? v.slice(0, b.maxLength).trimEnd() : v;
      };
    case 'Edm.Guid':
      return (v) => (typeof v === 'string' && GUID.test(v) ? v : NO_FIT);
    case 'Edm.TimeOfDay':
      return (v) => (typeof v === 'string' && TIME_OF_DAY.test(v) ? v : NO_FIT);
    case 'Edm.Boolean':
      return (v) => (typeof v === 'boolean' ? v : NO_FIT);
    case 'Edm.Int16':
    case 'Edm.Int32':
    case 'Edm.Int64': {
      const limit = INTEGER_LIMITS[type]!;
      return (v) => {
        const n = typeof v === 'number' ? Math.round(v) : NaN;
        return Number.isFinite(n) && Math.abs(n) <= limit ? n : NO_FIT;
      };
    }
    case 'Edm.Decimal':
      return (v) => {
        const n = typeof v === 'number' && Number.isFinite(v) ? Number(v.toFixed(b.scale)) : NaN;
        return Math.abs(n) < b.limit ? n : NO_FIT;
      };
    case 'Edm.Double':
      return (v) => (typeof v === 'number' && Number.isFinite(v) ? v : NO_FIT);
    case 'Edm.Date':
      return (v) => (v instanceof Date && !Number.isNaN(v.getTime()) ? v.toISOString().slice(0, 10) : NO_FIT);
    case 'Edm.DateTimeOffset':
      return (v) => (v instanceof Date && !Number.isNaN(v.getTime()) ? v.toISOString() : NO_FIT);
  }
}

/**
 * Fitting for generic values: strings cut to their length, numbers rounded to the scale and kept within the
 * precision and the integer type, epoch milliseconds written as dates or timestamps. A value outside the field's lookup
 * (none is made so) is left out, as are a collection's repeats.
 */
export function genericFitter(f: FieldSpec, column: ColumnSpec | undefined, allowed: ReadonlySet<string> | undefined): GenericFit {
  const scalar = lenientScalar(f.type, boundsOf(f, column, allowed));
  if (!f.collection) return (v) => (v === undefined || v === null ? undefined : scalar(v));
  return (v) => {
    if (v === undefined || v === null) return undefined;
    const out: unknown[] = [];
    for (const item of Array.isArray(v) ? v : [v]) {
      const x = item === undefined || item === null ? undefined : scalar(item);
      if (x !== undefined && !out.includes(x)) out.push(x);
    }
    return out;
  };
}

function lenientScalar(type: EdmPrimitive, b: Bounds): (v: unknown) => unknown {
  switch (type) {
    case 'Edm.String':
    case 'Edm.Guid':
    case 'Edm.TimeOfDay':
      return (v) => {
        const s = typeof v === 'string' ? v : String(v);
        if ((b.allowed && !b.allowed.has(s)) || (b.itemLength !== undefined && s.length > b.itemLength)) return undefined;
        return b.maxLength !== undefined && s.length > b.maxLength ? s.slice(0, b.maxLength).trimEnd() : s;
      };
    case 'Edm.Boolean':
      return (v) => Boolean(v);
    case 'Edm.Int16':
    case 'Edm.Int32':
    case 'Edm.Int64': {
      const limit = INTEGER_LIMITS[type]!;
      return (v) => {
        const n = Math.round(Number(v));
        return Number.isFinite(n) ? Math.max(-limit, Math.min(limit, n)) : undefined;
      };
    }
    case 'Edm.Decimal': {
      // The largest value of the scale below the limit.
      const max = b.limit === Infinity ? Infinity : Number((b.limit - 10 ** -b.scale).toFixed(b.scale));
      return (v) => {
        const n = Number(v);
        return Number.isFinite(n) ? Math.max(-max, Math.min(max, Number(n.toFixed(b.scale)))) : undefined;
      };
    }
    case 'Edm.Double':
      return (v) => {
        const n = Number(v);
        return Number.isFinite(n) ? n : undefined;
      };
    case 'Edm.Date':
      return (v) => (typeof v === 'number' ? new Date(v).toISOString().slice(0, 10) : String(v));
    case 'Edm.DateTimeOffset':
      return (v) => (typeof v === 'number' ? new Date(v).toISOString() : String(v));
  }
}
