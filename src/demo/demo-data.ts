/**
 * Deterministic demo data, made from the dictionary alone: offices, members, then listings with their media, open
 * houses, history, rooms and unit types (the listing story, told where the dictionary has RESO's sets for it), a few
 * records per listing of every other set hanging off the listings, then a bounded number of records of every other set
 * (demo-setup.ts, set-plan.ts), and last, where RESO's Lookup resource holds data rather than the dictionary, a row for
 * each lookup value the records hold (lookup-rows.ts). Written batch by batch through the record stores, so every record passes the same
 * validation as any other write. The same options and dictionary give byte-identical records.
 */
import type { ServiceModel } from '../model/service-model';
import type { EncodedRecord } from '../storage/records/record-codec';
import type { RecordStores } from '../storage/records/record-stores';
import type { RecordWriter } from '../storage/records/record-writer';
import { DemoSetup, setUpDemo } from './demo-setup';
import { linkGroups, otherChildRecords, standaloneCount, standaloneRecord } from './generic-records';
import { planListings } from './listing-plan';
import type { LookupRows } from './lookup-rows';
import { buildListing, ListingBundle, ListingStory } from './listing-story';
import type { DemoRecord } from './record-builder';
import type { RecordMaker } from './record-maker';
import { memberRecord, officeRecord } from './roster-records';
import { planRoster, Roster } from './roster';
import { CHILD_ROLES, ChildRole } from './standard-names';

export interface SeedOptions {
  listings: number;
  seed?: number;
  /**
   * false: build each listing's child records (the listing's summary fields and random stream depend on them) but
   * write only the listings and the sets not hanging off them: a walk benchmark of a million listings needs the same
   * Property records, and their children would not fit the disk (about 70 KB a listing).
   */
  children?: boolean;
}

/** Records written, by their part in the story; `others`: of the sets the story does not tell, by set (when any). */
export interface SeedSummary {
  offices: number; members: number; listings: number; media: number; openHouses: number; history: number; rooms: number; units: number;
  others?: Record<string, number>;
}

/** Listings (with their children) per write transaction. */
const LISTING_BATCH = 100;
/** Records of one set per write transaction otherwise. */
const SET_BATCH = 1000;

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
  const children = options.children ?? true;
  const started = performance.now();
  const demo = setUpDemo(target.model);
  const write = batchWriter(target, demo.lookupRows);
  const summary: SeedSummary = { offices: 0, members: 0, listings: 0, media: 0, openHouses: 0, history: 0, rooms: 0, units: 0 };
  const others: Record<string, number> = {};
  const wrote = (name: string, n: number) => { if (n) others[name] = (others[name] ?? 0) + n; };

  if (demo.story) {
    // Offices and members first: listings refer to them.
    const roster = planRoster(count, seed);
    await writeRoster(write, roster, demo, seed, summary);
    const listings = demo.story.listings.builder;
    const plan = planListings(count, seed, (status) => listings.admits('StandardStatus', status));
    const progressEvery = Math.max(10_000, LISTING_BATCH);
    for (let start = 0; start < count; start += LISTING_BATCH) {
      const bundles = Array.from({ length: Math.min(count, start + LISTING_BATCH) - start }, (_, n) => buildListing(start + n, seed, plan, roster, demo.story!));
      await writeListings(write, bundles, demo, seed, children, summary, wrote);
      onProgress?.(summary.listings);
      if (!onProgress && log && count > progressEvery && summary.listings % progressEvery === 0 && summary.listings < count) {
        log(`demo data: ${summary.listings}/${count} listings written`);
      }
    }
  }
  await writeStandalone(write, demo, seed, standaloneCount(count), children, wrote);
  if (demo.lookupRows) {
    const rows = demo.lookupRows.rows(seed);
    for (let i = 0; i < rows.length; i += SET_BATCH) await write([[demo.lookupRows.set.name, rows.slice(i, i + SET_BATCH)]]);
    wrote(demo.lookupRows.set.name, rows.length);
  }
  if (Object.keys(others).length) summary.others = others;

  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const more = Object.entries(others).map(([name, n]) => `, ${n} ${name}`).join('');
  log?.(`demo data (seed ${seed}): ${summary.listings} listings, ${summary.media} media, ${summary.openHouses} open houses, `
    + `${summary.history} history, ${summary.rooms} rooms, ${summary.units} unit types, ${summary.offices} offices, `
    + `${summary.members} members${more} in ${seconds}s on ${target.db.description}`);
  return summary;
}

