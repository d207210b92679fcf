/**
 * One listing with everything that hangs off it, built from its own random stream (so listing i is the same whatever
 * the batch size): facts, timeline, agents and address, then its child records, then the listing's own record, whose
 * summary fields (PhotosCount, change timestamps) follow the children as planned.
 */
import { buildHistory, buildOpenHouses, buildRooms, buildUnits, ListingCore, NONE } from './listing-children';
import { chooseFacts } from './listing-facts';
import { buildMedia, NO_MEDIA } from './listing-media';
import type { ListingPlan } from './listing-plan';
import { buildTimeline } from './listing-timeline';
import { buildPropertyRecord } from './property-record';
import { mixSeed, SeededRandom } from './random';
import type { DemoRecord } from './record-builder';
import type { RecordMaker } from './record-maker';
import type { Roster } from './roster';
import { ChildRole, LISTING_IDENTIFIERS } from './standard-names';
import { uniqueValue } from './unique-values';
import { PLACES, STREET_NAMES, STREET_SUFFIXES } from './vocabulary';

const SALT_LISTING = 31;

/** The sets the story is told in, planned once for a seeding. */
export interface ListingStory {
  readonly listings: RecordMaker;
  readonly children: Readonly<Partial<Record<ChildRole, RecordMaker>>>;
  /** The listing's key and the fields its children are joined on: each holds a value of the listing's own. */
  readonly identityFields: readonly string[];
}

export interface ListingBundle {
  readonly core: ListingCore;
  readonly listing: DemoRecord;
  /** The listing's values of `identityFields`, which its children point at. */
  readonly identity: Readonly<DemoRecord>;
  readonly children: Readonly<Record<ChildRole, DemoRecord[]>>;
}

export function listingKey(index: number, count: number): string {
  return `L${String(index + 1).padStart(Math.max(6, String(count).length), '0')}`;
}

export function buildListing(index: number, seed: number, plan: ListingPlan, roster: Roster, story: ListingStory): ListingBundle {
  const rng = new SeededRandom(mixSeed(seed, index, SALT_LISTING));
  const listings = story.listings.builder;
  const status = plan.status(index);
  const agent = rng.pick(roster.listingAgents);
  const office = agent.office;
  const nearby = PLACES.filter((p) => p.state === office.place.state);
  const place = rng.chance(0.7) ? office.place : rng.pick(nearby);
  const facts = chooseFacts(rng, place, (field, value) => listings.admits(field, value));
  const timeline = buildTimeline(rng, status, plan.contractedBefore2020(index), facts.price, facts.lease);
  const key = listingKey(index, plan.count);
  const listingId = `DM${24_000_000 + index + 1}`;

  // Address.
  const streetNumber = String(rng.int(100, 19_999));
  const dirPrefix = rng.chance(0.12) ? rng.pick(['N', 'S', 'E', 'W']) : undefined;
  const streetName = rng.pick(STREET_NAMES);
  const streetSuffix = rng.pick(STREET_SUFFIXES);
  const unit = facts.stacked ? `${rng.int(1, 12)}${rng.pick(['01', '02', '03', '04', '05', '06', '07', '08', '10', '12'])}` : undefined;
  const postalCode = String(place.zip + rng.int(0, place.zips - 1)).padStart(5, '0');
  const streetLine = [streetNumber, dirPrefix, streetName, streetSuffix, unit && `Unit ${unit}`].filter(Boolean).join(' ');
  const core: ListingCore = {
    index, setName: listings.set.name, key, listingId, status, place, streetLine, facts, timeline, agent, className: facts.type,
  };
  const identity = identityOf(story, core);

  // Children first: the listing summarises them.
  const { media: mediaMaker, openHouses: openHouseMaker, history: historyMaker, rooms: roomMaker, units: unitMaker } = story.children;
  const media = mediaMaker ? buildMedia(rng, core, mediaMaker, identity) : NO_MEDIA;
  const showingAgents = office.members.filter((m) => m.active);
  const openHouses = openHouseMaker ? buildOpenHouses(rng, core, openHouseMaker, identity, showingAgents) : NONE;
  const history = historyMaker ? buildHistory(rng, core, historyMaker, identity, (field) => listings.has(field)) : NONE;
  const rooms = roomMaker ? buildRooms(rng, core, roomMaker, identity) : NONE;
  const units = unitMaker ? buildUnits(rng, core, unitMaker, identity) : NONE;
  const kinds: readonly { readonly latest?: number }[] = [media, openHouses, history, rooms, units];
  const modified = Math.max(timeline.modified, ...kinds.map((k) => k.latest ?? 0));

  const listing = buildPropertyRecord(rng, core, story.listings, {
    streetNumber, dirPrefix, streetName, streetSuffix, unit, postalCode, modified, media, accessibility: plan.accessibility(index), roster,
  }, identity);
  return {
    core, listing, identity,
    children: { media: media.records, openHouses: openHouses.records, history: history.records, rooms: rooms.records, units: units.records },
  };
}

/**
 * The listing's values of the fields its children point at: the story's own identifiers (ListingKey, ListingId) where
 * the field holds them as they are, else a value unique to the listing of the field's type.
 */
function identityOf(story: ListingStory, core: ListingCore): DemoRecord {
  const builder = story.listings.builder;
  const identity: DemoRecord = {};
  for (const field of story.identityFields) {
    const own = field in LISTING_IDENTIFIERS ? core[LISTING_IDENTIFIERS[field as keyof typeof LISTING_IDENTIFIERS]] : undefined;
    identity[field] = own !== undefined && builder.holdsExactly(field, own) ? own : uniqueValue(builder, field, core.index);
  }
  return identity;
}
