/**
 * The reads of records, compiled from bound objects (filter, order, keyset position, projection) into one
 * statement each. Pure: the same bound query gives the same SQL text on a dialect, whatever the values.
 */
import type { BoundOrder, BoundPredicate } from '../query/bound';
import type { Projection } from '../query/projection';
import { compileFilter } from './filter-compiler';
import { keysetAfter } from './keyset';
import { param, raw, Sql, sql } from './sql';
import type { Statements } from './statements';
import { valueList } from './value-list';

export interface RecordQuery {
  readonly where?: BoundPredicate;
  /** Keyset position: the sort values of the last row of the previous page; only rows after it. */
  readonly after?: readonly unknown[];
  readonly orderBy: readonly BoundOrder[];
  readonly limit: number;
  /** Rows passed over first ($skip); only where no keyset position is given. */
  readonly offset?: number;
  readonly projection: Projection;
}

export interface RelatedQuery {
  /** The related set's column holding the parent key. */
  readonly foreignKey: string;
  readonly keys: readonly unknown[];
  readonly where?: BoundPredicate;
  readonly orderBy: readonly BoundOrder[];
  readonly projection: Projection;
  readonly perParent?: number;
}

/** Column aliases of a related read: the parent key, and the rank of a record within its parent. */
export const PARENT = '_parent';
const ROW = '_row';

/** One page of records; the sort columns are read too, for the keyset position of the last row. */
export function pageQuery(s: Statements, table: string, q: RecordQuery): Sql {
  const d = s.dialect;
  const where = s.and([q.where && compileFilter(q.where, d, table), q.after && keysetAfter(d, q.orderBy, q.after)]);
  const columns = [...new Set([...q.projection.columns, ...q.orderBy.map((o) => o.column)])];
  return s.select({ from: table, columns, where, orderBy: q.orderBy, limit: q.limit, offset: q.offset });
}

export function countQuery(s: Statements, table: string, where?: BoundPredicate): Sql {
  return s.count(table, where && compileFilter(where, s.dialect, table));
}

/** One record by key, when `scope` (if any) admits it. */
export function keyQuery(s: Statements, table: string, key: string, value: unknown, columns: readonly string[], scope?: BoundPredicate): Sql {
  return s.select({ from: table, columns, where: s.and([s.eq(key, value), scope && compileFilter(scope, s.dialect, table)]) });
}

/**
 * The related records of many parents in one read, ordered by parent. With `perParent`, each parent's
 * records are ranked by the order and cut after that many.
 */
export function relatedQuery(s: Statements, table: string, q: RelatedQuery): Sql {
  const fk = s.id(q.foreignKey);
  const keys = valueList(s.dialect, q.keys);
  const filter = q.where ? sql` AND (${compileFilter(q.where, s.dialect, table)})` : raw('');
  const where = sql`${fk} IN (${keys})${filter}`;
  const select = sql`${fk} AS ${raw(PARENT)}, ${s.columns([...new Set(q.projection.columns)])}`;
  const order = s.orderBy(q.orderBy);
  if (q.perParent === undefined) return sql`SELECT ${select} FROM ${s.id(table)} WHERE ${where} ORDER BY ${fk}, ${order}`;
  const ranked = sql`SELECT ${select}, ROW_NUMBER() OVER (PARTITION BY ${fk} ORDER BY ${order}) AS ${raw(ROW)} FROM ${s.id(table)} WHERE ${where}`;
  return sql`SELECT * FROM (${ranked}) ranked WHERE ${raw(ROW)} <= ${param(q.perParent)} ORDER BY ${raw(PARENT)}, ${raw(ROW)}`;
}
