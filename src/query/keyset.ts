/**
 * The keyset predicate: "rows after the last one returned" in a total order, as parameterised SQL.
 *
 * For the default order (ModificationTimestamp, key) it is `ts >= ? AND (ts > ? OR key > ?)`, the one form
 * measured to seek the (ModificationTimestamp, key) index on both SQLite and MariaDB (the row-value form
 * does not seek on MariaDB; the plain OR form scans on SQLite). Longer orders extend it lexicographically.
 * NULL sorts first in ascending order on both databases, and the predicate treats it the same way.
 */
import type { BoundOrder } from './bound';
import { quoteIdentifier, SqlFragment } from './translate';

export function keysetAfter(order: readonly BoundOrder[], last: readonly unknown[]): SqlFragment {
  const params: unknown[] = [];
  const col = (o: BoundOrder) => quoteIdentifier(o.column);
  const value = (v: unknown) => { params.push(v); return '?'; };

  const equal = (o: BoundOrder, v: unknown) => (v === null ? `${col(o)} IS NULL` : `${col(o)} = ${value(v)}`);
  /** Strictly after `v` in this column's direction (never called for desc after null). */
  const after = (o: BoundOrder, v: unknown): string => {
    if (o.direction === 'asc') return v === null ? `${col(o)} IS NOT NULL` : `${col(o)} > ${value(v)}`;
    return o.field.nullable ? `(${col(o)} < ${value(v)} OR ${col(o)} IS NULL)` : `${col(o)} < ${value(v)}`;
  };

  // A sargable bound on the first column: "at or after" its last value.
  const first = order[0];
  const v0 = last[0];
  let prefix: string | undefined;
  if (v0 !== null) {
    prefix = first.direction === 'asc'
      ? `${col(first)} >= ${value(v0)}`
      : first.field.nullable ? `(${col(first)} <= ${value(v0)} OR ${col(first)} IS NULL)` : `${col(first)} <= ${value(v0)}`;
  }

  const disjuncts: string[] = [];
  for (let i = 0; i < order.length; i++) {
    // Nothing sorts after null in descending order: that disjunct is empty.
    if (order[i].direction === 'desc' && last[i] === null) continue;
    // With the prefix in place, the first column's equality is implied in every later disjunct.
    const terms: string[] = [];
    for (let j = prefix ? 1 : 0; j < i; j++) terms.push(equal(order[j], last[j]));
    terms.push(after(order[i], last[i]));
    disjuncts.push(terms.length > 1 ? `(${terms.join(' AND ')})` : terms[0]);
  }
  const body = disjuncts.length ? `(${disjuncts.join(' OR ')})` : '1 = 0';
  return { sql: prefix ? `${prefix} AND ${body}` : body, params };
}
