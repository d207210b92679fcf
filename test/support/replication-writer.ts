/**
 * A random writer for the replication tests: it changes listings and their related records through the
 * service's own ingest (`ingestBatch`, one transaction and one ModificationTimestamp per call), in batches
 * of random size so that many changes share one timestamp. It keeps its own copy of what it wrote only to
 * choose plausible operations (which listing is withdrawn, which media a listing has); the tests never use
 * that copy as the expected state: they read the database.
 */
import type { Entity, EntitySetName, HistoryTransactional, Lookups, Media, OpenHouse, Property } from '../../generated/entities';
import { emptyReport, ingestBatch, IngestItem } from '../../src/ingest/ingest';
import type { ListingService } from '../../src/process/service';
import { whileUnavailable } from './poll';

type Rec = Record<string, any>;

/** mulberry32: small, seedable, good enough to pick operations. */
export class Random {
  private state: number;
  constructor(readonly seed: number) { this.state = seed >>> 0; }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number { return min + Math.floor(this.next() * (max - min + 1)); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from nothing');
    return items[Math.floor(this.next() * items.length)];
  }
  weighted<T>(choices: readonly (readonly [T, number])[]): T {
    const total = choices.reduce((s, [, w]) => s + w, 0);
    let x = this.next() * total;
    for (const [v, w] of choices) if ((x -= w) < 0) return v;
    return choices[choices.length - 1][0];
  }
}

/** The related sets the writer changes, by the generated record types. */
interface Children {
  Media: Media;
  OpenHouse: OpenHouse;
  HistoryTransactional: HistoryTransactional;
}
type ChildSet = keyof Children;

/** Where a related record names its key and its listing. */
const CHILD_FIELDS = {
  Media: { key: 'MediaKey', parent: 'ResourceRecordKey' },
  OpenHouse: { key: 'OpenHouseKey', parent: 'ListingKey' },
  HistoryTransactional: { key: 'HistoryTransactionalKey', parent: 'ResourceRecordKey' },
} as const satisfies { [S in ChildSet]: { key: keyof Children[S]; parent: keyof Children[S] } };

/** A line of a batch: a record of the batch's set, or a deletion. */
type Add = (kind: string, input: Readonly<Record<string, unknown>>) => void;

export interface WriterStats {
  batches: number;
  operations: number;
  largestBatch: number;
  /** Operations per kind, e.g. "Property.withdraw". */
  byKind: Record<string, number>;
  /** What ingest reported, summed. */
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
  listingsTouched: number;
}

/** The writer's copy of one set: records by key and keys by listing. */
class Mirror<T extends object> {
  readonly byKey = new Map<string, T>();
  readonly byParent = new Map<string, Set<string>>();
  constructor(private readonly parentField?: keyof T) {}
  set(key: string, r: T): void {
    this.delete(key);
    this.byKey.set(key, r);
    const p = this.parentField ? r[this.parentField] : undefined;
    if (typeof p === 'string') {
      let s = this.byParent.get(p);
      if (!s) this.byParent.set(p, (s = new Set()));
      s.add(key);
    }
  }
  delete(key: string): void {
    const r = this.byKey.get(key);
    if (!r) return;
    this.byKey.delete(key);
    const p = this.parentField ? r[this.parentField] : undefined;
    if (typeof p === 'string') this.byParent.get(p)?.delete(key);
  }
  childrenOf(parent: string): string[] {
    return [...(this.byParent.get(parent) ?? [])];
  }
}

export class RandomWriter {
  /** What this writer did to each listing and its related records, in order (for a failing comparison to explain itself). */
  readonly history = new Map<string, string[]>();
  readonly stats: WriterStats = { batches: 0, operations: 0, largestBatch: 0, byKind: {}, created: 0, updated: 0, unchanged: 0, deleted: 0, listingsTouched: 0 };
  private readonly listings = new Mirror<Property>();
  private readonly children: { [S in ChildSet]: Mirror<Children[S]> } = {
    Media: new Mirror(CHILD_FIELDS.Media.parent),
    OpenHouse: new Mirror(CHILD_FIELDS.OpenHouse.parent),
    HistoryTransactional: new Mirror(CHILD_FIELDS.HistoryTransactional.parent),
  };
  private readonly templates: { Property: Property[] } & { [S in ChildSet]: Children[S][] } = { Property: [], Media: [], OpenHouse: [], HistoryTransactional: [] };
  /** Keys of listings whose related records may be written before the listing itself (§ "related records may arrive before their listing"). */
  private readonly planned: string[] = [];
  private seq = 0;

  private constructor(readonly service: ListingService, readonly rng: Random) {}

