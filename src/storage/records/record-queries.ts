/**
 * The reads of records, from bound objects (filter, order, keyset position, projection): the hand-written
 * compilers (filter-compiler.ts, keyset.ts) write the conditions (`condition`, once per read plan: prepared-reads.ts),
 * knex the statements around them, compiled once per shape (ShapeCache). The same bound query gives the same SQL
 * text on a dialect, whatever the values.
 */
import { RECORD_COLUMN, REVISION_COLUMN } from '../../model/service-model';
import type { BoundOrder, BoundPredicate } from '../../query/bound';
import type { Projection } from '../../query/projection';
import type { ColumnOrder, SqlDialect } from '../sql/dialect';
import { compileFilter } from '../sql/filter-compiler';
import { Fragment, fragment } from '../sql/fragment';
import { keysetAfter } from '../sql/keyset';
import { recordReader } from './record-codec';
import { Knex, ShapeCache, shapeKey, Statement } from '../sql/query-builder';
import { valueList } from '../sql/value-list';

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

/** A page's statement: a RecordQuery whose condition is compiled already (a read plan's), and how to read records. */
export interface PageStatement extends Omit<RecordQuery, 'where'> {
  readonly condition?: Fragment;
  /** The record column as its stored bytes (a Buffer), undecoded. */
  readonly undecoded?: boolean;
  /** The columns read, in place of the projection's (the sort columns are read whatever they are). */
  readonly columns?: readonly string[];
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

/**
 * Which records belong to a parent where records of several parent sets share one foreign key column (a Media
 * record's ResourceRecordKey holds a Property's or a Member's key): those whose discriminator `field` names the
 * parent's set (`value`), or names nothing. Said here once, in SQL (whereBelongs) and on a row read (belongs).
 */
export interface Belonging {
  readonly field: string;
  readonly value: string;
}

/** `q` kept to the records whose discriminator `column` holds `value` or nothing. */
export function whereBelongs(q: Knex.QueryBuilder, column: string, value: string): Knex.QueryBuilder {
  return q.andWhere((w) => w.where(column, value).orWhereNull(column));
}

/** whereBelongs on a row already read: its discriminator's value `owner`. */
export function belongs(owner: unknown, value: string): boolean {
  return owner === null || owner === undefined || owner === value;
}

/**
 * Column aliases of a related read: the parent key, the rank of a record within its parent, and a joined read's
 * byte length its records add up to.
 */
export const PARENT = '_parent';
const ROW = '_row';
export const JOINED_LENGTH = '_length';

/**
 * Column aliases of a parent's related rows' digest (TableRecordCache.runs, record-cache.ts): how many, and the sums of the
 * low and the high 24 bits of their revisions (48 bits: halves, so that a sum stays within 64 bits for any count).
 */
const DIGEST_COUNT = '_count';
const DIGEST_LOW = '_low';
const DIGEST_HIGH = '_high';

/** A row's digest of its parent's related rows, the same text whichever driver read it. */
export function digestOf(row: Record<string, unknown>): string {
  return `${String(row[DIGEST_COUNT])}:${String(row[DIGEST_LOW])}:${String(row[DIGEST_HIGH])}`;
}

/** The number of related rows a digest counts. */
export function digestCount(row: Record<string, unknown>): number {
  return Number(row[DIGEST_COUNT]);
}

/** Parent keys a related read binds one placeholder each, up to (PAGE_BATCH_SIZE's default is 100). */
const RELATED_KEYS_BOUND = 1024;

/** Statement shapes kept per table. */
const SHAPES_KEPT = 256;

/** A ColumnOrder as knex's orderBy takes it. */
type Order = ColumnOrder[number][];

export class RecordQueries {
  private readonly shapes = new ShapeCache(SHAPES_KEPT);

  constructor(private readonly knex: Knex, private readonly dialect: SqlDialect, private readonly table: string, private readonly key: string) {}

  /**
   * One page of records; the sort columns are read too, for the keyset position of the last row. A `scan`
   * (scans.ts) carries the dialect's guard first.
   */
  page(q: PageStatement, scan = false): Statement {
    const conditions = allOf(q.condition, q.after && keysetAfter(this.dialect, q.orderBy, q.after));
    const where = this.guarded(conditions, scan);
    const columns = [...new Set([...q.columns ?? recordReader(q.projection).columns, ...q.orderBy.map((o) => o.column)])];
    const order = orderOf(q.orderBy);
    const params = [...(where?.params ?? []), q.limit, ...(q.offset ? [q.offset] : [])];
    const shape = shapeKey('page', columns.join(), where?.sql ?? '', JSON.stringify(order), q.offset ? 'offset' : '', q.undecoded ? 'bytes' : '');
    return this.shapes.statement(shape, params, () => {
      const s = this.knex(this.table).select(this.selected(columns, q.undecoded)).orderBy(order).limit(q.limit);
      if (where) s.whereRaw(where.sql, bindings(where));
      return q.offset ? s.offset(q.offset) : s;
    });
  }

