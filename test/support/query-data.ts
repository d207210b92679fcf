/**
 * Test data and an independent oracle for the query tests: edge-case listings planted beside the demo
 * data, the stored records read back straight from the tables, and ordering/projection written here
 * by hand (never by calling the service's parser, binder or translator).
 */
import type { ListingService } from '../../src/process/service';
import type { Rec } from './next-links';

export type { Rec };

export type Direction = 'asc' | 'desc';
export type Order = readonly (readonly [string, Direction])[];

/** Key field per entity set (written out here, not read from the model the service uses). */
export const KEYS: Readonly<Record<string, string>> = {
  Property: 'ListingKey',
  Member: 'MemberKey',
  Office: 'OfficeKey',
  OpenHouse: 'OpenHouseKey',
  Media: 'MediaKey',
  HistoryTransactional: 'HistoryTransactionalKey',
  PropertyRooms: 'RoomKey',
  PropertyUnitTypes: 'UnitTypeKey',
  Lookup: 'LookupKey',
  Field: 'FieldKey',
};

/** Path aliases of spec §2. */
export const ALIASES: Readonly<Record<string, string>> = { Members: 'Member', Offices: 'Office', OpenHouses: 'OpenHouse' };

/** Instants the planted listings sit on. */
export const T0 = '2026-01-01T00:00:00.000Z';
export const T0_PLUS_1MS = '2026-01-01T00:00:00.001Z';
export const T0_MINUS_1MS = '2025-12-31T23:59:59.999Z';
export const QUOTE_KEY = "O'Brien-1";
export const UNICODE_KEY = 'Ünïcödé-1';
/** Listings whose PhotosChangeTimestamp is removed (the demo data has none without one). */
export const PHOTOS_NULL_KEYS = ['L000001', 'L000002', 'L000003', 'L000004', 'L000005', 'L000006', 'L000007', 'L000008'];

/**
 * Writes edge cases through the service's own record store (so they pass its validation):
 * exact instants around 2026-01-01T00:00:00Z, null photo timestamps, a key with a quote and a
 * key with non-ASCII letters.
 */
export async function plantEdgeCases(service: ListingService): Promise<void> {
  const store = service.store('Property');
  const byKey = new Map((await loadRecords(service, 'Property')).map((r) => [r.ListingKey as string, r]));
  const take = (key: string): Rec => {
    const r = byKey.get(key);
    if (!r) throw new Error(`demo data has no listing ${key}`);
    return { ...r };
  };
  const changed: Rec[] = [];
  for (const key of PHOTOS_NULL_KEYS) {
    const r = take(key);
    delete r.PhotosChangeTimestamp;
    changed.push(r);
  }
  changed.push({ ...take('L000011'), ModificationTimestamp: T0 });
  changed.push({ ...take('L000012'), ModificationTimestamp: T0_PLUS_1MS });
  changed.push({ ...take('L000013'), ModificationTimestamp: T0_MINUS_1MS });
  changed.push({ ...take('L000014'), PhotosChangeTimestamp: T0, DocumentsChangeTimestamp: T0 });
  changed.push({ ...take('L000020'), ListingKey: QUOTE_KEY, ModificationTimestamp: '2024-02-29T12:00:00.000Z' });
  changed.push({ ...take('L000021'), ListingKey: UNICODE_KEY, ModificationTimestamp: '2024-03-01T00:00:00.000Z' });
  const encoded = changed.map((r) => store.encode(r));
  await service.db.transaction(async (tx) => { await store.upsert(tx, encoded); });
}

/** Every stored record of a set, as stored (the `_record` column). */
export async function loadRecords(service: ListingService, set: string): Promise<Rec[]> {
  const rows = await service.db.all(`SELECT _record FROM \`${set}\``);
  return rows.map((row) => JSON.parse(row._record as string) as Rec);
}

/** Milliseconds since the epoch of a stored timestamp, or undefined for null/absent. */
export function ms(v: unknown): number | undefined {
  if (v === null || v === undefined) return undefined;
  const t = Date.parse(v as string);
  if (Number.isNaN(t)) throw new Error(`not a timestamp: ${String(v)}`);
  return t;
}

/** Milliseconds of an ISO literal written in a test (with offset), for predicates. */
export const at = (iso: string): number => {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) throw new Error(`bad literal in test: ${iso}`);
  return t;
};

/**
 * OData order: null sorts first ascending and last descending; strings by code point (binary collation);
 * timestamps by instant. The key ends the order, in the direction of the last stated key (the service's
 * convention for a total order; a stated key keeps its own direction).
 */
export function comparator(order: Order, key: string): (a: Rec, b: Rec) => number {
  const full: [string, Direction][] = order.map(([f, d]) => [f, d]);
  if (!full.some(([f]) => f === key)) full.push([key, full.length ? full[full.length - 1][1] : 'asc']);
  return (a, b) => {
    for (const [f, d] of full) {
      const c = compareValues(a[f], b[f]);
      if (c !== 0) return d === 'asc' ? c : -c;
    }
    return 0;
  };
}

function compareValues(x: unknown, y: unknown): number {
  const xn = x === null || x === undefined;
  const yn = y === null || y === undefined;
  if (xn || yn) return xn && yn ? 0 : xn ? -1 : 1;
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  const xs = String(x);
  const ys = String(y);
  if (/^\d{4}-\d{2}-\d{2}T/.test(xs) && /^\d{4}-\d{2}-\d{2}T/.test(ys)) return ms(xs)! - ms(ys)!;
  // Code point order (what a binary collation gives), not UTF-16 unit order.
  const xa = Array.from(xs, (c) => c.codePointAt(0)!);
  const ya = Array.from(ys, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(xa.length, ya.length); i++) if (xa[i] !== ya[i]) return xa[i] - ya[i];
  return xa.length - ya.length;
}

/** A record cut down to `select` as the response carries it: every selected field, null (or [] for collections) when absent. */
export function project(r: Rec, select: readonly string[], collections: ReadonlySet<string>): Rec {
  return Object.fromEntries(select.map((f) => [f, r[f] ?? (collections.has(f) ? [] : null)]));
}