  /** A writer over the records now stored. */
  static async create(service: ListingService, seed: number): Promise<RandomWriter> {
    const w = new RandomWriter(service, new Random(seed));
    for (const r of await storedRecords(service, 'Property')) {
      w.listings.set(r.ListingKey, r);
      if (r.MlsStatus === 'Active') w.templates.Property.push(r);
    }
    await w.mirror('Media');
    await w.mirror('OpenHouse');
    await w.mirror('HistoryTransactional');
    if (w.templates.Property.length === 0) throw new Error('the seed data has no Active listing to copy');
    return w;
  }

  private async mirror<S extends ChildSet>(set: S): Promise<void> {
    const records = (await storedRecords(this.service, set)) as Children[S][];
    const mirror = this.children[set] as Mirror<Children[S]>;
    for (const r of records) mirror.set(r[CHILD_FIELDS[set].key as keyof Children[S]] as string, r);
    (this.templates[set] as Children[S][]).push(...records);
    if (records.length === 0) throw new Error(`the seed data has no ${set} record to copy`);
  }

  /**
   * Writes until `operations` operations are done (or `stop()` says so), awaiting `pace()` after each batch:
   * the test passes the reader's next read, so that readers run many times during the writes whatever the
   * machine's speed (and, in one process over SQLite, the server gets the event loop between batches).
   */
  async run(options: { operations: number; maxBatch: number; pace: () => Promise<void>; stop?: () => boolean; retryUnavailable?: boolean }): Promise<WriterStats> {
    while (this.stats.operations < options.operations && !options.stop?.()) {
      await this.batch(Math.min(options.maxBatch, options.operations - this.stats.operations), options.retryUnavailable);
      await options.pace();
    }
    return this.stats;
  }