  count(filter?: Fragment, scan = false): Statement {
    const condition = this.guarded(filter, scan);
    return this.shapes.statement(shapeKey('count', condition?.sql ?? ''), condition?.params ?? [], () => {
      const s = this.knex(this.table).count({ n: '*' });
      return condition ? s.whereRaw(condition.sql, bindings(condition)) : s;
    });
  }

  /** One record by key, when `scope` (if any) admits it. */
  byKey(value: unknown, columns: readonly string[], condition?: Fragment, undecoded = false): Statement {
    const shape = shapeKey('key', columns.join(), condition?.sql ?? '', undecoded ? 'bytes' : '');
    return this.shapes.statement(shape, [value, ...(condition?.params ?? [])], () => {
      const s = this.knex(this.table).select(this.selected(columns, undecoded)).where(this.key, value as string);
      return condition ? s.andWhereRaw(`(${condition.sql})`, bindings(condition)) : s;
    });
  }

  /**
   * Records by key, as stored bytes, with their keys and revisions (`keys` as PreparedRead pads them): what a
   * page read by positions first still lacks (prepared-reads.ts).
   */
  byKeysWithRevisions(keys: readonly unknown[]): Statement {
    const list = valueList(this.dialect, keys, RELATED_KEYS_BOUND);
    return this.shapes.statement(shapeKey('revised', list.sql), list.params, () => this.knex(this.table)
      .select(this.selected([this.key, REVISION_COLUMN, RECORD_COLUMN], true))
      .whereRaw(`${this.dialect.id(this.key).sql} IN (${list.sql})`, bindings(list)));
  }

  /**
   * The related records of many parents in one read, ordered by parent. With `perParent`, each parent's records
   * are ranked by the order and cut after that many.
   */
  related(q: Omit<RelatedQuery, 'where'>, filter?: Fragment): Statement {
    const columns = [...new Set(recordReader(q.projection).columns)];
    const { condition, params, order } = this.relatedParts(q, filter);
    const shape = shapeKey('related', q.foreignKey, columns.join(), condition.sql, JSON.stringify(order), q.perParent === undefined ? '' : 'ranked');
    return this.shapes.statement(shape, params, () => {
      const rows = this.knex(this.table).select(this.knex.ref(q.foreignKey).as(PARENT), ...columns).whereRaw(condition.sql, bindings(condition));
      if (q.perParent === undefined) return rows.orderBy([{ column: q.foreignKey, order: 'asc' }, ...order]);
      return this.knex.select('*').from(this.ranked(rows, q.foreignKey, order)).where(ROW, '<=', q.perParent).orderBy([PARENT, ROW]);
    });
  }

  /**
   * The stored records of many parents in one read, one row per parent that has any: its records' bytes in the
   * order, joined by commas by the database (dialect's joinedBytes), the inside of their JSON array as it leaves.
   * A page of 100 listings so reads 100 values instead of 1,736 (their media), none of them decoded. Each row
   * also says how many bytes its value must have (JOINED_LENGTH): MariaDB cuts a joined value at
   * max_allowed_packet without an error, only a warning.
   */
  joinedRelated(q: Omit<RelatedQuery, 'where' | 'projection'>, filter?: Fragment, digested = false): Statement {
    const { condition, params, order } = this.relatedParts(q, filter);
    const digest = digested && q.perParent === undefined;
    const shape = shapeKey('joined', q.foreignKey, condition.sql, JSON.stringify(order), q.perParent === undefined ? '' : 'ranked', digest ? 'digest' : '');
    return this.shapes.statement(shape, params, () => {
      const joined = (within: Order) => [
        this.knex.raw(`${this.dialect.joinedBytes(RECORD_COLUMN, within)} as ??`, [RECORD_COLUMN]),
        this.knex.raw('SUM(OCTET_LENGTH(??)) + COUNT(*) - 1 as ??', [RECORD_COLUMN, JOINED_LENGTH]),
      ];
      const rows = this.knex(this.table).whereRaw(condition.sql, bindings(condition));
      if (q.perParent === undefined) return rows.select(this.knex.ref(q.foreignKey).as(PARENT), ...joined(order), ...(digest ? this.digest() : [])).groupBy(q.foreignKey);
      const ranked = this.ranked(rows.select(this.knex.ref(q.foreignKey).as(PARENT), RECORD_COLUMN), q.foreignKey, order);
      return this.knex.select(PARENT, ...joined([{ column: ROW, order: 'asc' }])).from(ranked).where(ROW, '<=', q.perParent).groupBy(PARENT);
    });
  }

