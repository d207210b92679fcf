/**
 * A replicating client that does exactly what the specification tells one to, for every resource, over
 * HTTP only (it never looks at the database), and nothing more:
 *
 * - §4 Paging: every query is read by following @odata.nextLink unchanged until a page has none.
 * - §4 Recommended practice: the first pull reads each set whole in the default order (ModificationTimestamp,
 *   then the key); after that, each pull asks only for `$filter=ModificationTimestamp gt '<last seen>'` (the
 *   spec's quoted form) and follows nextLink to the end.
 * - §4 Expansion rule 4: Media, OpenHouse and HistoryTransactional are replicated from their own endpoints,
 *   each by its own ModificationTimestamp, exactly like Property. The consumer never re-reads related records
 *   by their listing's key: the service must bring back, in a set's own increments, every record that
 *   (re)appears for this client, whatever moved it (src/ingest/followers.ts).
 * - §3: a listing seen with MlsStatus 'Delete' is deleted from the store, and the consumer remembers that it
 *   is deleted: its replica (`replica()`) leaves out that listing's related records. They stay in the set
 *   stores as served, because whether they count depends on the listing's latest state, which a later
 *   Property increment may bring after the related records' own increment.
 * - §4 Removed-listings check, for every set: periodically a key-only walk (`$select=<key>`) of the whole
 *   set; every stored record whose key did not appear is removed.
 *
 * The high-water mark of a pull is the ModificationTimestamp of the LAST record the pull returned (the
 * largest, since the order is ModificationTimestamp ascending), taken only when the pull reached its last
 * page: a consumer interrupted mid-walk keeps what it applied and starts again from its previous mark.
 * Why this misses nothing: each write transaction takes one timestamp from the database's clock, strictly
 * increasing, under a lock held until commit (src/storage/settings.ts), so transactions become visible in
 * timestamp order; a record changed while a pull runs gets a later timestamp than the walk's position and
 * is met later in the same walk or by the next increment.
 */
import { refusedForNow } from './next-links';
import { odataString, PagingError, Rec, walkPages, Walk } from './replication-paging';

export type RelatedSet = 'Media' | 'OpenHouse' | 'HistoryTransactional';
export type ReplicatedSet = 'Property' | RelatedSet;

export interface RelatedSpec {
  readonly set: RelatedSet;
  readonly key: string;
  /** The field holding the ListingKey (the foreign key named in Property's navigation). */
  readonly parent: string;
}

export const RELATED: readonly RelatedSpec[] = [
  { set: 'Media', key: 'MediaKey', parent: 'ResourceRecordKey' },
  { set: 'OpenHouse', key: 'OpenHouseKey', parent: 'ListingKey' },
  { set: 'HistoryTransactional', key: 'HistoryTransactionalKey', parent: 'ResourceRecordKey' },
];

export const SETS: readonly ReplicatedSet[] = ['Property', ...RELATED.map((r) => r.set)];
export const keyOf = (set: ReplicatedSet) => (set === 'Property' ? 'ListingKey' : RELATED.find((r) => r.set === set)!.key);

export interface ConsumerStats {
  requests: number;
  recordsReceived: number;
  /** Records each set's ModificationTimestamp increments returned (after the first pull). */
  incrementRecords: Record<ReplicatedSet, number>;
  incrementalPulls: number;
  /** Listings deleted because they arrived with MlsStatus 'Delete'. */
  deletedByStatus: number;
  /** Records removed because a key-only walk of their set did not see them. */
  removedByCheck: Record<ReplicatedSet, number>;
  checks: number;
  /** Walks abandoned mid-way (the consumer "restarted" and went on from its last mark). */
  interruptions: number;
}

/** Records of one set by key. */
export class SetStore {
  readonly byKey = new Map<string, Rec>();

  constructor(readonly key: string) {}

  upsert(r: Rec): void {
    this.byKey.set(r[this.key] as string, r);
  }

  remove(key: string): boolean {
    return this.byKey.delete(key);
  }
}

