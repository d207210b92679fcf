/**
 * An independent oracle for licensing: the stored data read straight from the tables, and licence scopes as
 * small expression trees that are both rendered to OData text (what the product is given) and evaluated here
 * by a hand-written predicate (what the product must agree with). Nothing here calls the product's parser,
 * binder or translator.
 */
import type { Database } from '../../src/storage/db/database';
import type { Rec } from './next-links';

export type { Rec };

/** The seeded PRNG (mulberry32) the demo data uses, so every run draws the same clients and queries. */
import { SeededRandom as Prng } from '../../src/demo/random';

export { Prng };

// ---------------------------------------------------------------------------------------------------------
// The data, read from the tables (the `_record` column holds each record exactly as stored).

/** Related resources of a listing: navigation name, entity set (= table), key field, field holding the ListingKey. */
export const CHILDREN = [
  { nav: 'Media', set: 'Media', key: 'MediaKey', fk: 'ResourceRecordKey', charged: true },
  { nav: 'OpenHouse', set: 'OpenHouse', key: 'OpenHouseKey', fk: 'ListingKey', charged: true },
  { nav: 'historyTransactional', set: 'HistoryTransactional', key: 'HistoryTransactionalKey', fk: 'ResourceRecordKey', charged: true },
  { nav: 'PropertyRooms', set: 'PropertyRooms', key: 'RoomKey', fk: 'ListingKey', charged: false },
  { nav: 'PropertyUnits', set: 'PropertyUnitTypes', key: 'UnitTypeKey', fk: 'ListingKey', charged: false },
] as const;
export type Child = (typeof CHILDREN)[number];
export const childBySet = (set: string) => CHILDREN.find((c) => c.set === set)!;
export const childByNav = (nav: string) => CHILDREN.find((c) => c.nav === nav)!;

/** Property fields the spec (§4 "Property endpoint") says can be queried; order by them too. */
export const PROPERTY_FILTERABLE = ['ListingKey', 'ModificationTimestamp', 'PhotosChangeTimestamp', 'DocumentsChangeTimestamp', 'MlsStatus', 'PropertyType'];

export interface Snapshot {
  listings: Map<string, Rec>;
  /** Records of each related set, by set name. */
  children: Map<string, Rec[]>;
  /** Records of other sets read for checks (Member, Office). */
  others: Map<string, Rec[]>;
}

export async function readTable(db: Database, table: string): Promise<Rec[]> {
  const rows = await db.all(`SELECT \`_record\` FROM \`${table}\``);
  return rows.map((r) => JSON.parse(r._record as string) as Rec);
}

export async function snapshot(db: Database): Promise<Snapshot> {
  const listings = new Map((await readTable(db, 'Property')).map((r) => [r.ListingKey as string, r]));
  const children = new Map<string, Rec[]>();
  for (const c of CHILDREN) children.set(c.set, await readTable(db, c.set));
  const others = new Map<string, Rec[]>();
  for (const s of ['Member', 'Office']) others.set(s, await readTable(db, s));
  return { listings, children, others };
}

// ---------------------------------------------------------------------------------------------------------
// Filter expressions over Property's queryable fields.

export type CmpOp = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
export type Expr =
  | { k: 'cmp'; field: string; op: CmpOp; value: string; style?: number }
  | { k: 'in'; field: string; values: string[] }
  | { k: 'not'; e: Expr }
  | { k: 'and' | 'or'; a: Expr; b: Expr };

const TIMESTAMP_FIELDS = new Set(['ModificationTimestamp', 'PhotosChangeTimestamp', 'DocumentsChangeTimestamp']);

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

function timestampLiteral(value: string, style: number): string {
  const short = value.endsWith('.000Z') ? `${value.slice(0, -5)}Z` : value;
  switch (style % 4) {
    case 0: return short; // OData DateTimeOffset literal
    case 1: return value; // with milliseconds
    case 2: return quote(short); // the spec's quoted form
    default: return value.replace(/Z$/, '+00:00');
  }
}