  /**
   * One ingest call: a random set, a random number of random operations on it. `retryUnavailable`: the call is made
   * again while the database refuses, as an operator's loader does (a refused transaction kept nothing; one whose
   * COMMIT answer was lost is found applied, its records unchanged).
   */
  async batch(maxSize: number, retryUnavailable = false): Promise<void> {
    const rng = this.rng;
    const size = Math.max(1, Math.min(maxSize, rng.weighted([[rng.int(1, 3), 50], [rng.int(4, 15), 35], [rng.int(16, 60), 15]] as const)));
    const set = rng.weighted<'Property' | ChildSet>([['Property', 40], ['Media', 35], ['OpenHouse', 12], ['HistoryTransactional', 13]]);
    const items: IngestItem[] = [];
    const touched: [string, string][] = [];
    const add: Add = (kind, input) => {
      items.push({ line: items.length + 1, input });
      const listing = input.ListingKey ?? input.ResourceRecordKey;
      if (typeof listing === 'string') touched.push([listing, `${set}.${kind}${input['@delete'] ? ' (delete)' : typeof input.MlsStatus === 'string' ? ` (${input.MlsStatus})` : ''}`]);
      this.stats.byKind[`${set}.${kind}`] = (this.stats.byKind[`${set}.${kind}`] ?? 0) + 1;
    };
    while (items.length < size) {
      if (set === 'Property') this.listingOperation(add);
      else this.childOperation(set, add);
    }
    const began = new Date().toISOString();
    const ingest = async () => {
      const attempt = emptyReport();
      await ingestBatch(this.service, set, items, attempt);
      return attempt;
    };
    const report = retryUnavailable ? await whileUnavailable(ingest) : await ingest();
    if (report.errors.length > 0) throw new Error(`writer: ingest of ${set} refused ${JSON.stringify(report.errors.slice(0, 3))}`);
    const committed = new Date().toISOString();
    for (const [listing, what] of touched) {
      const list = this.history.get(listing) ?? this.history.set(listing, []).get(listing)!;
      list.push(`${what} in a batch of ${items.length} begun ${began.slice(11)}, committed by ${committed.slice(11)} (${report.created} created, ${report.updated} updated, ${report.unchanged} unchanged, ${report.deleted} deleted)`);
    }
    this.stats.batches++;
    this.stats.operations += items.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, items.length);
    this.stats.created += report.created;
    this.stats.updated += report.updated;
    this.stats.unchanged += report.unchanged;
    this.stats.deleted += report.deleted;
    this.stats.listingsTouched += report.listingsTouched;
  }

  private listingKeys(pred: (r: Property) => boolean): string[] {
    const out: string[] = [];
    for (const [k, r] of this.listings.byKey) if (pred(r)) out.push(k);
    return out;
  }

  private listingOperation(add: Add): void {
    const rng = this.rng;
    const kind = rng.weighted([
      ['update', 36], ['create', 12], ['delete', 7], ['withdraw', 12], ['return', 12], ['status', 9], ['same', 4],
    ] as const);
    const live = () => this.listingKeys((r) => r.MlsStatus !== 'Delete');
    const put = (k: string, r: Property) => { this.listings.set(k, r); add(kind, r); };
    switch (kind) {
      case 'create': {
        const key = this.planned.length > 0 && rng.chance(0.5) ? this.planned.shift()! : this.newListingKey();
        const t = rng.pick(this.templates.Property);
        put(key, { ...t, ListingKey: key, ListingId: `RP${key}`, MlsStatus: 'Active', ListPrice: rng.int(100, 5000) * 1000 });
        return;
      }
      case 'delete': {
        const keys = live();
        if (keys.length === 0) return;
        const key = rng.pick(keys);
        this.listings.set(key, { ...this.listings.byKey.get(key)!, MlsStatus: 'Delete' });
        add(kind, { ListingKey: key, '@delete': true });
        return;
      }
      case 'withdraw': {
        const keys = this.listingKeys((r) => r.MlsStatus !== 'Delete' && r.MlsStatus !== 'Withdrawn');
        if (keys.length === 0) return;
        const key = rng.pick(keys);
        put(key, { ...this.listings.byKey.get(key)!, MlsStatus: 'Withdrawn' });
        return;
      }
      case 'return': {
        const keys = this.listingKeys((r) => r.MlsStatus === 'Withdrawn');
        if (keys.length === 0) return;
        const key = rng.pick(keys);
        put(key, { ...this.listings.byKey.get(key)!, MlsStatus: 'Active' });
        return;
      }
      case 'status': {
        const keys = live().filter((k) => this.listings.byKey.get(k)!.MlsStatus !== 'Withdrawn');
        if (keys.length === 0) return;
        const key = rng.pick(keys);
        put(key, { ...this.listings.byKey.get(key)!, MlsStatus: rng.pick<Lookups.MlsStatus>(['Active', 'Pending', 'Active Under Contract', 'Closed', 'Hold']) });
        return;
      }
      case 'same': {
        // An identical re-ingest: the service must not move the timestamp (nothing to replicate).
        const key = rng.pick([...this.listings.byKey.keys()]);
        add(kind, { ...this.listings.byKey.get(key)! });
        return;
      }
      case 'update': {
        // Any listing, whatever its status (a withdrawn or deleted listing can still be edited at the source).
        const key = rng.pick([...this.listings.byKey.keys()]);
        const r = { ...this.listings.byKey.get(key)! };
        if (rng.chance(0.5)) r.ListPrice = rng.int(100, 5000) * 1000;
        else r.PublicRemarks = `Updated remarks ${this.seq++} for ${key}.`;
        put(key, r);
        return;
      }
    }
  }

  private newListingKey(): string {
    return `RW${String(this.seq++).padStart(6, '0')}`;
  }

  /** A listing for a related-record change: any listing the writer knows (in any status), or one yet to be created (or never). */
  private targetListing(allowPlanned: boolean): string {
    // Now and then a listing that will never be created (the related record stays parentless).
    if (allowPlanned && this.rng.chance(0.01)) return `RX${String(this.seq++).padStart(6, '0')}`;
    if (allowPlanned && this.rng.chance(0.04)) {
      const key = this.newListingKey();
      this.planned.push(key);
      return key;
    }
    if (allowPlanned && this.planned.length > 0 && this.rng.chance(0.1)) return this.rng.pick(this.planned);
    return this.rng.pick([...this.listings.byKey.keys()]);
  }

  private childOperation(set: ChildSet, add: Add): void {
    if (set === 'Media') this.relatedOperation('Media', add, this.rng.weighted([['add', 30], ['remove', 18], ['reorder', 20], ['replace-url', 16], ['replace-key', 16]] as const));
    else this.relatedOperation(set, add, this.rng.weighted([['add', 40], ['update', 35], ['remove', 25]] as const));
  }

  /** One operation on a related record of a listing: added, removed, or changed (by `kind`). */
  private relatedOperation<S extends ChildSet>(set: S, add: Add, kind: 'add' | 'remove' | 'update' | 'reorder' | 'replace-url' | 'replace-key'): void {
    const rng = this.rng;
    const keyField = CHILD_FIELDS[set].key;
    const mirror = this.children[set] as Mirror<Children[S]>;
    const put = (k: string, r: Children[S]) => { mirror.set(r[keyField as keyof Children[S]] as string, r); add(k, r); };
    const remove = (k: string, key: string) => { mirror.delete(key); add(k, { [keyField]: key, '@delete': true }); };
    const listing = this.targetListing(kind === 'add');
    const existing = mirror.childrenOf(listing);
    if (kind === 'add' || existing.length === 0) {
      put('add', this.fresh(set, listing));
      return;
    }
    const one = rng.pick(existing);
    if (kind === 'remove') { remove(kind, one); return; }
    if (kind === 'replace-key') {
      const current = this.children.Media.byKey.get(one)!;
      remove(kind, one);
      put(kind, { ...this.fresh('Media', listing), Order: current.Order, MediaCategory: current.MediaCategory } as Children[S]);
      return;
    }
    for (const r of this.changed(set, kind, one)) put(kind, r);
  }

  /** A new related record of `listing`, copied from a seeded one. */
  private fresh<S extends ChildSet>(set: S, listing: string): Children[S] {
    const rng = this.rng;
    const t = rng.pick(this.templates[set] as Children[S][]);
    const key = `${listing}-${set === 'Media' ? 'WM' : set === 'OpenHouse' ? 'WOH' : 'WH'}${this.seq++}`;
    const listingId = this.listings.byKey.get(listing)?.ListingId ?? `RP${listing}`;
    const records: { [C in ChildSet]: () => Children[C] } = {
      Media: () => {
        const mirror = this.children.Media;
        const order = Math.max(0, ...mirror.childrenOf(listing).map((k) => mirror.byKey.get(k)!.Order ?? 0)) + 1;
        const doc = rng.chance(0.2);
        return {
          ...(t as Media), MediaKey: key, ResourceRecordKey: listing, ResourceName: 'Property', ResourceRecordID: listingId, Order: order,
          MediaCategory: doc ? 'Document' : 'Photo', MediaType: doc ? 'pdf' : 'jpeg', MediaURL: `https://media.example.com/w/${key}.${doc ? 'pdf' : 'jpg'}`,
          MediaObjectID: key, OriginatingSystemMediaKey: key, SourceSystemMediaKey: key, PreferredPhotoYN: doc ? null : order === 1,
        };
      },
      OpenHouse: () => ({
        ...(t as OpenHouse), OpenHouseKey: key, ListingKey: listing, ListingId: listingId, OpenHouseId: key, OriginatingSystemKey: key,
        SourceSystemKey: key, OpenHouseStatus: 'Active',
      }),
      HistoryTransactional: () => ({
        ...(t as HistoryTransactional), HistoryTransactionalKey: key, ResourceRecordKey: listing, ResourceName: 'Property', ResourceRecordID: listingId,
        OriginatingSystemHistoryKey: key, SourceSystemHistoryKey: key, NewValue: `v${this.seq}`,
      }),
    };
    return records[set]() as Children[S];
  }

  /** The records a change of kind `kind` to the related record `one` writes. */
  private changed<S extends ChildSet>(set: S, kind: 'update' | 'reorder' | 'replace-url', one: string): Children[S][] {
    const rng = this.rng;
    if (set === 'OpenHouse') {
      const current = this.children.OpenHouse.byKey.get(one)!;
      return [{ ...current, OpenHouseStatus: rng.pick<Lookups.OpenHouseStatus>(['Active', 'Canceled', 'Ended']), OpenHouseRemarks: `Note ${this.seq++}` } as Children[S]];
    }
    if (set === 'HistoryTransactional') {
      const current = this.children.HistoryTransactional.byKey.get(one)!;
      return [{ ...current, NewValue: `v${this.seq++}`, PreviousValue: current.NewValue ?? null } as Children[S]];
    }
    const media = this.children.Media;
    const current = media.byKey.get(one)!;
    if (kind === 'replace-url') {
      return [{ ...current, MediaURL: `https://media.example.com/w/${one}/v${this.seq++}.jpg`, MediaModificationTimestamp: new Date().toISOString() } as Children[S]];
    }
    // reorder: swap with a sibling, or move down when alone.
    const siblings = media.childrenOf(current.ResourceRecordKey!).filter((k) => k !== one);
    const other = siblings.length > 0 ? rng.pick(siblings) : undefined;
    if (!other) return [{ ...current, Order: (current.Order ?? 0) + 1 } as Children[S]];
    const b = media.byKey.get(other)!;
    const [oa, ob] = [current.Order, b.Order];
    return [{ ...current, Order: ob === oa ? (oa ?? 0) + 1 : ob }, { ...b, Order: oa }] as Children[S][];
  }
}

/** Every stored record of a set, straight from its table (typed as the set's records when the set is named). */
export async function storedRecords<S extends EntitySetName>(service: ListingService, set: S): Promise<Entity<S>[]>;
export async function storedRecords(service: ListingService, set: string): Promise<Rec[]>;
export async function storedRecords(service: ListingService, set: string): Promise<Rec[]> {
  const rows = await service.db.all(`SELECT _record FROM \`${set}\``);
  return rows.map((row) => JSON.parse(row._record as string) as Rec);
}