export interface ConsumerOptions {
  /** Headers sent with every request (the client's bearer token). */
  headers?: Record<string, string>;
  /** Service roots to read from: each pull picks the next one in turn (two instances over one database). */
  bases?: readonly string[];
  /** Chance that a walk is abandoned after one of its pages (a consumer killed mid-walk and restarted). */
  interruptChance?: number;
  /** The consumer's own random source (so that runs repeat). */
  random?: () => number;
  /**
   * An instance that answers 503 with Retry-After (its database node is down) is taken out of rotation as a
   * balancer would: the walk is abandoned and taken up again from the mark, on the next instance. Without this,
   * any answer but 200 fails the test.
   */
  toleratesUnavailable?: boolean;
}

class Interrupted extends Error {}

interface PullRecord {
  readonly set: ReplicatedSet;
  readonly mark: string | undefined;
  readonly pages: { from: string; at: string; n: number; first?: string; last?: string }[];
  completed: boolean;
}

/** What instances answered while out of service: 503s with Retry-After, by service root. */
export type Unavailability = Map<string, number>;

/** An empty store for each replicated set. */
export function emptyStores(): Record<ReplicatedSet, SetStore> {
  return Object.fromEntries(SETS.map((set) => [set, new SetStore(keyOf(set))])) as Record<ReplicatedSet, SetStore>;
}

export class ReplicationConsumer {
  readonly stores = emptyStores();
  /** Listings seen in status Delete (and not seen otherwise since): their related records are not kept. */
  readonly deleted = new Set<string>();
  /** High-water mark per set: the last ModificationTimestamp a completed pull of that set returned. */
  readonly marks: Partial<Record<ReplicatedSet, string>> = {};
  readonly stats: ConsumerStats = {
    requests: 0, recordsReceived: 0, incrementRecords: { Property: 0, Media: 0, OpenHouse: 0, HistoryTransactional: 0 }, incrementalPulls: 0,
    deletedByStatus: 0, removedByCheck: { Property: 0, Media: 0, OpenHouse: 0, HistoryTransactional: 0 }, checks: 0, interruptions: 0,
  };

  /** Who waits for the consumer's next read (see `nextRead`). */
  private readers: (() => void)[] = [];
  /** 503s with Retry-After that abandoned a walk, by the service root that answered them. */
  readonly unavailable: Unavailability = new Map();
  private turn = 0;

  constructor(base: string, private readonly options: ConsumerOptions = {}) {
    this.bases = options.bases ?? [base];
    this.interruptChance = options.interruptChance ?? 0;
  }

  private readonly bases: readonly string[];
  /** Chance that a walk is abandoned after one of its pages (set to 0 for a last, complete pull). */
  interruptChance: number;

  /** Takes up where `earlier` stopped (its marks, stores and deleted listings): the same client, now reading elsewhere. */
  continueFrom(earlier: ReplicationConsumer): this {
    Object.assign(this.marks, earlier.marks);
    for (const [k, v] of earlier.stories) this.stories.set(k, [...v]);
    this.pullLog.push(...earlier.pullLog);
    for (const set of SETS) for (const r of earlier.stores[set].byKey.values()) this.stores[set].upsert(r);
    for (const k of earlier.deleted) this.deleted.add(k);
    return this;
  }

  get listings(): Map<string, Rec> {
    return this.stores.Property.byKey;
  }

  /** Resolves once the consumer has finished its next read (one query followed to its last page, or abandoned). */
  nextRead(): Promise<void> {
    return new Promise((resolve) => this.readers.push(resolve));
  }

  /** Full pull of every set, Property first; a walk abandoned mid-way is taken up again from the start. */
  async initialPull(): Promise<void> {
    for (const set of SETS) while (!(await this.pull(set, undefined)));
  }

  /** One incremental pull of every set from its mark (an abandoned walk is simply left to the next round). */
  async incrementalPull(): Promise<void> {
    this.stats.incrementalPulls++;
    for (const set of SETS) await this.pull(set, this.marks[set]);
  }