/** OData text of an expression. */
export function render(e: Expr): string {
  switch (e.k) {
    case 'cmp': {
      const lit = TIMESTAMP_FIELDS.has(e.field) ? timestampLiteral(e.value, e.style ?? 0) : quote(e.value);
      return `${e.field} ${e.op} ${lit}`;
    }
    case 'in':
      return `${e.field} in (${e.values.map(quote).join(',')})`;
    case 'not':
      return `not (${render(e.e)})`;
    case 'and':
    case 'or':
      return `(${render(e.a)}) ${e.k} (${render(e.b)})`;
  }
}

/** OData semantics for the values this data has (comparisons with null: eq false, ne true, ordering false). */
export function evaluate(e: Expr, r: Rec): boolean {
  switch (e.k) {
    case 'cmp': {
      const v = r[e.field] as string | undefined | null;
      if (v === undefined || v === null) return e.op === 'ne';
      switch (e.op) {
        case 'eq': return v === e.value;
        case 'ne': return v !== e.value;
        case 'gt': return v > e.value;
        case 'ge': return v >= e.value;
        case 'lt': return v < e.value;
        case 'le': return v <= e.value;
      }
      return false;
    }
    case 'in': {
      const v = r[e.field];
      return v !== undefined && v !== null && e.values.includes(v);
    }
    case 'not':
      return !evaluate(e.e, r);
    case 'and':
      return evaluate(e.a, r) && evaluate(e.b, r);
    case 'or':
      return evaluate(e.a, r) || evaluate(e.b, r);
  }
}

/** Fields an expression names. */
export function fieldsOf(e: Expr, out = new Set<string>()): Set<string> {
  if (e.k === 'cmp' || e.k === 'in') out.add(e.field);
  else if (e.k === 'not') fieldsOf(e.e, out);
  else { fieldsOf(e.a, out); fieldsOf(e.b, out); }
  return out;
}

/** Values found in the data, to draw literals from. */
export interface Domain {
  statuses: string[];
  types: string[];
  timestamps: string[];
  keys: string[];
}

export function domainOf(listings: Iterable<Rec>): Domain {
  const all = [...listings];
  const distinct = (f: string) => [...new Set(all.map((r) => r[f]).filter((v) => typeof v === 'string'))].sort();
  return { statuses: distinct('MlsStatus'), types: distinct('PropertyType'), timestamps: distinct('ModificationTimestamp'), keys: distinct('ListingKey') };
}

function quantile<T>(rng: Prng, sorted: readonly T[]): T {
  return sorted[Math.min(sorted.length - 1, Math.floor(rng.next() * sorted.length))];
}

function leaf(rng: Prng, d: Domain): Expr {
  const ops: CmpOp[] = ['gt', 'ge', 'lt', 'le'];
  switch (rng.int(0, 3)) {
    case 0:
    case 1: {
      const [field, values] = rng.chance(0.5) ? ['MlsStatus', d.statuses] : ['PropertyType', d.types];
      if (rng.chance(0.4)) return { k: 'in', field, values: rng.sample(values, rng.int(2, 4)) };
      return { k: 'cmp', field, op: rng.chance(0.6) ? 'eq' : 'ne', value: rng.pick(values) };
    }
    case 2: {
      let value = quantile(rng, d.timestamps);
      // Sometimes a stored instant exactly (boundaries of ge/gt), sometimes a round one.
      if (rng.chance(0.4)) value = `${value.slice(0, 10)}T00:00:00.000Z`;
      return { k: 'cmp', field: 'ModificationTimestamp', op: rng.pick(ops), value, style: rng.int(0, 3) };
    }
    default: {
      const r = rng.int(0, 2);
      if (r === 0) return { k: 'in', field: 'ListingKey', values: rng.sample(d.keys, rng.int(1, 12)) };
      if (r === 1) return { k: 'cmp', field: 'ListingKey', op: rng.pick(['eq', 'ne'] as CmpOp[]), value: rng.pick(d.keys) };
      return { k: 'cmp', field: 'ListingKey', op: rng.pick(ops), value: quantile(rng, d.keys) };
    }
  }
}

/** A random filter expression with and/or/not/in over MlsStatus, PropertyType, ModificationTimestamp and ListingKey. */
export function randomExpr(rng: Prng, d: Domain, depth = 3): Expr {
  if (depth <= 0 || rng.chance(0.35)) return leaf(rng, d);
  const r = rng.next();
  if (r < 0.15) return { k: 'not', e: randomExpr(rng, d, depth - 1) };
  return { k: r < 0.6 ? 'and' : 'or', a: randomExpr(rng, d, depth - 1), b: randomExpr(rng, d, depth - 1) };
}

