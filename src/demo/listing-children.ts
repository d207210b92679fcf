/**
 * The records that hang off one listing besides its media: open houses, history, rooms and unit types. Each is
 * timestamped within the listing's life and never after the listing's own ModificationTimestamp; each builder answers
 * its records and the latest of their change times, as planned (the listing's own timestamp follows them).
 */
import { BASE_TIME, DAY, HOUR, clamp, startOfDay, when } from './calendar';
import type { PropertyFacts } from './listing-facts';
import type { Timeline } from './listing-timeline';
import type { SeededRandom } from './random';
import type { DemoRecord, FieldContext } from './record-builder';
import type { RecordMaker } from './record-maker';
import type { MemberInfo } from './roster';
import type { Place } from './vocabulary';

export interface ListingCore {
  readonly index: number;
  /** The name of the listings' set (RESO's Property), which child records name their listing's set by. */
  readonly setName: string;
  readonly key: string;
  readonly listingId: string;
  readonly status: string;
  readonly place: Place;
  readonly streetLine: string;
  readonly facts: PropertyFacts;
  readonly timeline: Timeline;
  readonly agent: MemberInfo;
  /** The ClassName lookup value of the listing (its PropertyType). */
  readonly className: string;
}

/** Records of one kind that hang off a listing, and the latest of their change times. */
export interface ChildRecords {
  readonly records: DemoRecord[];
  readonly latest?: number;
}

/** No records of a kind (the dictionary has no such set, or the listing none). */
export const NONE: ChildRecords = { records: [] };
const SOURCE = { OriginatingSystemName: 'Demo MLS', SourceSystemName: 'Demo MLS' };
const pad2 = (n: number) => String(n).padStart(2, '0');

/** The window in which a listing held open houses (day starts), or undefined. */
function openHouseWindow(core: ListingCore): [number, number] | undefined {
  const t = core.timeline;
  if (core.status === 'Delete') return undefined;
  const start = startOfDay(t.onMarket);
  if (core.status === 'Coming Soon') return [start, start + 14 * DAY];
  if (core.status === 'Active') return [start, startOfDay(BASE_TIME) + 14 * DAY];
  return t.offMarket !== undefined && t.offMarket - start > DAY ? [start, startOfDay(t.offMarket)] : undefined;
}

export function buildOpenHouses(
  rng: SeededRandom, core: ListingCore, maker: RecordMaker, listing: Readonly<DemoRecord>, showingAgents: readonly MemberInfo[],
): ChildRecords {
  const window = openHouseWindow(core);
  if (!window) return NONE;
  const t = core.timeline;
  const count = core.facts.kind !== 'home' && rng.chance(0.8) ? 0
    : core.status === 'Active' ? rng.weighted([[0, 35], [1, 30], [2, 20], [3, 15]] as const)
      : core.status === 'Coming Soon' ? rng.weighted([[0, 50], [1, 40], [2, 10]] as const)
        : rng.weighted([[0, 50], [1, 30], [2, 15], [3, 5]] as const);
  const days = new Set<number>();
  for (let tries = 0; days.size < count && tries < 12; tries++) {
    let day = window[0] + rng.int(0, Math.max(0, Math.floor((window[1] - window[0]) / DAY))) * DAY;
    const weekday = new Date(day).getUTCDay();
    const toWeekend = weekday === 0 || weekday === 6 ? 0 : 6 - weekday;
    if (day + toWeekend * DAY <= window[1]) day += toWeekend * DAY;
    days.add(day);
  }
  const ctx: FieldContext = { rng, place: core.place, from: t.entry, to: t.modified };
  let latest: number | undefined;
  const records = [...days].sort((a, b) => a - b).map((day, i) => {
    const n = i + 1;
    const start = day + (rng.pick([10, 11, 13, 14]) - core.place.utcOffset) * HOUR;
    const end = start + rng.pick([2, 2, 3]) * HOUR;
    const type = rng.weighted([['Public', 80], ['Broker', 12], ['Livestream Public', 5], ['Office', 3]] as const);
    const status = end > BASE_TIME ? 'Active' : rng.chance(0.08) ? 'Canceled' : 'Ended';
    const created = clamp(Math.floor(start - rng.between(1, 7) * DAY), t.entry, t.modified);
    const modified = status === 'Active' ? created : clamp(Math.floor(rng.between(created, Math.max(created, Math.min(end + DAY, t.modified)))), created, t.modified);
    const showing = rng.chance(0.6) || showingAgents.length === 0 ? core.agent : rng.pick(showingAgents);
    const key = `${core.key}-OH${n}`;
    latest = Math.max(latest ?? modified, modified);
    return maker.make({
      OpenHouseKey: key,
      ModificationTimestamp: when(modified),
      OriginalEntryTimestamp: when(created),
      ListingKey: core.key,
      ListingId: core.listingId,
      OpenHouseId: `${core.listingId}-${n}`,
      OpenHouseDate: when(day),
      OpenHouseStartTime: when(start),
      OpenHouseEndTime: when(end),
      OpenHouseStatus: status,
      OpenHouseType: type,
      OpenHouseAttendedBy: 'Agent',
      AppointmentRequiredYN: type === 'Broker' ? rng.chance(0.3) : false,
      LivestreamOpenHouseURL: /Livestream/.test(type) ? `https://live.example.com/openhouse/${key}` : null,
      OpenHouseRemarks: rng.pick(['Come tour this home!', 'Stop by and meet the listing agent.', 'Park on the street, please.', 'First open house - see it before it is gone.', 'Brokers welcome.']),
      Refreshments: rng.chance(0.4) ? rng.pick(['Cookies and coffee', 'Light snacks', 'Lemonade', 'Donuts']) : null,
      ShowingAgentKey: showing.key,
      ShowingAgentMlsID: showing.mlsId,
      ShowingAgentFirstName: showing.first,
      ShowingAgentLastName: showing.last,
      OriginatingSystemKey: key,
      OriginatingSystemID: 'DEMO',
      SourceSystemKey: key,
      SourceSystemID: 'DEMO',
      ...SOURCE,
    }, ctx, listing);
  });
  return { records, latest };
}