  /**
   * The digest of each parent's related rows (digestOf), from the foreign key's index alone, one row per parent
   * that has any: what a joined read of them (with `digested`) would give beside their bytes.
   */
  relatedDigests(q: Omit<RelatedQuery, 'where' | 'projection' | 'orderBy' | 'perParent'>, filter?: Fragment): Statement {
    const { condition, params } = this.relatedParts({ ...q, orderBy: [] }, filter);
    return this.shapes.statement(shapeKey('digests', q.foreignKey, condition.sql), params, () => this.knex(this.table)
      .select(this.knex.ref(q.foreignKey).as(PARENT), ...this.digest())
      .whereRaw(condition.sql, bindings(condition))
      .groupBy(q.foreignKey));
  }

  private digest(): Knex.Raw[] {
    return [
      this.knex.raw('COUNT(*) as ??', [DIGEST_COUNT]),
      this.knex.raw('SUM(?? & 16777215) as ??', [REVISION_COLUMN, DIGEST_LOW]),
      this.knex.raw('SUM(?? >> 24) as ??', [REVISION_COLUMN, DIGEST_HIGH]),
    ];
  }

  /** A related read's condition (the parents' keys, and the filter), its parameters, and its order. */
  private relatedParts(q: Pick<RelatedQuery, 'foreignKey' | 'keys' | 'orderBy' | 'perParent'>, filter?: Fragment): { condition: Fragment; params: unknown[]; order: Order } {
    // Placeholders, not one JSON list: MariaDB joins a JSON_TABLE list with duplicates (the padding) through a
    // temporary table and sorts every related row there (36 ms against 23 for a page of 100's media, measured).
    const keys = valueList(this.dialect, q.keys, RELATED_KEYS_BOUND);
    const condition = allOf(fragment`${this.dialect.id(q.foreignKey)} IN (${keys})`, filter)!;
    return { condition, params: [...condition.params, ...(q.perParent === undefined ? [] : [q.perParent])], order: orderOf(q.orderBy) };
  }

  /** `rows` numbered within each parent in the order (ROW), as a subquery. */
  private ranked(rows: Knex.QueryBuilder, foreignKey: string, order: Order): Knex.QueryBuilder {
    return rows.rowNumber(ROW, order as never, foreignKey).as('ranked');
  }

  /** The columns read; `undecoded`: the record column as its stored bytes, under its own name. */
  private selected(columns: readonly string[], undecoded = false): (string | Knex.Raw)[] {
    if (!undecoded) return [...columns];
    return columns.map((c) => (c === RECORD_COLUMN ? this.knex.raw(`CAST(?? AS ${this.dialect.bytesType}) as ??`, [c, c]) : c));
  }

  /** A read's condition as SQL, compiled once per read plan. */
  condition(p: BoundPredicate | undefined): Fragment | undefined {
    return p && compileFilter(p, this.dialect, this.table);
  }

  /** The guard before the conditions of a scan, as a term of its own: the planner still finds the conditions' indexes. */
  private guarded(conditions: Fragment | undefined, scan: boolean): Fragment | undefined {
    const guard = scan ? this.dialect.scanGuard() : undefined;
    if (!guard) return conditions;
    return conditions ? fragment`${guard} AND (${conditions})` : guard;
  }
}

/** A fragment's values as knex's bindings (any value the drivers bind). */
function bindings(f: Fragment): readonly Knex.RawBinding[] {
  return f.params as readonly Knex.RawBinding[];
}

function orderOf(orderBy: readonly BoundOrder[]): Order {
  return orderBy.map((o) => ({ column: o.column, order: o.direction }));
}

/** Both conditions (each parenthesised when there are two), either, or none. */
function allOf(a: Fragment | undefined, b: Fragment | undefined): Fragment | undefined {
  if (a && b) return fragment`(${a}) AND (${b})`;
  return a ?? b;
}
