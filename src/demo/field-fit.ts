/**
 * Values fitted to a field's facets as stored (model/field-facets.ts): its type, MaxLength, precision and scale, lookup
 * values, and the bounds of its storage column where the dictionary states none (as the generated schema bounds it),
 * so that every demo record passes the store's encoder and its set's schema.
 *
 * A given value (what a rule of the demo's story says a field named so holds) must already be of the field's kind: a
 * string for text, a number for a number, a boolean for a flag, a Date for a date or timestamp, a value of the field's
 * own lookup. Anything else does not fit (NO_FIT): the rule does not apply, and the field is made as any other. A
 * generic value (made for the field from its type) is of the field's kind by construction and is only brought within
 * its bounds.
 */
import type { FieldFacets } from '../model/field-facets';

/** A given value that the field cannot hold as it is declared. */
export const NO_FIT: unique symbol = Symbol('does not fit');

/** A non-null given value → its stored form, or NO_FIT. */
export type GivenFit = (v: unknown) => unknown;
/** A generic value → its stored form, or undefined (null). */
export type GenericFit = (v: unknown) => unknown;

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const TIME_OF_DAY = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,12})?)?$/;

/** Fitting for given values: the stored form of a value the field can hold, else NO_FIT. */
export function givenFitter(f: FieldFacets): GivenFit {
  const scalar = strictScalar(f);
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

function strictScalar(f: FieldFacets): (v: unknown) => unknown {
  const { maxLength, scale, limit } = f.stored;
  switch (f.type) {
    case 'Edm.String':
      return (v) => {
        if (typeof v !== 'string' || (f.allowed && !f.allowed.has(v)) || (f.elementLength !== undefined && v.length > f.elementLength)) return NO_FIT;
        return maxLength !== undefined && v.length > maxLength ? v.slice(0, maxLength).trimEnd() : v;
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
      const largest = f.range![1];
      return (v) => {
        const n = typeof v === 'number' ? Math.round(v) : NaN;
        return Number.isFinite(n) && Math.abs(n) <= largest ? n : NO_FIT;
      };
    }
    case 'Edm.Decimal':
      return (v) => {
        const n = typeof v === 'number' && Number.isFinite(v) ? Number(v.toFixed(scale)) : NaN;
        return Math.abs(n) < limit ? n : NO_FIT;
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
export function genericFitter(f: FieldFacets): GenericFit {
  const scalar = lenientScalar(f);
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

function lenientScalar(f: FieldFacets): (v: unknown) => unknown {
  const { maxLength, scale, limit } = f.stored;
  switch (f.type) {
    case 'Edm.String':
    case 'Edm.Guid':
    case 'Edm.TimeOfDay':
      return (v) => {
        const s = typeof v === 'string' ? v : String(v);
        if ((f.allowed && !f.allowed.has(s)) || (f.elementLength !== undefined && s.length > f.elementLength)) return undefined;
        return maxLength !== undefined && s.length > maxLength ? s.slice(0, maxLength).trimEnd() : s;
      };
    case 'Edm.Boolean':
      return (v) => Boolean(v);
    case 'Edm.Int16':
    case 'Edm.Int32':
    case 'Edm.Int64': {
      const largest = f.range![1];
      return (v) => {
        const n = Math.round(Number(v));
        return Number.isFinite(n) ? Math.max(-largest, Math.min(largest, n)) : undefined;
      };
    }
    case 'Edm.Decimal': {
      // The largest value of the scale below the limit.
      const max = limit === Infinity ? Infinity : Number((limit - 10 ** -scale).toFixed(scale));
      return (v) => {
        const n = Number(v);
        return Number.isFinite(n) ? Math.max(-max, Math.min(max, Number(n.toFixed(scale)))) : undefined;
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
