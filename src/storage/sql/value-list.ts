/**
 * The values of an `IN (…)` list. A short list binds one parameter per value; a long one binds ONE parameter,
 * the values as a JSON array, which the dialect unpacks in a subquery (SQLite `json_each`, MariaDB/MySQL
 * `JSON_TABLE`). A statement's parameter count then stays bounded whatever the list's length (SQLite takes
 * 32,766, MariaDB 65,535), the statement text no longer depends on it (one prepared statement for every long
 * list), and the database still seeks the column's index once per value: EXPLAIN shows `SEARCH … (col=?)` over
 * `LIST SUBQUERY` on SQLite and a semi-join `eq_ref`/`ref` on MariaDB for `IN`; `NOT IN` materialises the list
 * once on both (no per-row JSON parsing). Values keep their types and comparison rules: strings stay text
 * compared in the column's collation (the unpacked column takes the connection's, which is the tables'),
 * numbers compare as the doubles a bound number is on both drivers.
 */
import type { ListKind, SqlDialect } from './dialect';
import { placeholders, Fragment } from './fragment';

/** Lists longer than this go as one JSON array. */
export const LONG_LIST = 64;

/** The inside of `IN (…)`: placeholders, or (more than `longAbove` values) a subquery over one JSON parameter. */
export function valueList(d: SqlDialect, values: readonly unknown[], longAbove = LONG_LIST): Fragment {
  const kind = values.length > longAbove ? kindOf(values) : undefined;
  if (kind === undefined) return { sql: placeholders(values.length), params: values };
  const longest = kind === 'text' ? values.reduce<number>((n, v) => Math.max(n, [...(v as string)].length), 0) : 0;
  return d.jsonList(JSON.stringify(values), kind, longest);
}

/**
 * The list's kind when JSON carries every value unchanged: all strings, or all finite numbers (JSON has no
 * NaN or infinities, and a mixed list has no one column type); else undefined, and the list binds as it is.
 */
function kindOf(values: readonly unknown[]): ListKind | undefined {
  if (values.every((v) => typeof v === 'string')) return 'text';
  if (values.every((v) => typeof v === 'number' && Number.isFinite(v))) return 'number';
  return undefined;
}
