/**
 * The keyset predicate: "rows after the last one returned" in a total order, as parameterised SQL.
 *
 * For the default order (ModificationTimestamp, key) it is `ts >= ? AND (ts > ? OR key > ?)`, the one form
 * measured to seek the (ModificationTimestamp, key) index on both SQLite and MariaDB (the row-value form
 * does not seek on MariaDB; the plain OR form scans on SQLite). Longer orders extend it lexicographically.
 * NULL sorts first in ascending order on both databases, and the predicate treats it the same way.
 */
import type { BoundOrder } from '../../query/bound';
import type { SqlDialect } from './dialect';
import { join, param, raw, Fragment, fragment } from './fragment';

export function keysetAfter(d: SqlDialect, order: readonly BoundOrder[], last: readonly unknown[]): Fragment {
  const col = (o: BoundOrder) => d.id(o.column);
  const equal = (o: BoundOrder, v: unknown) => (v === null ? fragment`${col(o)} IS NULL` : fragment`${col(o)} = ${param(v)}`);
  /** Strictly after `v` in this column's direction (never called for desc after null). */
  const after = (o: BoundOrder, v: unknown): Fragment => {
    if (o.direction === 'asc') return v === null ? fragment`${col(o)} IS NOT NULL` : fragment`${col(o)} > ${param(v)}`;
    return o.field.nullable ? fragment`(${col(o)} < ${param(v)} OR ${col(o)} IS NULL)` : fragment`${col(o)} < ${param(v)}`;
  };

  // A sargable bound on the first column: "at or after" its last value.
  const first = order[0];
  const v0 = last[0];
  let prefix: Fragment | undefined;
  if (v0 !== null) {
    prefix = first.direction === 'asc'
      ? fragment`${col(first)} >= ${param(v0)}`
      : first.field.nullable ? fragment`(${col(first)} <= ${param(v0)} OR ${col(first)} IS NULL)` : fragment`${col(first)} <= ${param(v0)}`;
  }

  const disjuncts: Fragment[] = [];
  for (let i = 0; i < order.length; i++) {
    // Nothing sorts after null in descending order: that disjunct is empty.
    if (order[i].direction === 'desc' && last[i] === null) continue;
    // With the prefix in place, the first column's equality is implied in every later disjunct.
    const terms: Fragment[] = [];
    for (let j = prefix ? 1 : 0; j < i; j++) terms.push(equal(order[j], last[j]));
    terms.push(after(order[i], last[i]));
    disjuncts.push(terms.length > 1 ? fragment`(${join(terms, ' AND ')})` : terms[0]);
  }
  const body = disjuncts.length ? fragment`(${join(disjuncts, ' OR ')})` : raw('1 = 0');
  return prefix ? fragment`${prefix} AND ${body}` : body;
}
