/**
 * A replicating client that does exactly what the specification tells one to, over HTTP only (it never
 * looks at the database):
 *
 * - §4 Paging: every query is read by following @odata.nextLink unchanged until a page has none.
 * - §4 Recommended practice 1: the first pull reads the whole Property set in the default order
 *   (ModificationTimestamp, then ListingKey); after that, each pull asks only for
 *   `$filter=ModificationTimestamp gt '<last seen>'` (the spec's quoted form) and follows nextLink to the end.
 * - §3: a listing seen with MlsStatus 'Delete' is deleted from the store (with its related records), and
 *   the consumer remembers that it is deleted.
 * - §4 Removed-listings check: periodically `$select=ListingKey` over the whole feed, following nextLink to
 *   the end; every stored listing whose key did not appear is removed, with its related records.
 * - §4 Expansion rule 4: Media, OpenHouse and HistoryTransactional are replicated from their own endpoints
 *   by ModificationTimestamp (a full first pull, then `gt` increments).
 *
 * The high-water mark of a pull is the ModificationTimestamp of the LAST record the pull returned (the
 * largest, since the order is ModificationTimestamp ascending). It is never the client's clock and never a
 * value taken before the pull finished. Why this misses nothing, given what the service promises
 * (src/storage/settings.ts: each write transaction takes one timestamp, strictly increasing, under a lock
 * held until commit, so transactions become visible in timestamp order):
 *   - a record changed while the pull is under way gets a timestamp later than every record committed
 *     before it, hence later than the page position the walk has reached, so a later page of the same walk
 *     returns it (the keyset position only moves forward through the timestamp order);
 *   - once a page query has seen a record at time T, every transaction with a timestamp ≤ T had committed
 *     before that query read, so nothing at or before the mark can appear afterwards, and `gt` (not `ge`)
 *     is exact: one transaction's records share one timestamp and become visible together.
 *
 * Related records, and why the consumer also re-syncs them by listing: a related record that is removed,
 * or that disappears from the feed with its listing, cannot show up in a ModificationTimestamp query, and
 * a related record that reappears (its listing returns to the feed, or it was written before its listing
 * existed) keeps its old timestamp. The service does move the listing's ModificationTimestamp whenever a
 * related record changes and whenever the listing itself changes. So whenever the consumer sees a listing
 * (not in status Delete) in an incremental pull, it replaces that listing's related records with what
 * `/Media?$filter=ResourceRecordKey eq 'K'`, `/OpenHouse?$filter=ListingKey eq 'K'` and
 * `/HistoryTransactional?$filter=ResourceRecordKey eq 'K'` return now. That is the practice this test
 * relies on; the timestamp increments of the related endpoints still carry every ordinary change.
 * The first pull does not need it: the related sets are read whole after the Property pull, and a listing
 * that changes after its record was read is seen again by the next increment.
 */
import { odataString, Rec, walkPages, Walk } from './replication-paging';

export type RelatedSet = 'Media' | 'OpenHouse' | 'HistoryTransactional';

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

export interface ConsumerStats {
  requests: number;
  recordsReceived: number;
  /** Records each set's ModificationTimestamp increments returned (after the first pull). */
  incrementRecords: Record<'Property' | RelatedSet, number>;
  incrementalPulls: number;
  listingUpserts: number;
  /** Listings deleted because they arrived with MlsStatus 'Delete'. */
  deletedByStatus: number;
  /** Listings removed because the removed-listings check did not see them. */
  removedByCheck: number;
  relatedRemovedByCheck: number;
  relatedRemovedByResync: number;
  /** Listings whose related records were re-read by foreign key. */
  resyncs: number;
  checks: number;
}

/** Records of one related set, indexed by key and by listing. */
export class RelatedStore {
  readonly byKey = new Map<string, Rec>();
  private readonly byParent = new Map<string, Set<string>>();

  constructor(readonly spec: RelatedSpec) {}

