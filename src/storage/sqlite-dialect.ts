/**
 * SQLite's spellings. Its lower/upper change ASCII letters only, so tolower/toupper call functions the
 * connection registers (sqlite-database.ts); it has no row locks, because a write transaction already holds the
 * database's write lock; and its types are affinities, so decimals and doubles are stored as floats.
 */
import type { ColumnSpec } from '../model/service-model';
import { commonColumnType, SqlDialect } from './dialect';
import { join, param, raw, Sql, sql } from './sql';

/** SQLITE_MAX_VARIABLE_NUMBER since SQLite 3.32. */
const MAX_PARAMS = 32766;

class SqliteDialect extends SqlDialect {
  readonly name = 'sqlite' as const;
  readonly maxParams = MAX_PARAMS;
  readonly lockingRead = '';

  contains(text: Sql, part: Sql): Sql {
    return sql`instr(${text}, ${part}) > 0`;
  }

  endsWith(text: Sql, suffix: Sql): Sql {
    return sql`substr(${text}, ${this.length(text)} - ${this.length(suffix)} + 1) = ${suffix}`;
  }

  length(text: Sql): Sql {
    return sql`length(${text})`;
  }

  toLower(text: Sql): Sql {
    return sql`odata_tolower(${text})`;
  }

  toUpper(text: Sql): Sql {
    return sql`odata_toupper(${text})`;
  }

  castInteger(value: Sql): Sql {
    return sql`CAST(${value} AS INTEGER)`;
  }

  concat(parts: readonly Sql[]): Sql {
    return join(parts, ' || ');
  }

  /** json_each's `value` is text for JSON strings and integer or real for numbers, as a bound value would be. */
  jsonList(json: string): Sql {
    return sql`SELECT value FROM json_each(${param(json)})`;
  }

  onConflictUpdate(key: readonly string[]): string {
    return `ON CONFLICT (${key.map((k) => this.id(k).sql).join(', ')}) DO UPDATE SET`;
  }

  inserted(column: string): string {
    return `excluded.${this.id(column).sql}`;
  }

  onConflictKeep(key: readonly string[]): string {
    return `ON CONFLICT (${key.map((k) => this.id(k).sql).join(', ')}) DO NOTHING`;
  }

  columnType(c: ColumnSpec): string {
    return commonColumnType(c) ?? (c.type === 'text' ? 'text' : 'float');
  }

  tableOptions(): string {
    return '';
  }

  tableExists(table: string): Sql {
    return sql`SELECT name FROM sqlite_master WHERE type = 'table' AND name = ${param(table)}`;
  }

  columnNames(table: string): Sql {
    return sql`SELECT name FROM pragma_table_info(${param(table)})`;
  }

  collationQuery(): undefined {
    return undefined;
  }

  addColumn(): string {
    return 'ADD COLUMN';
  }

  /** Every writer of one SQLite file runs on its host, so the host's clock, read by SQLite (millisecond 'subsec'). */
  clockMillis(): Sql {
    return raw("SELECT CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) AS t");
  }
}

export const sqliteDialect: SqlDialect = new SqliteDialect();