type BatchWriter = (batches: readonly (readonly [string, readonly DemoRecord[]])[]) => Promise<void>;

/**
 * Writes records of several sets in one transaction, naming the demo record that fails to encode; `lookupRows` notes
 * the lookup values they hold.
 */
function batchWriter(target: SeedTarget, lookupRows: LookupRows | undefined): BatchWriter {
  return async (batches) => {
    if (lookupRows) for (const [name, records] of batches) lookupRows.note(name, records);
    const encoded: [string, EncodedRecord[]][] = batches.filter(([, records]) => records.length > 0).map(([name, records]) => {
      const store = target.stores.store(name);
      return [name, records.map((r) => {
        try {
          return store.encode(r);
        } catch (e) {
          (e as Error).message = `demo ${name} ${String(r[store.set.key])}: ${(e as Error).message}`;
          throw e;
        }
      })];
    });
    await target.writer.transaction(async (tx) => {
      for (const [name, records] of encoded) await tx.upsert(name, records);
    });
  };
}

async function writeRoster(write: BatchWriter, roster: Roster, demo: DemoSetup, seed: number, summary: SeedSummary): Promise<void> {
  const { offices, members } = demo;
  for (let i = 0; offices && i < roster.offices.length; i += SET_BATCH) {
    await write([[offices.set.name, roster.offices.slice(i, i + SET_BATCH).map((o) => officeRecord(o, offices, seed))]]);
  }
  for (let i = 0; members && i < roster.members.length; i += SET_BATCH) {
    await write([[members.set.name, roster.members.slice(i, i + SET_BATCH).map((m) => memberRecord(m, members, seed))]]);
  }
  summary.offices = offices ? roster.offices.length : 0;
  summary.members = members ? roster.members.length : 0;
}

const SUMMARY_OF: Readonly<Record<ChildRole, keyof SeedSummary & ('media' | 'openHouses' | 'history' | 'rooms' | 'units')>> = {
  media: 'media', openHouses: 'openHouses', history: 'history', rooms: 'rooms', units: 'units',
};

/** One batch of listings with everything that hangs off them, children before their listing, in one transaction. */
async function writeListings(
  write: BatchWriter, bundles: readonly ListingBundle[], demo: DemoSetup, seed: number, children: boolean, summary: SeedSummary,
  wrote: (name: string, n: number) => void,
): Promise<void> {
  const story: ListingStory = demo.story!;
  const batches: [string, DemoRecord[]][] = [];
  if (children) {
    for (const role of CHILD_ROLES) {
      const maker = story.children[role];
      if (!maker) continue;
      const records = bundles.flatMap((b) => b.children[role]);
      batches.push([maker.set.name, records]);
      summary[SUMMARY_OF[role]] += records.length;
    }
    for (const maker of demo.otherChildren) {
      const records = bundles.flatMap((b) => otherChildRecords(seed, b.core, b.identity, maker));
      batches.push([maker.set.name, records]);
      wrote(maker.set.name, records.length);
    }
  }
  batches.push([story.listings.set.name, bundles.map((b) => b.listing)]);
  // Readers see all of it at once, on commit.
  await write(batches);
  summary.listings += bundles.length;
}

/** The sets written on their own, `count` records each, a set after those its records point at. */
async function writeStandalone(
  write: BatchWriter, demo: DemoSetup, seed: number, count: number, children: boolean, wrote: (name: string, n: number) => void,
): Promise<void> {
  // Records point only at records written: not at children left unwritten, nor at sets still to come.
  const told = [demo.story?.listings, demo.offices, demo.members, ...(children ? [...Object.values(demo.story?.children ?? {}), ...demo.otherChildren] : [])];
  const written = new Set(told.filter((m): m is RecordMaker => m !== undefined));
  const parents = (name: string) => {
    const maker = demo.makers.get(name);
    return maker && written.has(maker) ? maker : undefined;
  };
  for (const [i, maker] of demo.standalone.entries()) {
    const groups = linkGroups(demo.plan.standalone[i].links);
    written.add(maker);
    for (let start = 0; start < count; start += SET_BATCH) {
      const records = Array.from({ length: Math.min(count, start + SET_BATCH) - start }, (_, n) => standaloneRecord(seed, start + n, maker, groups, parents));
      await write([[maker.set.name, records]]);
    }
    wrote(maker.set.name, count);
  }
}
