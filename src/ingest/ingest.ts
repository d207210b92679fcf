/**
 * Ingest: upsert records of one resource by key, with the service (not the input) keeping the change
 * timestamps that replication relies on (spec §2, §3, §4 "Recommended practice"):
 * - ModificationTimestamp moves whenever a record's content changes; an identical re-ingest changes nothing.
 * - A change to a listing's Media, OpenHouse, historyTransactional, PropertyRooms or PropertyUnits records
 *   moves the listing's ModificationTimestamp; Media changes also move PhotosChangeTimestamp (photos) or
 *   DocumentsChangeTimestamp (documents).
 * - Listings are never physically deleted: a delete sets MlsStatus to Delete. Other records are removed.
 * Each batch is one transaction with one timestamp, allocated under the writers' lock (see Settings), so a
 * reader never sees a newer timestamp committed before an older one.
 */
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import type { Database, Executor } from '../storage/database';
import type { RecordStores } from '../storage/record-stores';
import type { Settings } from '../storage/settings';
import { EncodedRecord, RecordError } from '../storage/record-codec';

/** A line's marker for deletion: `{"ListingKey": "L1", "@delete": true}`. */
export const DELETE_MARK = '@delete';

export const LISTING_SET = 'Property';
/** Fields of a listing that the service maintains; input values for them are ignored. */
const SERVICE_TIMESTAMPS = ['ModificationTimestamp', 'PhotosChangeTimestamp', 'DocumentsChangeTimestamp'];
const PHOTO = 'Photo';
const DOCUMENT = 'Document';

export interface IngestItem {
  /** 1-based line number in the input, for reports. */
  readonly line: number;
  readonly input: Readonly<Record<string, unknown>>;
}

export interface IngestReport {
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
  /** Listings whose timestamps moved because their related records changed. */
  listingsTouched: number;
  errors: { line: number; message: string }[];
}

/** What ingest uses: the model's sets and their stores, write transactions, and the clock of ModificationTimestamp. */
export interface IngestTarget {
  readonly model: ServiceModel;
  readonly stores: RecordStores;
  readonly db: Pick<Database, 'transaction'>;
  readonly settings: Pick<Settings, 'nextModificationTime'>;
}

export function emptyReport(): IngestReport {
  return { created: 0, updated: 0, unchanged: 0, deleted: 0, listingsTouched: 0, errors: [] };
}

/** How a child resource hangs off a listing: the field holding the ListingKey, from Property's navigations. */
function parentField(model: ServiceModel, set: EntitySetSpec): string | undefined {
  const listing = model.entitySets.find((s) => s.name === LISTING_SET);
  return listing?.navigations.find((n) => n.target === set.name && n.join)?.join?.foreignKey;
}

/** The listing a child record belongs to, if any (Media and history name their resource). */
function parentOf(record: Readonly<Record<string, unknown>> | undefined, field: string | undefined): string | undefined {
  if (!record || !field) return undefined;
  if (record.ResourceName !== undefined && record.ResourceName !== LISTING_SET) return undefined;
  const key = record[field];
  return typeof key === 'string' ? key : undefined;
}

interface ListingChange {
  photos: boolean;
  documents: boolean;
}

/**
 * Writes one batch in one transaction. Items that fail validation are reported (with their line) and
 * skipped; the caller decides whether a report with errors should have been written at all.
 */
export async function ingestBatch(target: IngestTarget, setName: string, items: readonly IngestItem[], report: IngestReport): Promise<void> {
  const { model, stores, db, settings } = target;
  const set = model.entitySets.find((s) => s.name === setName || s.pathAliases.includes(setName));
  if (!set) throw new Error(`unknown resource ${setName}; resources: ${model.entitySets.map((s) => s.name).join(', ')}`);
  const store = stores.store(set);
  const isListing = set.name === LISTING_SET;
  const parentKeyField = parentField(model, set);

  await db.transaction(async (tx) => {
    const now = await settings.nextModificationTime(tx);
    const keys = [...new Set(items.map((i) => i.input[set.key]).filter((k): k is string | number => typeof k === 'string' || typeof k === 'number'))];
    const current = await store.recordsByKeys(tx, keys);
    const writes = new Map<string | number, EncodedRecord>();
    const removals = new Set<string | number>();
    const touched = new Map<string, ListingChange>();
    const touch = (record: Readonly<Record<string, unknown>> | undefined) => {
      const parent = parentOf(record, parentKeyField);
      if (!parent) return;
      const change = touched.get(parent) ?? { photos: false, documents: false };
      if (set.name === 'Media') {
        change.photos ||= record!.MediaCategory === PHOTO;
        change.documents ||= record!.MediaCategory === DOCUMENT;
      }
      touched.set(parent, change);
    };

    for (const { line, input } of items) {
      try {
        const key = input[set.key];
        if (typeof key !== 'string' && typeof key !== 'number') throw new RecordError(set.key, 'is required');
        const before = current.get(key);
        if (input[DELETE_MARK] === true) {
          if (!before) { report.unchanged++; continue; }
          if (isListing) {
            if (before.MlsStatus === 'Delete') { report.unchanged++; continue; }
            const encoded = store.encode({ ...before, MlsStatus: 'Delete', ModificationTimestamp: now });
            writes.set(key, encoded);
            current.set(key, encoded.value as Record<string, unknown>);
          } else {
            removals.add(key);
            writes.delete(key);
            current.delete(key);
            touch(before);
          }
          report.deleted++;
          continue;
        }
        const { [DELETE_MARK]: _mark, ...fields } = input;
        // The service's timestamps are kept as stored (or stamped now for a new record), whatever the input says.
        const kept = Object.fromEntries(SERVICE_TIMESTAMPS.filter((f) => isListing || f === 'ModificationTimestamp')
          .map((f) => [f, before ? before[f] : f === 'ModificationTimestamp' ? now : undefined]));
        const candidate = store.encode({ ...fields, ...kept });
        if (before && candidate.json === store.encode(before).json) { report.unchanged++; continue; }
        const encoded = before ? store.encode({ ...fields, ...kept, ModificationTimestamp: now }) : candidate;
        writes.set(key, encoded);
        removals.delete(key);
        current.set(key, encoded.value as Record<string, unknown>);
        if (before) report.updated++; else report.created++;
        touch(before);
        touch(encoded.value);
      } catch (e) {
        if (!(e instanceof RecordError)) throw e;
        report.errors.push({ line, message: e.message });
      }
    }

    await store.upsert(tx, [...writes.values()]);
    await store.deleteByKeys(tx, [...removals]);
    if (touched.size > 0) report.listingsTouched += await touchListings(stores, tx, touched, now);
  });
}

/** Moves the timestamps of listings whose related records changed. */
async function touchListings(stores: RecordStores, tx: Executor, touched: Map<string, ListingChange>, now: string): Promise<number> {
  const listings = stores.store(LISTING_SET);
  const stored = await listings.recordsByKeys(tx, [...touched.keys()]);
  const writes: EncodedRecord[] = [];
  for (const [key, change] of touched) {
    const listing = stored.get(key);
    if (!listing) continue; // related records may arrive before their listing
    writes.push(listings.encode({
      ...listing,
      ModificationTimestamp: now,
      ...(change.photos ? { PhotosChangeTimestamp: now } : {}),
      ...(change.documents ? { DocumentsChangeTimestamp: now } : {}),
    }));
  }
  await listings.upsert(tx, writes);
  return writes.length;
}
