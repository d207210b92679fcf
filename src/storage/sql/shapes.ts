/**
 * The service's own tables' statements, compiled by knex once per shape and then run with their values alone.
 * knex puts some values where it chooses (an insert's columns in alphabetical order), so a shape is compiled
 * with stand-ins for its values and the order knex placed them in is checked (textTaking) or read off
 * (InsertBatches), once, where the shape is made: a knex that placed them otherwise fails there, not quietly.
 * Every statement that splits rows into batches takes its batch size from one rule (rowsPerStatement).
 */
import type { Executor } from '../db/database';
import type { SqlDialect } from './dialect';
import { compile, type Buildable, type Knex } from './query-builder';

/** A value no caller stores, standing for `what` while a shape is compiled. */
export function standIn(what: string): string {
  return `\u0000${what}`;
}

/** The shape's text, after checking that knex takes its values in `order`, the order its callers pass them in. */
export function textTaking(q: Buildable, order: readonly unknown[]): string {
  const { sql, params } = compile(q);
  if (params.length !== order.length || params.some((p, i) => p !== order[i])) {
    throw new Error(`knex placed the values of this statement otherwise than its callers pass them: ${sql}`);
  }
  return sql;
}

/**
 * How many rows one statement carries, the one rule every statement that splits rows into batches follows: at most
 * `most` rows, and never more values than the dialect binds (`maxParams`: SQLite 32,766, MariaDB 65,535).
 * `most` defaults to SQLite's limit on the terms of a compound SELECT (500), which knex writes a multi-row insert
 * as; a caller whose rows are heavy says why it takes fewer.
 */
export function rowsPerStatement(dialect: Pick<SqlDialect, 'maxParams'>, valuesPerRow: number, most = MAX_ROWS_PER_INSERT): number {
  return Math.max(1, Math.min(most, Math.floor(dialect.maxParams / valuesPerRow)));
}

/** SQLite writes a multi-row insert as one compound SELECT (knex: `INSERT … SELECT … UNION ALL …`) of at most 500 terms. */
export const MAX_ROWS_PER_INSERT = 500;

/**
 * Keys per `IN (…)` list of a statement that finds rows by key (reads, deletes, restamps): rows of one value each,
 * far fewer than either database binds (the statements add a few values of their own), and few list lengths, so
 * few statement shapes, each prepared once per connection.
 */
export const KEYS_PER_STATEMENT = 200;

/** `items` in consecutive slices of at most `size`, in order (none for no items). */
export function* batchesOf<T>(items: readonly T[], size: number): Generator<readonly T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** Shapes of a last, smaller batch kept compiled per table (a miss compiles it again; the values are not in it). */
const REMAINDERS_KEPT = 32;

/**
 * Multi-row inserts of rows given in `columns` order: full batches share one shape and the last, smaller batch
 * is one more, compiled per row count and kept in a small cache. Rows per statement follow `rowsPerStatement`.
 */
export class InsertBatches {
  readonly rowsPerStatement: number;
  /** Each placeholder of a row: the index in `columns` of the value knex put there. */
  private readonly order: readonly number[];
  private readonly knex: Knex;
  private full?: string;
  private readonly remainders = new Map<number, string>();

  constructor(
    db: { readonly knex: Knex; readonly dialect: Pick<SqlDialect, 'maxParams'> }, private readonly table: string, private readonly columns: readonly string[],
    /** What a row whose key is taken does (knex's onConflict), if anything. */
    private readonly onConflict: (insert: Knex.QueryBuilder) => Knex.QueryBuilder = (insert) => insert,
    /** The most rows a statement takes (rowsPerStatement's `most`). */
    most = MAX_ROWS_PER_INSERT,
  ) {
    this.knex = db.knex;
    this.rowsPerStatement = rowsPerStatement(db.dialect, columns.length, most);
    const { params } = compile(this.build(1));
    this.order = params.map((p) => columns.findIndex((_, c) => p === standIn(`0.${c}`)));
  }

  /** Inserts `rows` (each in `columns` order), a batch per statement, in the order given. */
  async insert(ex: Executor, rows: readonly (readonly unknown[])[]): Promise<void> {
    for (const batch of batchesOf(rows, this.rowsPerStatement)) await ex.run(this.text(batch.length), this.params(batch));
  }

  /** The values of `rows` in placeholder order. */
  params(rows: readonly (readonly unknown[])[]): unknown[] {
    const out: unknown[] = [];
    for (const row of rows) for (const c of this.order) out.push(row[c]);
    return out;
  }

  /** The text of a statement of `count` rows, checked to take their values row by row in `order`. */
  text(count: number): string {
    if (count === this.rowsPerStatement) return (this.full ??= this.compiled(count));
    let text = this.remainders.get(count);
    if (text === undefined) {
      text = this.compiled(count);
      if (this.remainders.size >= REMAINDERS_KEPT) this.remainders.delete(this.remainders.keys().next().value!);
      this.remainders.set(count, text);
    }
    return text;
  }

  private compiled(count: number): string {
    const expected = Array.from({ length: count }, (_, r) => this.order.map((c) => standIn(`${r}.${c}`))).flat();
    return textTaking(this.build(count), expected);
  }

  private build(count: number): Knex.QueryBuilder {
    const rows = Array.from({ length: count }, (_, r) => Object.fromEntries(this.columns.map((name, c) => [name, standIn(`${r}.${c}`)])));
    return this.onConflict(this.knex(this.table).insert(rows));
  }
}

/**
 * An in-list lengthened to the next power of two (at most `max`) by repeating its last value, which matches
 * nothing the list did not: a few shapes serve lists of every length, each compiled once, and the driver
 * keeps few prepared statements for them.
 */
export function paddedList<T>(values: readonly T[], max: number): readonly T[] {
  const length = Math.min(max, 2 ** Math.ceil(Math.log2(values.length)));
  if (values.length === 0 || length <= values.length) return values;
  const out = values.slice();
  while (out.length < length) out.push(values[values.length - 1]);
  return out;
}
