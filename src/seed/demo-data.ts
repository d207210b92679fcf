/**
 * Deterministic demo data for the listing service: offices, members, then listings with their media,
 * open houses, history, rooms and unit types, written batch by batch through the record stores (so every
 * record passes the same validation as any other write). The same options give byte-identical records.
 */
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import type { Database } from '../storage/database';
import type { EncodedRecord } from '../storage/record-codec';
import type { RecordStores } from '../storage/record-stores';
import { LookupValues, RecordBuilder } from './field-values';
import { planListings } from './listing-plan';
import { buildListing, ListingBuilders } from './listings';
import { memberRecord, officeRecord, planRoster } from './roster';

export interface SeedOptions { listings: number; seed?: number }
export interface SeedSummary { offices: number; members: number; listings: number; media: number; openHouses: number; history: number; rooms: number; units: number }

/** Listings (with their children) per write transaction. */
const LISTING_BATCH = 100;
/** Offices or members per write transaction. */
const ROSTER_BATCH = 1000;

type Rec = Record<string, unknown>;

/** What seeding uses: the model's sets and their stores, and write transactions. */
export interface SeedTarget {
  readonly model: ServiceModel;
  readonly stores: RecordStores;
  readonly db: Pick<Database, 'transaction' | 'description'>;
}

export async function seedDemoData(target: SeedTarget, options: SeedOptions, log?: (line: string) => void): Promise<SeedSummary> {
  const { model, stores, db } = target;
  const count = Math.floor(options.listings);
  if (!Number.isFinite(count) || count < 0) throw new Error(`listings must be a non-negative number (got ${options.listings})`);
  const seed = (options.seed ?? 1) >>> 0;
  const started = performance.now();

  const lookups = new LookupValues(model.lookups);
  const setNamed = (name: string): EntitySetSpec | undefined => model.entitySets.find((s) => s.name === name);
  const builder = (name: string) => { const set = setNamed(name); return set ? new RecordBuilder(set, lookups) : undefined; };
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
  const officeBuilder = builder('Office');
  const memberBuilder = builder('Member');

  const write = async (batches: readonly (readonly [string, readonly Rec[]])[]): Promise<void> => {
    const encoded: [string, EncodedRecord[]][] = batches.filter(([, records]) => records.length > 0).map(([name, records]) => {
      const store = stores.store(name);
      return [name, records.map((r) => {
        try {
          return store.encode(r);
        } catch (e) {
          const key = r[store.set.key];
          (e as Error).message = `demo ${name} ${String(key)}: ${(e as Error).message}`;
          throw e;
        }
      })];
    });
    await db.transaction(async (tx) => {
      for (const [name, records] of encoded) await stores.store(name).upsert(tx, records);
    });
  };

  // Offices and members first: listings refer to them.
  const roster = planRoster(count, seed);
  if (officeBuilder) {
    for (let i = 0; i < roster.offices.length; i += ROSTER_BATCH) {
      await write([['Office', roster.offices.slice(i, i + ROSTER_BATCH).map((o) => officeRecord(o, officeBuilder, seed))]]);
    }
  }
  if (memberBuilder) {
    for (let i = 0; i < roster.members.length; i += ROSTER_BATCH) {
      await write([['Member', roster.members.slice(i, i + ROSTER_BATCH).map((m) => memberRecord(m, memberBuilder, seed))]]);
    }
  }

  const summary: SeedSummary = {
    offices: officeBuilder ? roster.offices.length : 0,
    members: memberBuilder ? roster.members.length : 0,
    listings: 0, media: 0, openHouses: 0, history: 0, rooms: 0, units: 0,
  };
  const plan = planListings(count, seed, lookups);
  const progressEvery = Math.max(10_000, LISTING_BATCH);
  for (let start = 0; start < count; start += LISTING_BATCH) {
    const batch = { Property: [] as Rec[], Media: [] as Rec[], OpenHouse: [] as Rec[], HistoryTransactional: [] as Rec[], PropertyRooms: [] as Rec[], PropertyUnitTypes: [] as Rec[] };
    for (let i = start; i < Math.min(count, start + LISTING_BATCH); i++) {
      const l = buildListing(i, seed, plan, roster, builders, lookups);
      batch.Property.push(l.property);
      batch.Media.push(...l.media);
      batch.OpenHouse.push(...l.openHouses);
      batch.HistoryTransactional.push(...l.history);
      batch.PropertyRooms.push(...l.rooms);
      batch.PropertyUnitTypes.push(...l.units);
    }
    // Children before their listing within the transaction; readers see all of it at once on commit.
    await write([
      ['Media', batch.Media], ['OpenHouse', batch.OpenHouse], ['HistoryTransactional', batch.HistoryTransactional],
      ['PropertyRooms', batch.PropertyRooms], ['PropertyUnitTypes', batch.PropertyUnitTypes], ['Property', batch.Property],
    ]);
    summary.listings += batch.Property.length;
    summary.media += batch.Media.length;
    summary.openHouses += batch.OpenHouse.length;
    summary.history += batch.HistoryTransactional.length;
    summary.rooms += batch.PropertyRooms.length;
    summary.units += batch.PropertyUnitTypes.length;
    if (log && count > progressEvery && summary.listings % progressEvery === 0 && summary.listings < count) {
      log(`demo data: ${summary.listings}/${count} listings written`);
    }
  }

  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  log?.(`demo data (seed ${seed}): ${summary.listings} listings, ${summary.media} media, ${summary.openHouses} open houses, `
    + `${summary.history} history, ${summary.rooms} rooms, ${summary.units} unit types, ${summary.offices} offices, `
    + `${summary.members} members in ${seconds}s on ${db.description}`);
  return summary;
}