/** `recorded`: whether the listings have the field an event changed (an event of a field they lack is no history). */
export function buildHistory(
  rng: SeededRandom, core: ListingCore, maker: RecordMaker, listing: Readonly<DemoRecord>, recorded: (field: string) => boolean,
): ChildRecords {
  const all = core.timeline.events.filter((e) => recorded(e.field));
  // At most five: the new listing and the latest four changes.
  const events = all.length <= 5 ? all : [all[0], ...all.slice(-4)];
  const ctx: FieldContext = { rng, place: core.place, from: core.timeline.entry, to: core.timeline.modified };
  const records = events.map((e, i) => {
    const key = `${core.key}-H${i + 1}`;
    return maker.make({
      HistoryTransactionalKey: key,
      ModificationTimestamp: when(e.at),
      ChangedByMemberID: core.agent.mlsId,
      ChangedByMemberKey: core.agent.key,
      ChangeType: e.changeType,
      ClassName: core.className,
      EntityEventSequence: core.index * 10 + i + 1,
      FieldKey: `${core.setName}.${e.field}`,
      FieldName: e.field,
      PreviousValue: e.previous ?? null,
      NewValue: e.next,
      ResourceName: core.setName,
      ResourceRecordID: core.listingId,
      ResourceRecordKey: core.key,
      OriginatingSystemHistoryKey: key,
      OriginatingSystemID: 'DEMO',
      SourceSystemHistoryKey: key,
      SourceSystemID: 'DEMO',
      ...SOURCE,
    }, ctx, listing);
  });
  return { records, latest: events.length ? Math.max(...events.map((e) => e.at)) : undefined };
}

const ROOM_SIZES: readonly (readonly [RegExp, number, number, number, number])[] = [
  [/Master Bedroom/, 13, 18, 12, 16],
  [/Bedroom/, 10, 14, 9, 13],
  [/Bathroom/, 5, 10, 5, 12],
  [/Living|Great|Family/, 14, 24, 12, 18],
  [/Kitchen/, 10, 18, 10, 14],
  [/Laundry|Utility/, 6, 10, 5, 9],
  [/Workshop|Basement|Game/, 12, 30, 12, 24],
];