  /**
   * §4 Removed-listings check for every set: a key-only walk of the whole set, to the end; stored records
   * whose key did not appear are removed. Returns the listing keys removed.
   */
  async removedRecordsCheck(): Promise<string[]> {
    this.stats.checks++;
    const removed: string[] = [];
    for (const set of SETS) {
      const key = keyOf(set);
      // Keys are small: larger pages, as a client asks for them (Prefer, repeated on every page).
      let walk: Walk;
      const base = this.base();
      try {
        walk = await this.walk(`${base}/${set}?$select=${key}`, () => undefined, false, { Prefer: 'odata.maxpagesize=1000' });
      } catch (e) {
        // A check that did not reach the end removes nothing: the next one will.
        if (this.outOfService(e)) continue;
        throw e;
      }
      const seen = new Set<string>();
      for (const r of walk.records) {
        if (Object.keys(r).join() !== key) throw new Error(`$select=${key} returned ${JSON.stringify(r)}`);
        seen.add(r[key]);
      }
      const store = this.stores[set];
      for (const k of [...store.byKey.keys()]) {
        if (seen.has(k)) continue;
        store.remove(k);
        this.note(set, k, `removed by check ${this.stats.checks} on ${base}`);
        this.stats.removedByCheck[set]++;
        if (set === 'Property') removed.push(k);
      }
    }
    return removed;
  }

  /** Reads one set from the mark (or whole) and applies it page by page; false when the walk was abandoned. */
  private async pull(set: ReplicatedSet, mark: string | undefined): Promise<boolean> {
    const base = `${this.base()}/${set}`;
    const url = mark === undefined ? base : `${base}?$filter=${encodeURIComponent(`ModificationTimestamp gt ${odataString(mark)}`)}`;
    const logged: PullRecord = { set, mark, pages: [], completed: false };
    this.pullLog.push(logged);
    const apply = (records: Rec[], from?: string) => {
      logged.pages.push({ from: from ?? base, at: new Date().toISOString(), n: records.length, first: records[0]?.ModificationTimestamp, last: records[records.length - 1]?.ModificationTimestamp });
      if (mark !== undefined) this.stats.incrementRecords[set] += records.length;
      for (const r of records) {
        (set === 'Property' ? this.applyListing(r) : this.applyRelated(set, r));
        this.note(set, r[keyOf(set)] as string, `received at ${r.ModificationTimestamp} from ${base} after mark ${mark ?? '(none)'}`);
      }
    };
    try {
      this.advance(set, await this.walk(url, apply, true));
      logged.completed = true;
      return true;
    } catch (e) {
      if (!(e instanceof Interrupted) && !this.outOfService(e)) throw e;
      this.stats.interruptions++;
      return false;
    }
  }

  /** Whether `e` is a 503 with Retry-After this consumer tolerates (counted); anything else is the test's failure. */
  private outOfService(e: unknown): boolean {
    if (!(e instanceof PagingError) || !this.options.toleratesUnavailable || !e.page || !refusedForNow(e.page)) return false;
    const url = e.url ?? '';
    const root = this.bases.find((b) => url.startsWith(b)) ?? url;
    this.unavailable.set(root, (this.unavailable.get(root) ?? 0) + 1);
    return true;
  }

  private applyListing(r: Rec): void {
    const key = r.ListingKey as string;
    if (r.MlsStatus !== 'Delete') {
      this.stores.Property.upsert(r);
      this.deleted.delete(key);
      return;
    }
    if (this.stores.Property.remove(key)) this.stats.deletedByStatus++;
    this.deleted.add(key);
  }

  private applyRelated(set: RelatedSet, r: Rec): void {
    this.stores[set].upsert(r);
  }

