/**
 * SQL is built with knex: its query builder for statements, its schema builder for tables and migrations.
 * The knex here never connects; it only writes the SQL of one dialect. Each statement's shape is compiled once,
 * where the module that runs it is made (or, for shapes that depend on a request, once per shape in a bounded
 * cache), and its text kept: the text depends only on the shape, never on values, so the driver's prepared
 * statement is reused and a request pays no builder. The values go with each run, in placeholder order.
 */
import knex, { type Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { sha256 } from '../../foundation/digest';

export type { Knex } from 'knex';

/** The databases the service speaks to, by the dialect of SQL knex writes for each. */
export type DialectName = 'sqlite' | 'mysql';

/** A statement ready for the driver: text with its placeholders, and the values in placeholder order. */
export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** The knex client whose SQL each dialect speaks (the drivers are ours: src/storage/*-database.ts). */
const KNEX_CLIENT: Record<DialectName, string> = { sqlite: 'better-sqlite3', mysql: 'mysql2' };

const builders = new Map<DialectName, Knex>();

/** A knex that builds this dialect's SQL and never connects (one per dialect, shared). */
export function sqlBuilder(dialect: DialectName): Knex {
  let builder = builders.get(dialect);
  if (!builder) {
    builder = knex({ client: KNEX_CLIENT[dialect], useNullAsDefault: true });
    builders.set(dialect, builder);
  }
  return builder;
}

/** Anything knex compiles to one statement. */
export type Buildable = Knex.QueryBuilder | Knex.Raw | { toSQL(): Knex.Sql };

/** The statement knex built, with the driver's own placeholders (`?` on both drivers). */
export function compile(q: Buildable): Statement {
  const native = (q.toSQL() as Knex.Sql).toNative();
  return { sql: native.sql, params: native.bindings as readonly unknown[] };
}

/** A shape's key from its parts (a separator no part holds: names and SQL text never carry NUL). */
export function shapeKey(...parts: readonly (string | number)[]): string {
  return parts.join('\u0000');
}

/** Shape keys longer than this are kept by their digest (a filter may be tens of thousands of characters). */
const LONG_SHAPE = 1024;

/**
 * Statements whose shape depends on the request (a page's filter, columns and order), compiled by knex once per
 * shape and kept (bounded: every distinct shape is also a prepared statement on the connection). The values go
 * with each call, in the order the caller states; the first compile of a shape checks that knex put them there.
 */
export class ShapeCache {
  private readonly texts: LRUCache<string, string>;

  constructor(max: number) {
    this.texts = new LRUCache({ max });
  }

  /** `shape` says everything the text depends on; `build` makes it, with `params` as its values, when not kept. */
  statement(shape: string, params: readonly unknown[], build: () => Buildable): Statement {
    const key = shape.length > LONG_SHAPE ? sha256(shape) : shape;
    let sql = this.texts.get(key);
    if (sql === undefined) {
      const built = compile(build());
      if (built.params.length !== params.length || built.params.some((v, i) => v !== params[i])) {
        throw new Error(`knex placed the values of a statement in another order than expected: ${built.sql.slice(0, 200)}`);
      }
      sql = built.sql;
      this.texts.set(key, sql);
    }
    return { sql, params };
  }
}