// ---------------------------------------------------------------------------------------------------------
// Hidden fields and what a payload may carry.

export type HiddenBySet = Map<string, Set<string>>;

/** `Field` is Property's; `Set.Field` another set's. */
export function hiddenBySet(entries: readonly string[]): HiddenBySet {
  const out: HiddenBySet = new Map();
  for (const e of entries) {
    const [set, field] = e.includes('.') ? e.split('.', 2) : ['Property', e];
    (out.get(set) ?? out.set(set, new Set()).get(set)!).add(field);
  }
  return out;
}

/**
 * Hidden fields present in a record of `set` (and, for Property, in its expanded related records).
 * Returns a description of each violation.
 */
export function hiddenIn(set: string, record: Rec, hidden: HiddenBySet, where: string): string[] {
  const out: string[] = [];
  const mine = hidden.get(set);
  for (const k of Object.keys(record)) {
    if (mine?.has(k)) out.push(`${where}: ${set} record ${JSON.stringify(keyOf(set, record))} carries hidden field ${k}`);
    if (set === 'Property') {
      const c = CHILDREN.find((x) => x.nav === k);
      if (c && Array.isArray(record[k])) for (const child of record[k]) out.push(...hiddenIn(c.set, child, hidden, `${where} ${k}`));
    }
  }
  return out;
}

const KEY_FIELDS: Record<string, string> = {
  Property: 'ListingKey', Member: 'MemberKey', Office: 'OfficeKey',
  ...Object.fromEntries(CHILDREN.map((c) => [c.set, c.key])),
};

export function keyOf(set: string, record: Rec): unknown {
  return record[KEY_FIELDS[set]];
}

/** A stored record as the client should see it: its fields less the hidden ones, or the selected fields (null when absent). */
export function expectedRecord(stored: Rec, hidden: ReadonlySet<string> | undefined, select?: readonly string[]): Rec {
  if (select) return Object.fromEntries(select.map((f) => [f, stored[f] ?? null]));
  return Object.fromEntries(Object.entries(stored).filter(([k]) => !hidden?.has(k)));
}

/** A short, stable description of the first difference between two records, or undefined. */
export function recordDiff(actual: Rec, expected: Rec): string | undefined {
  const keys = new Set([...Object.keys(actual), ...Object.keys(expected)]);
  for (const k of keys) {
    if (JSON.stringify(actual[k]) !== JSON.stringify(expected[k])) {
      return `${k}: got ${JSON.stringify(actual[k])?.slice(0, 80)}, expected ${JSON.stringify(expected[k])?.slice(0, 80)}`;
    }
  }
  return undefined;
}

/** Whatever of a nextLink's $skiptoken is readable text once base64url-decoded (parts split at "."). */
export function readableSkiptoken(nextLink: string): string {
  const token = new URL(nextLink).searchParams.get('$skiptoken') ?? '';
  return token.split('.').map((p) => Buffer.from(p, 'base64url').toString('latin1'))
    .filter((t) => /^[\x20-\x7e]*$/.test(t)).join(' ');
}

/**
 * Hidden values of `stored` (the last record of a page) that a nextLink reveals: string values (8+ characters)
 * anywhere in the readable token, numbers as elements of a JSON array in it.
 */
export function hiddenValuesIn(nextLink: string, stored: Rec | undefined, hidden: ReadonlySet<string> | undefined): string[] {
  if (!stored || !hidden?.size) return [];
  const readable = readableSkiptoken(nextLink);
  const out: string[] = [];
  for (const h of hidden) {
    const val = stored[h];
    if (typeof val === 'string' && val.length >= 8 && readable.includes(val)) out.push(`${h}=${val}`);
    if (typeof val === 'number' && new RegExp(`[\\[,]${String(val).replace('.', '\\.')}[,\\]]`).test(readable)) out.push(`${h}=${val}`);
  }
  return out.length ? [`${out.join(', ')} readable in $skiptoken ${readable.slice(0, 160)}`] : [];
}
