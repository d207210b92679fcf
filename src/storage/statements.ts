/**
 * The statements storage runs, built once for every database from the dialect's hooks: reads, counts,
 * inserts (with what a key conflict does), updates and deletes. Each returns SQL text with its parameters;
 * the text depends only on the statement's shape, never on values, so the driver's prepared statements are
 * reused across calls.
 */
import type { SqlDialect } from './dialect';
import { join, param, placeholders, raw, Sql, sql } from './sql';

export type Direction = 'asc' | 'desc';

export interface OrderItem {
  readonly column: string;
  readonly direction: Direction;
}

export interface Select {
  readonly from: string;
  /** Column names, or `*` for every column. */
  readonly columns: readonly string[] | '*';
  readonly where?: Sql;
  readonly orderBy?: readonly OrderItem[];
  /** At most this many rows (a parameter, so every page size shares one statement). */
  readonly limit?: number;
  /** Rows passed over before the first one returned (with `limit`). */
  readonly offset?: number;
  /** The rows read stay locked until the transaction ends (no other writer can read them this way meanwhile). */
  readonly lock?: boolean;
}

/** What an insert does with a row whose key is taken already. */
export type OnConflict =
  | { readonly key: readonly string[]; readonly replace: readonly string[] }
  | { readonly key: readonly string[]; readonly increment: readonly string[] }
  | { readonly key: readonly string[]; readonly keep: true };

export class Statements {
  constructor(readonly dialect: SqlDialect) {}

  id(name: string): Sql {
    return this.dialect.id(name);
  }

  /** `column = ?` */
  eq(column: string, value: unknown): Sql {
    return this.compare(column, '=', value);
  }

  /** `column <op> ?` */
  compare(column: string, op: '=' | '<' | '<=' | '>' | '>=', value: unknown): Sql {
    return sql`${this.id(column)} ${raw(op)} ${param(value)}`;
  }

  /** `column IN (?, …)`, one placeholder per value. */
  in(column: string, values: readonly unknown[]): Sql {
    return { sql: `${this.id(column).sql} IN (${placeholders(values.length)})`, params: values };
  }

  /** Every condition at once; each is parenthesised, so any predicate fits. */
  and(conditions: readonly (Sql | undefined)[]): Sql | undefined {
    const present = conditions.filter((c): c is Sql => c !== undefined);
    if (present.length <= 1) return present[0];
    return join(present.map((c) => sql`(${c})`), ' AND ');
  }

  select(q: Select): Sql {
    const columns = q.columns === '*' ? raw('*') : this.columns(q.columns);
    let s = sql`SELECT ${columns} FROM ${this.id(q.from)}`;
    if (q.where) s = sql`${s} WHERE ${q.where}`;
    if (q.orderBy?.length) s = sql`${s} ORDER BY ${this.orderBy(q.orderBy)}`;
    if (q.limit !== undefined) s = sql`${s} LIMIT ${param(q.limit)}`;
    if (q.limit !== undefined && q.offset) s = sql`${s} OFFSET ${param(q.offset)}`;
    return q.lock ? sql`${s}${raw(this.dialect.lockingRead)}` : s;
  }

  /** The number of rows, as `n`. */
  count(from: string, where?: Sql): Sql {
    const s = sql`SELECT COUNT(*) AS n FROM ${this.id(from)}`;
    return where ? sql`${s} WHERE ${where}` : s;
  }

  /** Rows of values in `columns` order; with `onConflict`, what a taken key does. */
  insert(into: string, columns: readonly string[], rows: readonly (readonly unknown[])[], onConflict?: OnConflict): Sql {
    const row = `(${placeholders(columns.length)})`;
    const values = rows.length === 1 ? row : `${row}${`, ${row}`.repeat(rows.length - 1)}`;
    const params: unknown[] = [];
    for (const r of rows) for (let i = 0; i < r.length; i++) params.push(r[i]);
    const text = `INSERT INTO ${this.id(into).sql} (${this.columns(columns).sql}) VALUES ${values}`;
    return { sql: onConflict ? `${text} ${this.conflict(onConflict)}` : text, params };
  }

  update(table: string, values: Readonly<Record<string, unknown>>, where: Sql): Sql {
    const set = join(Object.entries(values).map(([c, v]) => this.eq(c, v)), ', ');
    return sql`UPDATE ${this.id(table)} SET ${set} WHERE ${where}`;
  }

  delete(from: string, where: Sql): Sql {
    return sql`DELETE FROM ${this.id(from)} WHERE ${where}`;
  }

  columns(names: readonly string[]): Sql {
    return raw(names.map((c) => this.id(c).sql).join(', '));
  }

  orderBy(items: readonly OrderItem[]): Sql {
    return raw(items.map((o) => `${this.id(o.column).sql} ${o.direction === 'desc' ? 'DESC' : 'ASC'}`).join(', '));
  }

  private conflict(c: OnConflict): string {
    const d = this.dialect;
    if ('keep' in c) return d.onConflictKeep(c.key);
    const assignments = 'replace' in c
      ? c.replace.map((col) => `${this.id(col).sql} = ${d.inserted(col)}`)
      : c.increment.map((col) => `${this.id(col).sql} = ${this.id(col).sql} + ${d.inserted(col)}`);
    return `${d.onConflictUpdate(c.key)} ${assignments.join(', ')}`;
  }
}