  upsert(r: Rec): void {
    const key = r[this.spec.key] as string;
    this.remove(key);
    this.byKey.set(key, r);
    const parent = r[this.spec.parent] as string | undefined;
    if (parent !== undefined && parent !== null) {
      let keys = this.byParent.get(parent);
      if (!keys) this.byParent.set(parent, (keys = new Set()));
      keys.add(key);
    }
  }

  remove(key: string): boolean {
    const r = this.byKey.get(key);
    if (!r) return false;
    this.byKey.delete(key);
    const parent = r[this.spec.parent] as string | undefined;
    if (parent !== undefined && parent !== null) {
      const keys = this.byParent.get(parent);
      keys?.delete(key);
      if (keys && keys.size === 0) this.byParent.delete(parent);
    }
    return true;
  }

  keysOf(parent: string): string[] {
    return [...(this.byParent.get(parent) ?? [])];
  }

  parents(): string[] {
    return [...this.byParent.keys()];
  }
}

export interface ConsumerOptions {
  /** Listings whose related records are re-read at the same time (each listing's three reads stay in order). */
  resyncConcurrency?: number;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export class ReplicationConsumer {
  readonly listings = new Map<string, Rec>();
  readonly related: Record<RelatedSet, RelatedStore> = {
    Media: new RelatedStore(RELATED[0]),
    OpenHouse: new RelatedStore(RELATED[1]),
    HistoryTransactional: new RelatedStore(RELATED[2]),
  };
  /** Listings seen in status Delete (and not seen otherwise since): their related records are not kept. */
  readonly deleted = new Set<string>();
  /** High-water mark per set: the last ModificationTimestamp a pull of that set returned. */
  readonly marks: Partial<Record<'Property' | RelatedSet, string>> = {};
  readonly stats: ConsumerStats = {
    requests: 0, recordsReceived: 0, incrementRecords: { Property: 0, Media: 0, OpenHouse: 0, HistoryTransactional: 0 }, incrementalPulls: 0, listingUpserts: 0, deletedByStatus: 0, removedByCheck: 0,
    relatedRemovedByCheck: 0, relatedRemovedByResync: 0, resyncs: 0, checks: 0,
  };

  /** Who waits for the consumer's next read (see `nextRead`). */
  private readers: (() => void)[] = [];

  constructor(private readonly base: string, private readonly options: ConsumerOptions = {}) {}

  /** Resolves once the consumer has finished its next read (one query followed to its last page). */
  nextRead(): Promise<void> {
    return new Promise((resolve) => this.readers.push(resolve));
  }

  /** Full pull: Property first, then each related set (see the header for why in this order). */
  async initialPull(): Promise<void> {
    await this.pullListings(undefined);
    for (const spec of RELATED) await this.pullRelated(spec, undefined);
  }

  /** One incremental pull of every set: changed listings (and their related records by key), then related changes. */
  async incrementalPull(): Promise<{ listingsSeen: number }> {
    this.stats.incrementalPulls++;
    const changed = await this.pullListings(this.marks.Property);
    await this.resync(changed);
    for (const spec of RELATED) await this.pullRelated(spec, this.marks[spec.set]);
    return { listingsSeen: changed.length };
  }

  /**
   * §4 Removed-listings check: the whole feed with $select=ListingKey, to the end; stored listings whose key
   * did not appear are removed with their related records, and so are related records of any listing that
   * did not appear. Returns the keys removed.
   */
  async removedListingsCheck(): Promise<string[]> {
    this.stats.checks++;
    const walk = await this.walk(`${this.base}/Property?$select=ListingKey`);
    const seen = new Set<string>();
    for (const r of walk.records) {
      const keys = Object.keys(r);
      if (keys.length !== 1 || keys[0] !== 'ListingKey') throw new Error(`$select=ListingKey returned ${JSON.stringify(r)}`);
      seen.add(r.ListingKey);
    }
    const removed: string[] = [];
    for (const key of [...this.listings.keys()]) {
      if (!seen.has(key)) {
        this.listings.delete(key);
        removed.push(key);
        this.stats.removedByCheck++;
      }
    }
    for (const store of Object.values(this.related)) {
      for (const parent of store.parents()) {
        if (seen.has(parent)) continue;
        for (const key of store.keysOf(parent)) if (store.remove(key)) this.stats.relatedRemovedByCheck++;
      }
    }
    return removed;
  }

  /** Reads Property from the mark (or whole), applies §3, and returns the keys of listings to re-sync. */
  private async pullListings(mark: string | undefined): Promise<string[]> {
    const url = mark === undefined
      ? `${this.base}/Property`
      : `${this.base}/Property?$filter=${encodeURIComponent(`ModificationTimestamp gt ${odataString(mark)}`)}`;
    const walk = await this.walk(url);
    if (mark !== undefined) this.stats.incrementRecords.Property += walk.records.length;
    const changed = new Set<string>();
    for (const r of walk.records) {
      const key = r.ListingKey as string;
      if (r.MlsStatus === 'Delete') {
        this.deleteListing(key);
        changed.delete(key);
      } else {
        this.listings.set(key, r);
        this.deleted.delete(key);
        this.stats.listingUpserts++;
        changed.add(key);
      }
    }
    this.advance('Property', walk);
    return [...changed];
  }

  private async pullRelated(spec: RelatedSpec, mark: string | undefined): Promise<void> {
    const url = mark === undefined
      ? `${this.base}/${spec.set}`
      : `${this.base}/${spec.set}?$filter=${encodeURIComponent(`ModificationTimestamp gt ${odataString(mark)}`)}`;
    const walk = await this.walk(url);
    if (mark !== undefined) this.stats.incrementRecords[spec.set] += walk.records.length;
    const store = this.related[spec.set];
    for (const r of walk.records) this.applyRelated(store, r);
    this.advance(spec.set, walk);
  }

  private applyRelated(store: RelatedStore, r: Rec): void {
    const parent = r[store.spec.parent] as string | undefined;
    if (parent !== undefined && this.deleted.has(parent)) store.remove(r[store.spec.key]);
    else store.upsert(r);
  }

  /** Replaces each listing's related records with what the service has for it now (by foreign key). */
  private async resync(keys: readonly string[]): Promise<void> {
    const queue = [...keys];
    const worker = async () => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
        this.stats.resyncs++;
        for (const spec of RELATED) {
          const walk = await this.walk(`${this.base}/${spec.set}?$filter=${encodeURIComponent(`${spec.parent} eq ${odataString(key)}`)}`);
          const store = this.related[spec.set];
          const now = new Set<string>();
          for (const r of walk.records) {
            if (r[spec.parent] !== key) throw new Error(`${spec.set} filtered on ${spec.parent} eq '${key}' returned ${JSON.stringify(r).slice(0, 200)}`);
            now.add(r[spec.key]);
            this.applyRelated(store, r);
          }
          for (const old of store.keysOf(key)) {
            if (!now.has(old) && store.remove(old)) this.stats.relatedRemovedByResync++;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.options.resyncConcurrency ?? 1) }, worker));
  }

  private deleteListing(key: string): void {
    if (this.listings.delete(key)) this.stats.deletedByStatus++;
    this.deleted.add(key);
    for (const store of Object.values(this.related)) for (const k of store.keysOf(key)) store.remove(k);
  }

  /** The new mark is the last record's timestamp; an empty pull keeps the old one. */
  private advance(set: 'Property' | RelatedSet, walk: Walk): void {
    const last = walk.records[walk.records.length - 1];
    if (!last) return;
    const ts = last.ModificationTimestamp as string;
    const before = this.marks[set];
    if (before !== undefined && !(ts > before)) throw new Error(`${set}: a pull after '${before}' ended at '${ts}'`);
    this.marks[set] = ts;
  }

  private async walk(url: string): Promise<Walk> {
    const walk = await walkPages(url, { headers: this.options.headers });
    this.stats.requests += walk.pages.length;
    this.stats.recordsReceived += walk.records.length;
    const waiting = this.readers;
    this.readers = [];
    for (const resolve of waiting) resolve();
    return walk;
  }
}
