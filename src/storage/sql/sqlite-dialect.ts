/**
 * SQLite's spellings. Its lower/upper change ASCII letters only, so tolower/toupper call functions the
 * connection registers (sqlite-database.ts); it has no row locks, because a write transaction already holds the
 * database's write lock; and its types are affinities, so decimals and doubles are stored as floats.
 */
import { SqlDialect, type ColumnOrder } from './dialect';
import type { Knex } from './query-builder';
import { join, param, raw, Fragment, fragment } from './fragment';
import { SCAN_GUARD } from '../db/sqlite-functions';

/** SQLITE_MAX_VARIABLE_NUMBER since SQLite 3.32. */
const MAX_PARAMS = 32766;

class SqliteDialect extends SqlDialect {
  readonly name = 'sqlite' as const;
  readonly maxParams = MAX_PARAMS;
  /** tolower/toupper: the connection's own functions (sqlite-functions.ts). */
  protected readonly functionNames = { length: 'length', toLower: 'odata_tolower', toUpper: 'odata_toupper' };
  readonly bytesType = 'BLOB';

  contains(text: Fragment, part: Fragment): Fragment {
    return fragment`instr(${text}, ${part}) > 0`;
  }

  endsWith(text: Fragment, suffix: Fragment): Fragment {
    return fragment`substr(${text}, ${this.length(text)} - ${this.length(suffix)} + 1) = ${suffix}`;
  }


  castInteger(value: Fragment): Fragment {
    return fragment`CAST(${value} AS INTEGER)`;
  }

  concat(parts: readonly Fragment[]): Fragment {
    return join(parts, ' || ');
  }

  /** group_concat's ORDER BY: SQLite 3.44 on (without it, the order of the joined values is arbitrary). */
  joinedBytes(column: string, order: ColumnOrder): string {
    return `CAST(group_concat(${this.id(column).sql}, ',' ORDER BY ${this.orderList(order)}) AS BLOB)`;
  }

  /** json_each's `value` is text for JSON strings and integer or real for numbers, as a bound value would be. */
  jsonList(json: string): Fragment {
    return fragment`SELECT value FROM json_each(${param(json)})`;
  }


  inserted(column: string): string {
    return `excluded.${this.id(column).sql}`;
  }

  indexNames(knex: Knex, table: string): Knex.QueryBuilder {
    return knex.select('name').from(knex.raw('pragma_index_list(?)', [table]));
  }

  /** Registered by the scan thread (sqlite-scan-thread.ts): not deterministic, so evaluated on every row visited. */
  scanGuard(): Fragment {
    return raw(`${SCAN_GUARD}()`);
  }

  /** Every writer of one SQLite file runs on its host, so the host's clock, read by SQLite (millisecond 'subsec'). */
  clockMillis(): Fragment {
    return raw("SELECT CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) AS t");
  }
}

export const sqliteDialect: SqlDialect = new SqliteDialect();
