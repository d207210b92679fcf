/**
 * Replicating consumers of every entity set the service document lists (but the change log), over HTTP only, for a
 * service whose dictionary changes between their reads. Each re-reads `$metadata` when it catches up and brings
 * its copy to what it declares, as docs/dictionary.md "Changing the dictionary" says a consumer does: a field no longer
 * declared is dropped, a declared one it holds no value of is null (an empty collection in a collection field;
 * OData's JSON says absent, null and, for a collection, empty alike mean "no value").
 *
 * - By ModificationTimestamp (spec §4 "Recommended practice", for every set): a first walk of each set to its last
 *   nextLink; then `$filter=ModificationTimestamp ge '<mark>'` (the mark: the latest timestamp it has been served),
 *   followed to the end; then the removed-records check (a key-only walk of the set: a record whose key did not
 *   appear is removed). A set that declares no ModificationTimestamp (the dictionary dropped it) is walked whole.
 * - By EntityEvent (RESO RCP-027): the newest event noted, then a walk of each set; catching up, the events after
 *   its mark, page by page, each record they name fetched by key (200 kept, 404 removed).
 */
import { DeclaredSet, declaredSets } from './declared-fields';
import { get } from './http';
import { odataString, Rec, walkPages } from './replication-paging';

export type Copy = Map<string, Map<string, Rec>>;

const TIMESTAMP = 'ModificationTimestamp';

/** The sets `$metadata` declares, by name. */
export async function readDeclared(base: string, headers: Record<string, string>): Promise<Map<string, DeclaredSet>> {
  const r = await get(`${base}/$metadata?$format=json`, headers);
  if (r.status !== 200) throw new Error(`GET $metadata answered ${r.status}: ${r.text.slice(0, 300)}`);
  return declaredSets(r.json);
}

/** A record brought to its set's declaration (see the file's comment). */
export function asDeclared(set: DeclaredSet, r: Rec): Rec {
  const out: Rec = {};
  for (const f of set.fields.values()) {
    const v = r[f.name];
    const empty = v === undefined || v === null || (Array.isArray(v) && v.length === 0);
    out[f.name] = empty ? (f.collection ? [] : null) : v;
  }
  return out;
}

/** The key literal of a record's key in a URL: `('L1')` or `(5)`. */
export function keySegment(set: DeclaredSet, key: string): string {
  const type = set.fields.get(set.key)?.type ?? 'Edm.String';
  return type === 'Edm.String' ? `('${key.replace(/'/g, "''")}')` : `(${key})`;
}

/** Every record of each set as served now, walked page by page by nextLink (`pageSize` records a page, the default if none). */
export async function servedCopy(base: string, headers: Record<string, string>, sets: readonly string[], pageSize?: number): Promise<Copy> {
  const declared = await readDeclared(base, headers);
  const copy: Copy = new Map();
  for (const set of sets) copy.set(set, await walkSet(base, declared.get(set)!, '', headers, pageSize));
  return copy;
}

async function walkSet(base: string, set: DeclaredSet, query: string, headers: Record<string, string>, pageSize?: number): Promise<Map<string, Rec>> {
  const walk = await walkPages(`${base}/${set.name}${query}`, { headers: pageSize ? { ...headers, Prefer: `odata.maxpagesize=${pageSize}` } : headers });
  const out = new Map<string, Rec>();
  for (const r of walk.records) {
    const key = String(r[set.key]);
    if (out.has(key)) throw new Error(`${set.name}: key ${key} served twice in one walk of a quiet database`);
    out.set(key, withoutAnnotations(r));
  }
  return out;
}

function withoutAnnotations(r: Rec): Rec {
  return Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('@')));
}

/** Every set the service document lists, but `excluded`. */
export async function listedSets(base: string, headers: Record<string, string>, excluded: readonly string[]): Promise<string[]> {
  const r = await get(`${base}/`, headers);
  if (r.status !== 200) throw new Error(`GET the service document answered ${r.status}`);
  return (r.json.value as { name: string; kind: string }[]).filter((s) => s.kind === 'EntitySet' && !excluded.includes(s.name)).map((s) => s.name);
}

/** A copy brought to what `$metadata` declares now: sets it no longer lists dropped, each record as declared. */
function applyDeclared(copy: Copy, declared: ReadonlyMap<string, DeclaredSet>): void {
  for (const [set, records] of copy) {
    const d = declared.get(set);
    if (!d) {
      copy.delete(set);
      continue;
    }
    for (const [k, r] of records) records.set(k, asDeclared(d, r));
  }
}

export class TimestampConsumer {
  readonly copy: Copy = new Map();
  readonly marks = new Map<string, string>();
  /** Records each catch-up received, by set (its increments and whole walks). */
  received = new Map<string, number>();

  constructor(private readonly headers: Record<string, string>, private readonly excluded: readonly string[]) {}

