/**
 * The stored form of EDM values that both the record codec (writing) and the query binder (comparing) must
 * agree on: dates are real calendar dates, and timestamps are UTC with milliseconds, so text order is time order;
 * an integer is within its type's range.
 */
import type { EdmPrimitive } from './service-model';

/** The values each EDM integer type holds; Int64 as far as a JSON number is exact. */
export const INTEGER_RANGES: Partial<Record<EdmPrimitive, readonly [number, number]>> = {
  'Edm.Int16': [-32_768, 32_767],
  'Edm.Int32': [-2_147_483_648, 2_147_483_647],
  'Edm.Int64': [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

export function isDate(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3];
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,12}))?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * ISO 8601 with an offset, to UTC with milliseconds: `2026-01-02T03:04:05.678Z`.
 * Digits past the millisecond are dropped (not rounded) so that normalising never moves a time forward.
 */
export function normaliseTimestamp(v: string): string | undefined {
  const m = TIMESTAMP.exec(v);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '0', frac = '', zone] = m;
  if (+mo < 1 || +mo > 12 || +d < 1 || +d > 31 || +h > 23 || +mi > 59 || +s > 59) return undefined;
  if (!isDate(`${y}-${mo}-${d}`)) return undefined;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  let t = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s, ms);
  if (zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const [oh, om] = zone.slice(1).split(':').map(Number);
    if (oh > 23 || om > 59) return undefined;
    t -= sign * (oh * 60 + om) * 60_000;
  }
  const out = new Date(t);
  if (Number.isNaN(out.getTime()) || out.getUTCFullYear() < 0 || out.getUTCFullYear() > 9999) return undefined;
  return out.toISOString();
}