  /** What the consumer holds: its listings, and the related records of every listing it has not seen deleted. */
  replica(): Record<ReplicatedSet, Map<string, Rec>> {
    const out = { Property: this.stores.Property.byKey } as Record<ReplicatedSet, Map<string, Rec>>;
    for (const spec of RELATED) out[spec.set] = new Map([...this.stores[spec.set].byKey].filter(([, r]) => !this.deleted.has(r[spec.parent])));
    return out;
  }

  /** The new mark is the last record's timestamp; an empty pull keeps the old one. */
  private advance(set: ReplicatedSet, walk: Walk): void {
    const last = walk.records[walk.records.length - 1];
    if (!last) return;
    const ts = last.ModificationTimestamp as string;
    const before = this.marks[set];
    if (before !== undefined && !(ts > before)) throw new Error(`${set}: a pull after '${before}' ended at '${ts}'`);
    this.marks[set] = ts;
  }

  /** What happened to a record in this consumer, in order (for a failing comparison to explain itself). */
  story(set: ReplicatedSet, key: string): string {
    return (this.stories.get(`${set} ${key}`) ?? ['never received']).join('; ');
  }

  /**
   * The pulls of `set` whose range held `timestamp` (from their mark, exclusive, to their last record): each should
   * have returned a record at that timestamp that was in view when it passed it.
   */
  pullsPassing(set: ReplicatedSet, timestamp: string): string[] {
    return this.pullLog.filter((p) => p.set === set && (p.mark === undefined || p.mark < timestamp)).flatMap((p) => {
      // The page that passed the timestamp, and the one before it.
      const i = p.pages.findIndex((g) => g.last !== undefined && g.last >= timestamp);
      if (i < 0) return [];
      const pages = p.pages.slice(Math.max(0, i - 1), i + 1).map((g) => `[${g.from} at ${g.at.slice(11)}: ${g.n} from ${g.first} to ${g.last}]`);
      return [`pull from ${p.mark ?? '(start)'}${p.completed ? '' : ' (abandoned)'}, page ${i + 1} of ${p.pages.length}: ${pages.join(' ')}`];
    });
  }

  private readonly stories = new Map<string, string[]>();
  /** Every pull this client made (its pages: where from, when, which timestamps), for a failing comparison. */
  private readonly pullLog: PullRecord[] = [];

  private note(set: ReplicatedSet, key: string, what: string): void {
    const k = `${set} ${key}`;
    const list = this.stories.get(k) ?? this.stories.set(k, []).get(k)!;
    list.push(what);
  }

  private base(): string {
    return this.bases[this.turn++ % this.bases.length];
  }

  /** Follows a query to its end, applying each page as it arrives; may be abandoned after a page. */
  private async walk(url: string, apply: (records: Rec[], from?: string) => void, interruptible: boolean, headers: Record<string, string> = {}): Promise<Walk> {
    const random = this.options.random ?? Math.random;
    let current = url;
    const rootOf = (u: string) => this.bases.find((b) => u.startsWith(b)) ?? u;
    try {
      const walk = await walkPages(url, {
        headers: { ...this.options.headers, ...headers },
        between: async (_index, page) => {
          apply(page.json.value, rootOf(current));
          if (interruptible && random() < this.interruptChance) throw new Interrupted();
        },
        // Pages of one walk may come from any instance: the nextLink's token is the database's, not the process's.
        rewrite: (next) => (current = this.bases.length > 1 ? swapBase(next, this.bases) : next),
      });
      this.count(walk.pages.length, walk.records.length);
      apply(walk.pages[walk.pages.length - 1].json.value, rootOf(current));
      return walk;
    } finally {
      const waiting = this.readers;
      this.readers = [];
      for (const resolve of waiting) resolve();
    }
  }

  private count(pages: number, records: number): void {
    this.stats.requests += pages;
    this.stats.recordsReceived += records;
  }
}

/** The same nextLink on the other instance. */
function swapBase(next: string, bases: readonly string[]): string {
  const from = bases.find((b) => next.startsWith(b));
  if (!from) return next;
  return bases[(bases.indexOf(from) + 1) % bases.length] + next.slice(from.length);
}