  /** Each set walked whole, to its last page. */
  async initialPull(base: string): Promise<void> {
    const declared = await readDeclared(base, this.headers);
    for (const set of await listedSets(base, this.headers, this.excluded)) {
      const records = await walkSet(base, declared.get(set)!, '', this.headers, 1000);
      this.copy.set(set, records);
      this.advance(set, [...records.values()]);
    }
  }

  /** $metadata read again and applied; each set's increment from its mark (or, without a timestamp, a whole walk); the removed-records check. */
  async catchUp(base: string): Promise<void> {
    const declared = await readDeclared(base, this.headers);
    applyDeclared(this.copy, declared);
    this.received = new Map();
    for (const set of await listedSets(base, this.headers, this.excluded)) {
      const d = declared.get(set)!;
      const store = this.copy.get(set) ?? this.copy.set(set, new Map()).get(set)!;
      const mark = this.marks.get(set);
      const stamped = d.fields.get(TIMESTAMP)?.type === 'Edm.DateTimeOffset';
      const query = stamped && mark ? `?$filter=${encodeURIComponent(`${TIMESTAMP} ge ${odataString(mark)}`)}` : '';
      const records = await walkSet(base, d, query, this.headers, 1000);
      if (!stamped) store.clear();
      for (const [k, r] of records) store.set(k, asDeclared(d, r));
      this.received.set(set, records.size);
      this.advance(set, [...records.values()]);
      const seen = new Set((await walkSet(base, d, `?$select=${d.key}`, this.headers, 1000)).keys());
      for (const k of [...store.keys()]) if (!seen.has(k)) store.delete(k);
    }
  }

  private advance(set: string, records: readonly Rec[]): void {
    for (const r of records) {
      const ts = r[TIMESTAMP];
      if (typeof ts === 'string' && !(ts <= (this.marks.get(set) ?? ''))) this.marks.set(set, ts);
    }
  }
}

/** Fetches at once (within a client's MAX_CONCURRENT_REQUESTS). */
const FETCHES_AT_ONCE = 4;

export class EventConsumer {
  readonly copy: Copy = new Map();
  mark = 0;
  /** Records the last catch-up fetched, and of those, answered 404. */
  fetched = 0;
  gone = 0;

  constructor(private readonly headers: Record<string, string>, private readonly changeLog: string, private readonly excluded: readonly string[]) {}

  async initialWalk(base: string): Promise<void> {
    const newest = await get(`${base}/${this.changeLog}?$orderby=EntityEventSequence desc&$top=1`, this.headers);
    if (newest.status !== 200) throw new Error(`the change log answered ${newest.status}: ${newest.text.slice(0, 300)}`);
    this.mark = newest.json.value[0]?.EntityEventSequence ?? 0;
    const declared = await readDeclared(base, this.headers);
    for (const set of await listedSets(base, this.headers, this.excluded)) this.copy.set(set, await walkSet(base, declared.get(set)!, '', this.headers, 1000));
  }

  async catchUp(base: string): Promise<void> {
    const declared = await readDeclared(base, this.headers);
    applyDeclared(this.copy, declared);
    this.fetched = 0;
    this.gone = 0;
    const filter = encodeURIComponent(`EntityEventSequence gt ${this.mark}`);
    // Each page's records are fetched before the next page is asked for (`between`), the last page's after the walk.
    const walk = await walkPages(`${base}/${this.changeLog}?$filter=${filter}`, {
      headers: this.headers,
      between: (_i, page) => this.applyPage(base, declared, page.json.value as Rec[]),
    });
    await this.applyPage(base, declared, walk.pages[walk.pages.length - 1].json.value as Rec[]);
  }

  private async applyPage(base: string, declared: ReadonlyMap<string, DeclaredSet>, events: readonly Rec[]): Promise<void> {
    const named = new Map<string, [string, string]>();
    for (const e of events) {
      if (this.copy.has(e.ResourceName)) named.set(`${e.ResourceName}\u0000${e.ResourceRecordKey}`, [e.ResourceName, String(e.ResourceRecordKey)]);
    }
    const queue = [...named.values()];
    const worker = async () => {
      for (let item = queue.shift(); item; item = queue.shift()) {
        const [set, key] = item;
        const d = declared.get(set)!;
        const r = await get(`${base}/${set}${keySegment(d, key)}`, this.headers);
        this.fetched++;
        if (r.status === 200) this.copy.get(set)!.set(key, asDeclared(d, withoutAnnotations(r.json)));
        else if (r.status === 404) { this.copy.get(set)!.delete(key); this.gone++; }
        else throw new Error(`GET ${set}${keySegment(d, key)} answered ${r.status}: ${r.text.slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: FETCHES_AT_ONCE }, worker));
    if (events.length) this.mark = events[events.length - 1].EntityEventSequence;
  }
}
