/**
 * What differs between the databases, as small hooks of one shared compiler (filter-compiler.ts,
 * statements.ts, schema.ts): each database's dialect overrides only what it spells differently. Everything
 * else, and every statement's structure, is written once.
 */
import type { ColumnSpec } from '../model/service-model';
import type { Knex } from './query-builder';
import { raw, Fragment, fragment } from './fragment';
import type { ListKind } from './value-list';

export type DialectName = 'sqlite' | 'mysql';

/** Width of stored timestamps: `YYYY-MM-DDTHH:mm:ss.sssZ`, so text order is time order on both databases. */
export const TIMESTAMP_WIDTH = 24;
export const DATE_WIDTH = 10;

export abstract class SqlDialect {
  abstract readonly name: DialectName;
  /** The most bound variables one statement may carry. */
  abstract readonly maxParams: number;
  /** Appended to a read whose rows stay locked until the transaction ends. */
  abstract readonly lockingRead: string;

  /** A quoted identifier. Both databases accept backticks; names come from the generated field tables. */
  id(name: string): Fragment {
    return raw(`\`${name}\``);
  }

  /** `part` occurs in `text`, case-sensitively. */
  abstract contains(text: Fragment, part: Fragment): Fragment;

  startsWith(text: Fragment, prefix: Fragment): Fragment {
    return fragment`substr(${text}, 1, ${this.length(prefix)}) = ${prefix}`;
  }

  abstract endsWith(text: Fragment, suffix: Fragment): Fragment;
  /** Length in characters. */
  abstract length(text: Fragment): Fragment;
  /** Unicode case mapping, as OData's tolower/toupper. */
  abstract toLower(text: Fragment): Fragment;
  abstract toUpper(text: Fragment): Fragment;

  trim(text: Fragment): Fragment {
    return fragment`TRIM(${text})`;
  }

  /** Characters `from` (1-based) on, `length` of them when given. */
  substring(text: Fragment, from: number, length?: number): Fragment {
    return length === undefined ? fragment`substr(${text}, ${raw(String(from))})` : fragment`substr(${text}, ${raw(String(from))}, ${raw(String(length))})`;
  }

  abstract castInteger(value: Fragment): Fragment;

  /**
   * `inner = outer` correlating a NOT EXISTS subquery with the row outside it (both sides never null): the
   * form in which the database probes the subquery's index once per outer row.
   */
  antiJoinKey(inner: Fragment, outer: Fragment): Fragment {
    return fragment`${inner} = ${outer}`;
  }

  /** Texts joined end to end. */
  abstract concat(parts: readonly Fragment[]): Fragment;

  /**
   * A subquery whose rows are the elements of `json` (an array of `kind` values, bound as one parameter), for
   * `IN (…)`; `longest`: the longest text element, in characters.
   */
  abstract jsonList(json: string, kind: ListKind, longest: number): Fragment;

  /** How an insert that meets an existing key becomes an update: the clause before the assignments. */
  abstract onConflictUpdate(key: readonly string[]): string;
  /** The value the conflicting insert carried for `column`, inside the assignments. */
  abstract inserted(column: string): string;
  /** An insert that leaves an existing row with the same key as it is. */
  abstract onConflictKeep(key: readonly string[]): string;

  /** `insert` (knex's) made to leave an existing row with the same key as it is. */
  keepExisting(insert: Knex.QueryBuilder, key: readonly string[]): Knex.QueryBuilder {
    return insert.onConflict([...key]).ignore();
  }

  /** The column's type in CREATE TABLE. */
  abstract columnType(c: ColumnSpec): string;
  /** Options after CREATE TABLE's column list; `collation` is the one other tables use. */
  abstract tableOptions(collation: string | undefined): string;
  /** A query for the table's row in the catalogue (a row: it exists). */
  abstract tableExists(table: string): Fragment;
  /** A query for the table's column names, one row each, as `name`. */
  abstract columnNames(table: string): Fragment;
  /** A query whose row's `c` is the collation the service's tables use, or undefined where there is no choice. */
  abstract collationQuery(): Fragment | undefined;
  /** ALTER TABLE's clause that adds a column. */
  abstract addColumn(): string;
  /**
   * A query whose row's `t` is the database's own clock in whole milliseconds since the Unix epoch: the one
   * clock every writer shares, whatever its host's clock says (ModificationTimestamps come from it).
   */
  abstract clockMillis(): Fragment;
}

/** Shared by both dialects: the logical column types the field tables use, as both databases name them. */
export function commonColumnType(c: ColumnSpec): string | undefined {
  switch (c.type) {
    case 'string': return `varchar(${c.length ?? 255})`;
    case 'integer': return 'bigint';
    case 'boolean': return 'boolean';
    case 'date': return `varchar(${DATE_WIDTH})`;
    case 'timestamp': return `varchar(${TIMESTAMP_WIDTH})`;
    default: return undefined;
  }
}
