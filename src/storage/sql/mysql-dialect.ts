/**
 * MariaDB's and MySQL's spellings. Strings compare by code point and trailing spaces count, as on SQLite:
 * the tables and the connection use a binary collation without PAD SPACE (utf8mb4_bin pads, so 'A' would
 * equal 'A '), chosen by the server itself because MariaDB and MySQL 8 name it differently.
 */
import { SqlDialect, type ColumnOrder, type ListKind } from './dialect';
import { sqlBuilder, type Knex } from './query-builder';
import { join, param, raw, Fragment, fragment } from './fragment';

/** Placeholders one prepared statement may carry. */
const MAX_PARAMS = 65535;

/** Text elements of a JSON list: VARCHAR up to this many characters (longer ones are LONGTEXT). */
const VARCHAR_LIMIT = 16383;

/** The binary collation without PAD SPACE, as an expression the server evaluates. */
export const NO_PAD_BINARY_COLLATION = "IF(VERSION() LIKE '%MariaDB%', 'utf8mb4_nopad_bin', 'utf8mb4_0900_bin')";

class MysqlDialect extends SqlDialect {
  readonly name = 'mysql' as const;
  readonly maxParams = MAX_PARAMS;
  protected readonly functionNames = { length: 'CHAR_LENGTH', toLower: 'LOWER', toUpper: 'UPPER' };
  /**
   * Without the causal wait every other read has on a Galera node: while the cluster drops a lost node, causal
   * reads wait seconds on every node, and a balancer must not take every instance out for that.
   */
  override probe(sql: string): string {
    return `SET STATEMENT wsrep_sync_wait = 0 FOR ${sql}`;
  }
  /** The column's utf8mb4 bytes as they are stored. */
  readonly bytesType = 'BINARY';

  contains(text: Fragment, part: Fragment): Fragment {
    return fragment`LOCATE(${part}, ${text}) > 0`;
  }

  endsWith(text: Fragment, suffix: Fragment): Fragment {
    return fragment`RIGHT(${text}, ${this.length(suffix)}) = ${suffix}`;
  }


  /**
   * MariaDB turns `NOT EXISTS (… WHERE inner = outer …)` into an anti-join that materialises the whole subquery
   * table for every statement (a scan of a collection's value table per page); with `<=>`, the same on columns
   * that are never null, it stays a dependent subquery seeking the primary key per row (measured: 4.7 ms against
   * 23.5 ms for a page of 100 over 20,000 listings).
   */
  override antiJoinKey(inner: Fragment, outer: Fragment): Fragment {
    return fragment`${inner} <=> ${outer}`;
  }

  castInteger(value: Fragment): Fragment {
    return fragment`CAST(${value} AS SIGNED)`;
  }

  /**
   * GROUP_CONCAT stops at the session's group_concat_max_len, which every connection sets as high as the server
   * takes it (mysql-database.ts), and at max_allowed_packet, with only a warning: the reader checks each value's
   * length and reads a parent cut short a row each (prepared-reads.ts).
   */
  joinedBytes(column: string, order: ColumnOrder): string {
    return `CAST(GROUP_CONCAT(${this.id(column).sql} ORDER BY ${this.orderList(order)} SEPARATOR ',') AS BINARY)`;
  }

  /** `||` is OR here unless the session says otherwise. */
  concat(parts: readonly Fragment[]): Fragment {
    return fragment`CONCAT(${join(parts, ', ')})`;
  }

  /**
   * Text is read as VARCHAR as wide as the longest element (powers of two from 64, so few statement shapes), never
   * narrower, which would truncate elements into false matches; then CAST to CHAR, which takes the connection's
   * collation (the tables' binary no-pad one: 'a' <> 'a '), where JSON_TABLE's own column would take the database's
   * default and meet the column in an illegal mix of collations. Measured on MariaDB 10.11 with 200,000 rows: `IN`
   * is a semi-join seeking the column's index per element; `NOT IN` materialises the list once, keyed (up to
   * VARCHAR(256); LONGTEXT cannot be keyed). Numbers are DOUBLE, as mysql2 binds a number parameter.
   */
  jsonList(json: string, kind: ListKind, longest: number): Fragment {
    const width = Math.max(64, 2 ** Math.ceil(Math.log2(Math.max(1, longest))));
    const [element, type] = kind === 'number' ? ['v', 'DOUBLE'] : ['CAST(v AS CHAR)', width > VARCHAR_LIMIT ? 'LONGTEXT' : `VARCHAR(${width})`];
    return fragment`SELECT ${raw(element)} FROM JSON_TABLE(${param(json)}, '$[*]' COLUMNS (v ${raw(type)} PATH '$')) AS list`;
  }


  inserted(column: string): string {
    return `VALUES(${this.id(column).sql})`;
  }


  indexNames(knex: Knex, table: string): Knex.QueryBuilder {
    return knex('information_schema.STATISTICS').distinct('INDEX_NAME as name')
      .where('TABLE_SCHEMA', knex.raw('DATABASE()')).andWhere('TABLE_NAME', table);
  }

  /** `k = k`: knex's INSERT IGNORE would also turn other errors (a value too long) into warnings. */
  override keepExisting(insert: Knex.QueryBuilder, key: readonly string[]): Knex.QueryBuilder {
    return insert.onConflict([...key]).merge({ [key[0]]: sqlBuilder('mysql').ref(key[0]) });
  }







  /** The server's clock, in UTC whatever the session's time zone (UNIX_TIMESTAMP would read NOW() in it). */
  clockMillis(): Fragment {
    return raw("SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 AS t");
  }
}

export const mysqlDialect: SqlDialect = new MysqlDialect();
