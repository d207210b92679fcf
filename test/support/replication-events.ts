/**
 * A replicating client driven by the change log alone (RESO RCP-027, EntityEvent), over HTTP only:
 *
 * - Start: note the newest event it can see (`$orderby=EntityEventSequence desc&$top=1`), then walk each set
 *   whole (following nextLink); the noted sequence is its mark. Changes made during the walk have later events.
 * - Then, round after round: read `EntityEvent?$filter=EntityEventSequence gt <mark>`, page by page (nextLink);
 *   for the records each page names, fetch each by key: 200, store it; 404, drop it. The mark moves to a page's
 *   last event once that page's fetches are done; a consumer killed mid-walk goes on from its last mark.
 * - A listing fetched in status Delete is dropped (§3), and its related records are left out of the replica,
 *   as the timestamp consumer does (replication-consumer.ts).
 * It never walks a set again, never re-reads by foreign key, and never looks at the database.
 */
import { get } from './http';
import { emptyStores, keyOf, RELATED, ReplicatedSet, SETS } from './replication-consumer';
import { refusedForNow } from './next-links';
import { Rec, walkPages } from './replication-paging';

export interface EventConsumerStats {
  requests: number;
  events: number;
  fetched: number;
  dropped: number;
  interruptions: number;
}

class Interrupted extends Error {}
class OutOfService extends Error {}

/** Fetches at once per page (within the client's MAX_CONCURRENT_REQUESTS). */
const FETCHES_AT_ONCE = 2;

export class EventConsumer {
  readonly stores = emptyStores();
  readonly deleted = new Set<string>();
  readonly stats: EventConsumerStats = { requests: 0, events: 0, fetched: 0, dropped: 0, interruptions: 0 };
  /** The last event whose record this consumer has applied. */
  mark = 0;
  interruptChance: number;
  /** Service roots read in turn (two instances over one database). */
  bases: readonly string[];
  private turn = 0;

  constructor(base: string, private readonly headers: Record<string, string>, interruptChance: number, private readonly random: () => number) {
    this.bases = [base];
    this.interruptChance = interruptChance;
  }

  /** The newest event seen, then a whole walk of each set. */
  async initialWalk(): Promise<void> {
    const newest = await this.get(`${this.base()}/EntityEvent?$orderby=EntityEventSequence desc&$top=1`);
    this.mark = newest.json.value[0]?.EntityEventSequence ?? 0;
    for (const set of SETS) {
      const walk = await walkPages(`${this.base()}/${set}`, { headers: { ...this.headers, Prefer: 'odata.maxpagesize=200' } });
      this.stats.requests += walk.pages.length;
      for (const r of walk.records) this.apply(set, String(r[keyOf(set)]), r);
    }
  }

  /** Reads the log after the mark to its end (or until killed), fetching what each page names. */
  async increment(): Promise<void> {
    let url: string | undefined = `${this.base()}/EntityEvent?$filter=${encodeURIComponent(`EntityEventSequence gt ${this.mark}`)}`;
    try {
      while (url) {
        const page = await this.get(url);
        const events = page.json.value as Rec[];
        this.stats.events += events.length;
        await this.fetchAll(events);
        if (events.length) this.mark = events[events.length - 1].EntityEventSequence;
        const next = page.json['@odata.nextLink'] as string | undefined;
        if (next && this.random() < this.interruptChance) throw new Interrupted();
        url = next && this.swap(next);
      }
    } catch (e) {
      if (e instanceof OutOfService) {
        this.unavailable++;
        return;
      }
      if (!(e instanceof Interrupted)) throw e;
      this.stats.interruptions++;
    }
  }

  /** What the consumer holds: its listings, and the related records of every listing not seen deleted. */
  replica(): Record<ReplicatedSet, Map<string, Rec>> {
    const out = { Property: this.stores.Property.byKey } as Record<ReplicatedSet, Map<string, Rec>>;
    for (const spec of RELATED) out[spec.set] = new Map([...this.stores[spec.set].byKey].filter(([, r]) => !this.deleted.has(r[spec.parent])));
    return out;
  }

  /** Each record a page names, once, by key; a page may be interrupted before its fetches (the mark stays). */
  private async fetchAll(events: readonly Rec[]): Promise<void> {
    const named = new Map<string, [ReplicatedSet, string]>();
    for (const e of events) {
      if (!(SETS as readonly string[]).includes(e.ResourceName)) continue;
      named.set(`${e.ResourceName}\u0000${e.ResourceRecordKey}`, [e.ResourceName as ReplicatedSet, String(e.ResourceRecordKey)]);
    }
    const queue = [...named.values()];
    const worker = async () => {
      for (let item = queue.shift(); item; item = queue.shift()) {
        const [set, key] = item;
        const r = await get(`${this.base()}/${set}('${key.replace(/'/g, "''")}')`, this.headers);
        this.stats.requests++;
        this.stats.fetched++;
        if (r.status === 200) this.apply(set, key, r.json);
        else if (r.status === 404) this.drop(set, key);
        else if (this.outOfService(r)) throw new OutOfService();
        else throw new Error(`GET ${set}('${key}') answered ${r.status}: ${r.text.slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: FETCHES_AT_ONCE }, worker));
  }

  private apply(set: ReplicatedSet, key: string, r: Rec): void {
    const record = Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('@')));
    if (set === 'Property' && record.MlsStatus === 'Delete') {
      this.stores.Property.remove(key);
      this.deleted.add(key);
      return;
    }
    if (set === 'Property') this.deleted.delete(key);
    this.stores[set].upsert(record);
  }

  private drop(set: ReplicatedSet, key: string): void {
    if (this.stores[set].remove(key)) this.stats.dropped++;
  }

  /**
   * An instance out of service (503 with Retry-After, its node leaving or rejoining the cluster) ends the increment
   * where its last whole page left the mark, as a balancer's client would retry later; only when tolerated.
   */
  toleratesUnavailable = false;
  /** Increments so ended. */
  unavailable = 0;

  private outOfService(r: { status: number; headers: Headers }): boolean {
    return this.toleratesUnavailable && refusedForNow(r);
  }

  private async get(url: string) {
    const r = await get(url, this.headers);
    this.stats.requests++;
    if (this.outOfService(r)) throw new OutOfService();
    if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status}: ${r.text.slice(0, 300)}`);
    return r;
  }

  private base(): string {
    return this.bases[this.turn++ % this.bases.length];
  }

  /** The same nextLink on the next instance, when there are two. */
  private swap(next: string): string {
    const from = this.bases.find((b) => next.startsWith(b));
    return from ? this.base() + next.slice(from.length) : next;
  }
}