function roomTypes(rng: SeededRandom, facts: PropertyFacts): string[] {
  if (facts.kind === 'land') return rng.sample(['Workshop', 'Utility Room', 'Office'], rng.int(2, 3));
  if (facts.kind === 'commercial') return ['Office', 'Bathroom', ...rng.sample(['Office', 'Kitchen', 'Utility Room', 'Workshop', 'Gym', 'Library'], rng.int(0, 4))];
  const beds = facts.bedrooms ?? 1;
  const base = ['Living Room', 'Kitchen', 'Master Bedroom', 'Master Bathroom'];
  const bedrooms = Array.from({ length: Math.min(4, beds - 1) }, (_, i) => `Bedroom ${i + 2}`);
  const extras = rng.sample(['Dining Room', 'Family Room', 'Laundry', 'Office', 'Bonus Room', 'Den', 'Great Room', 'Game Room',
    'Media Room', 'Exercise Room', 'Library', 'Loft', 'Utility Room', ...(facts.basement ? ['Basement'] : [])], 6);
  const count = Math.max(2, Math.min(10, beds + 2 + rng.int(0, 3)));
  return [...base, ...bedrooms, ...extras].slice(0, count);
}

export function buildRooms(rng: SeededRandom, core: ListingCore, maker: RecordMaker, listing: Readonly<DemoRecord>): ChildRecords {
  const t = core.timeline;
  const ctx: FieldContext = { rng, place: core.place, from: t.entry, to: t.modified };
  const at = clamp(Math.floor(t.entry + rng.between(0, 1) * DAY), t.entry, t.modified);
  const stories = core.facts.stories ?? 1;
  const records = roomTypes(rng, core.facts).map((type, i) => {
    const [, l0, l1, w0, w1] = ROOM_SIZES.find(([re]) => re.test(type)) ?? [/./, 10, 18, 9, 15];
    const length = rng.int(l0, l1);
    const width = rng.int(w0, w1);
    const bedroom = /Bedroom/.test(type);
    const level = type === 'Basement' ? 'Basement' : stories > 1 && bedroom ? 'Upper' : 'Main';
    return maker.make({
      RoomKey: `${core.key}-R${pad2(i + 1)}`,
      ModificationTimestamp: when(at),
      ListingKey: core.key,
      ListingId: core.listingId,
      RoomType: type,
      RoomLevel: level,
      RoomLength: length,
      RoomWidth: width,
      RoomArea: length * width,
      RoomAreaUnits: 'Square Feet',
      RoomAreaSource: rng.pick(['Estimated', 'Owner', 'Public Records']),
      RoomDimensions: `${length} x ${width}`,
      RoomLengthWidthUnits: 'Feet',
      RoomLengthWidthSource: rng.pick(['Measured', 'Estimated', 'Owner']),
      BedroomClosetType: bedroom ? (/Master/.test(type) ? 'Walk-in Closet' : 'Built-in Closet') : null,
      RoomDescription: `${type} on the ${level.toLowerCase()} level, ${length} x ${width} ft.`,
    }, ctx, listing, { emptyShare: 0.5 });
  });
  return { records, latest: records.length ? at : undefined };
}

export function buildUnits(rng: SeededRandom, core: ListingCore, maker: RecordMaker, listing: Readonly<DemoRecord>): ChildRecords {
  const t = core.timeline;
  const ctx: FieldContext = { rng, place: core.place, from: t.entry, to: t.modified };
  const at = clamp(Math.floor(t.entry + rng.between(0, 1) * DAY), t.entry, t.modified);
  const records = core.facts.units.map((u, i) => maker.make({
    UnitTypeKey: `${core.key}-U${i + 1}`,
    ModificationTimestamp: when(at),
    ListingKey: core.key,
    ListingId: core.listingId,
    UnitTypeType: u.type,
    UnitTypeBedsTotal: u.beds,
    UnitTypeBathsTotal: u.baths,
    UnitTypeUnitsTotal: u.units,
    UnitTypeActualRent: u.rent,
    UnitTypeTotalRent: u.rent * u.units,
    UnitTypeProForma: Math.round(u.rent * rng.between(1.02, 1.1)),
    UnitTypeFurnished: rng.chance(0.85) ? 'Unfurnished' : 'Furnished',
    UnitTypeGarageAttachedYN: rng.chance(0.3),
    UnitTypeGarageSpaces: rng.int(0, 2),
    UnitTypeDescription: `${u.units} x ${u.type}, ${u.baths} bath${u.baths > 1 ? 's' : ''}`,
  }, ctx, listing));
  return { records, latest: records.length ? at : undefined };
}
