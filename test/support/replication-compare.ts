/**
 * What a replicating consumer is compared with: what the service serves a client over HTTP, less listings in
 * status Delete and their related records (§3), and the differences between two stores, described.
 */
import { keyOf, RELATED, ReplicatedSet, ReplicationConsumer, SETS } from './replication-consumer';
import { Rec, walkPages } from './replication-paging';

export type Sets = Record<ReplicatedSet, Map<string, Rec>>;

/** Everything the service serves a client now, over HTTP (large pages), keyed. */
export async function servedOverHttp(base: string, headers: Record<string, string>, maxPageSize = 1000): Promise<Sets> {
  const served = {} as Sets;
  for (const set of SETS) {
    const walk = await walkPages(`${base}/${set}`, { headers: { ...headers, Prefer: `odata.maxpagesize=${maxPageSize}` } });
    served[set] = new Map(walk.records.map((r) => [r[keyOf(set)] as string, r]));
    if (served[set].size !== walk.records.length) throw new Error(`${set}: a key served twice in one walk of a quiet database`);
  }
  return served;
}

/** The consumer's expectation: what it is served, less listings in status Delete and their related records. */
export function withoutDeleted(visible: Sets): Sets {
  const deleted = new Set([...visible.Property.values()].filter((r) => r.MlsStatus === 'Delete').map((r) => r.ListingKey as string));
  const out = { Property: new Map([...visible.Property].filter(([k]) => !deleted.has(k))) } as Sets;
  for (const spec of RELATED) out[spec.set] = new Map([...visible[spec.set]].filter(([, r]) => !deleted.has(r[spec.parent])));
  return out;
}

/** Every difference between two stores of one set, described (first few in full). */
export function differences(set: string, actual: ReadonlyMap<string, Rec>, expected: ReadonlyMap<string, Rec>): string[] {
  const out: string[] = [];
  const missing = [...expected.keys()].filter((k) => !actual.has(k));
  const extra = [...actual.keys()].filter((k) => !expected.has(k));
  if (missing.length) out.push(`${set}: ${missing.length} missing, e.g. ${missing.slice(0, 8).join(', ')}`);
  if (extra.length) out.push(`${set}: ${extra.length} kept although removed, e.g. ${extra.slice(0, 8).join(', ')}`);
  let differing = 0;
  for (const [k, e] of expected) {
    const a = actual.get(k);
    if (!a || JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(e))) continue;
    if (++differing <= 5) {
      const fields = [...new Set([...Object.keys(a), ...Object.keys(e)])].filter((f) => JSON.stringify(a[f]) !== JSON.stringify(e[f]));
      out.push(`${set} ${k} stale in ${fields.map((f) => `${f}: ${JSON.stringify(a[f])} (expected ${JSON.stringify(e[f])})`).join('; ')}`);
    }
  }
  if (differing > 5) out.push(`${set}: ${differing} records stale in all`);
  return out;
}

export function sortKeys(r: Rec): Rec {
  return Object.fromEntries(Object.keys(r).sort().map((k) => [k, r[k]]));
}

export function consumerSets(c: ReplicationConsumer): Sets {
  return c.replica();
}

export function allDifferences(actual: Sets, expected: Sets): string[] {
  return SETS.flatMap((set) => differences(set, actual[set], expected[set]));
}

export function count(s: Sets): string {
  return `${s.Property.size} listings, ${s.Media.size} media, ${s.OpenHouse.size} open houses, ${s.HistoryTransactional.size} history`;
}


/**
 * The same records without their null properties: OData's JSON says a property absent from a record and one
 * present as null alike tell "no value". A dictionary change that adds a field gives every record the field as
 * null without moving its timestamp; a consumer that has not re-read the record has no such property.
 */
export function nullsAsAbsent(sets: Sets): Sets {
  const strip = (r: Rec): Rec => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null));
  return Object.fromEntries(Object.entries(sets).map(([set, records]) => [set, new Map([...records].map(([k, r]) => [k, strip(r)]))])) as Sets;
}
