/**
 * What differs between the databases beyond what knex already knows: the spellings the hand-written filter
 * compiler needs (filter-compiler.ts, keyset.ts, value-list.ts), the value an upsert's conflicting row carried, how
 * an insert keeps an existing row, and the database's clock. Each database's dialect overrides only what it spells
 * differently; every statement's structure is written once (knex writes the rest).
 */
import type { DialectName, Knex } from './query-builder';
import { raw, Fragment, fragment } from './fragment';

/** What a JSON list (value-list.ts) holds: text, or numbers (booleans are bound as 1/0 before they get there). */
export type ListKind = 'text' | 'number';

/** Columns of an ORDER BY, each with its direction. */
export type ColumnOrder = readonly { readonly column: string; readonly order: 'asc' | 'desc' }[];

export abstract class SqlDialect {
  abstract readonly name: DialectName;
  /** The most bound variables one statement may carry. */
  abstract readonly maxParams: number;
  /**
   * `sql` as a probe runs it: without waiting for anything but the database itself (on a Galera node, without the
   * causal wait every other read has).
   */
  probe(sql: string): string {
    return sql;
  }
  /**
   * The type a text column is cast to for its stored bytes, undecoded: both drivers hand binary values over as
   * Buffers (a stored record so reaches the socket without becoming a JS string: prepared-reads.ts).
   */
  abstract readonly bytesType: string;

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

  /** The names of the functions whose spelling alone differs between the databases. */
  protected abstract readonly functionNames: {
    /** Length in characters. */
    readonly length: string;
    /** Unicode case mapping, as OData's tolower/toupper. */
    readonly toLower: string;
    readonly toUpper: string;
  };

  length(text: Fragment): Fragment {
    return fragment`${raw(this.functionNames.length)}(${text})`;
  }

  toLower(text: Fragment): Fragment {
    return fragment`${raw(this.functionNames.toLower)}(${text})`;
  }

  toUpper(text: Fragment): Fragment {
    return fragment`${raw(this.functionNames.toUpper)}(${text})`;
  }

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
   * The aggregate of a group's `column` values, in `order`, joined by commas, as bytes (bytesType): a parent's
   * related records as the inside of their JSON array, one value per parent (record-queries.ts, joinedRelated).
   * Columns come from the generated field tables.
   */
  abstract joinedBytes(column: string, order: ColumnOrder): string;

  protected orderList(order: ColumnOrder): string {
    return order.map((o) => `${this.id(o.column).sql} ${o.order === 'desc' ? 'DESC' : 'ASC'}`).join(', ');
  }

  /**
   * A subquery whose rows are the elements of `json` (an array of `kind` values, bound as one parameter), for
   * `IN (…)`; `longest`: the longest text element, in characters.
   */
  abstract jsonList(json: string, kind: ListKind, longest: number): Fragment;

  /** The value the conflicting insert carried for `column`, in an upsert's assignments (knex has no word for it). */
  abstract inserted(column: string): string;

  /** `insert` (knex's) made to leave an existing row with the same key as it is. */
  keepExisting(insert: Knex.QueryBuilder, key: readonly string[]): Knex.QueryBuilder {
    return insert.onConflict([...key]).ignore();
  }

  /**
   * The condition a scan's statement (Database.scan) puts before its own, evaluated on every row the scan visits:
   * on SQLite, which has no statement time limit, a function of the scan thread's that stops the statement at its
   * deadline; none where the server stops statements itself (MariaDB's max_statement_time).
   */
  scanGuard(): Fragment | undefined {
    return undefined;
  }

  /** The names of `table`'s indexes, each row's `name` (for the migrator's check that the indexes it made are there). */
  abstract indexNames(knex: Knex, table: string): Knex.QueryBuilder;

  /**
   * A query whose row's `t` is the database's own clock in whole milliseconds since the Unix epoch: the one
   * clock every writer shares, whatever its host's clock says (ModificationTimestamps come from it).
   */
  abstract clockMillis(): Fragment;
}
