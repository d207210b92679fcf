/**
 * Deterministic demo data for the listing service: offices, members, then listings with their media,
 * open houses, history, rooms and unit types, written batch by batch through the record stores (so every
 * record passes the same validation as any other write). The same options give byte-identical records.
 */
import type { Entity, EntitySetName } from '../../generated/entities';
import type { ServiceModel } from '../model/service-model';
import type { EncodedRecord } from '../storage/record-codec';
import type { RecordStores } from '../storage/record-stores';
import type { RecordWriter } from '../storage/record-writer';
import { LookupValues, RecordBuilder } from './field-values';
import { planListings } from './listing-plan';
import { buildListing, ListingBuilders } from './listing-story';
import { memberRecord, officeRecord, planRoster } from './roster';

export interface SeedOptions {
  listings: number;
  seed?: number;
  /**
   * false: build each listing's child records (the listing's summary fields and random stream depend on them) but
   * write only the listings, the offices and the members: a walk benchmark of a million listings needs the same
   * Property records, and their children would not fit the disk (about 70 KB a listing).
   */
  children?: boolean;
}
export interface SeedSummary { offices: number; members: number; listings: number; media: number; openHouses: number; history: number; rooms: number; units: number }

/** Listings (with their children) per write transaction. */
const LISTING_BATCH = 100;
/** Offices or members per write transaction. */
const ROSTER_BATCH = 1000;

/** What seeding uses: the model's sets and their stores, and write transactions. */
export interface SeedTarget {
  readonly model: ServiceModel;
  readonly stores: RecordStores;
  readonly writer: RecordWriter;
  readonly db: { readonly description: string };
}

/**
 * `onProgress` (the command line's progress display) is called with the listings written after each batch; without
 * it, `log` gets a line every 10,000 listings (a server seeding at start-up).
 */
export async function seedDemoData(
  target: SeedTarget, options: SeedOptions, log?: (line: string) => void, onProgress?: (listings: number) => void,
): Promise<SeedSummary> {
  const count = Math.floor(options.listings);
  if (!Number.isFinite(count) || count < 0) throw new Error(`listings must be a non-negative number (got ${options.listings})`);
  const seed = (options.seed ?? 1) >>> 0;
  const started = performance.now();

  const lookups = new LookupValues(target.model.lookups);
  const builder = <S extends EntitySetName>(name: S): RecordBuilder<S> | undefined => {
    const set = target.model.entitySets.find((s) => s.name === name);
    return set ? new RecordBuilder<S>(set, lookups) : undefined;
  };
  const property = builder('Property');
  if (!property) throw new Error('the model has no Property entity set');
  const builders: ListingBuilders = {
    property,
    media: builder('Media'),
    openHouse: builder('OpenHouse'),
    history: builder('HistoryTransactional'),
    rooms: builder('PropertyRooms'),
    units: builder('PropertyUnitTypes'),
  };
  const write = batchWriter(target);

  // Offices and members first: listings refer to them.
  const roster = planRoster(count, seed);
  const summary: SeedSummary = {
    ...(await writeRoster(write, roster, builder('Office'), builder('Member'), seed)),
    listings: 0, media: 0, openHouses: 0, history: 0, rooms: 0, units: 0,
  };
  const plan = planListings(count, seed, lookups);
  const progressEvery = Math.max(10_000, LISTING_BATCH);
  for (let start = 0; start < count; start += LISTING_BATCH) {
    const listings = Array.from({ length: Math.min(count, start + LISTING_BATCH) - start }, (_, n) => buildListing(start + n, seed, plan, roster, builders, lookups));
    await writeListings(write, listings, summary, options.children ?? true);
    onProgress?.(summary.listings);
    if (!onProgress && log && count > progressEvery && summary.listings % progressEvery === 0 && summary.listings < count) {
      log(`demo data: ${summary.listings}/${count} listings written`);
    }
  }

  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  log?.(`demo data (seed ${seed}): ${summary.listings} listings, ${summary.media} media, ${summary.openHouses} open houses, `
    + `${summary.history} history, ${summary.rooms} rooms, ${summary.units} unit types, ${summary.offices} offices, `
    + `${summary.members} members in ${seconds}s on ${target.db.description}`);
  return summary;
}

/** Records of one set, typed by the set. */
type SetRecords = { [S in EntitySetName]: readonly [S, readonly Entity<S>[]] }[EntitySetName];
type BatchWriter = (batches: readonly SetRecords[]) => Promise<void>;

/** Writes records of several sets in one transaction, naming the demo record that fails to encode. */
function batchWriter(target: SeedTarget): BatchWriter {
  return async (batches) => {
    const encoded: [string, EncodedRecord[]][] = batches.filter(([, records]) => records.length > 0).map(([name, records]) => {
      const store = target.stores.store(name);
      return [name, (records as readonly Readonly<Record<string, unknown>>[]).map((r) => {
        try {
          return store.encode(r);
        } catch (e) {
          const key = r[store.set.key];
          (e as Error).message = `demo ${name} ${String(key)}: ${(e as Error).message}`;
          throw e;
        }
      })];
    });
    await target.writer.transaction(async (tx) => {
      for (const [name, records] of encoded) await tx.upsert(name, records);
    });
  };
}

async function writeRoster(
  write: BatchWriter, roster: ReturnType<typeof planRoster>, offices: RecordBuilder<'Office'> | undefined, members: RecordBuilder<'Member'> | undefined,
  seed: number,
): Promise<{ offices: number; members: number }> {
  if (offices) {
    for (let i = 0; i < roster.offices.length; i += ROSTER_BATCH) {
      await write([['Office', roster.offices.slice(i, i + ROSTER_BATCH).map((o) => officeRecord(o, offices, seed))]]);
    }
  }
  if (members) {
    for (let i = 0; i < roster.members.length; i += ROSTER_BATCH) {
      await write([['Member', roster.members.slice(i, i + ROSTER_BATCH).map((m) => memberRecord(m, members, seed))]]);
    }
  }
  return { offices: offices ? roster.offices.length : 0, members: members ? roster.members.length : 0 };
}

/** One batch of listings with everything that hangs off them, children before their listing in one transaction. */
async function writeListings(
  write: BatchWriter, listings: readonly ReturnType<typeof buildListing>[], summary: SeedSummary, children: boolean,
): Promise<void> {
  const all = <T>(pick: (l: ReturnType<typeof buildListing>) => T[]): T[] => (children ? listings.flatMap(pick) : []);
  const media = all((l) => l.media);
  const openHouses = all((l) => l.openHouses);
  const history = all((l) => l.history);
  const rooms = all((l) => l.rooms);
  const units = all((l) => l.units);
  // Readers see all of it at once, on commit.
  await write([
    ['Media', media], ['OpenHouse', openHouses], ['HistoryTransactional', history],
    ['PropertyRooms', rooms], ['PropertyUnitTypes', units], ['Property', listings.map((l) => l.property)],
  ]);
  summary.listings += listings.length;
  summary.media += media.length;
  summary.openHouses += openHouses.length;
  summary.history += history.length;
  summary.rooms += rooms.length;
  summary.units += units.length;
}
