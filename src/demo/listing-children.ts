/**
 * The records that hang off one listing: media, open houses, history, rooms and unit types. Each is
 * timestamped within the listing's life and never after the listing's own ModificationTimestamp.
 */
import { BASE_TIME, DAY, HOUR, MINUTE, clamp, startOfDay } from './calendar';
import type { Entity } from '../../generated/entities';
import type { FieldContext, RecordBuilder } from './field-values';
import type { PropertyFacts } from './listing-facts';
import type { Timeline } from './listing-timeline';
import type { SeededRandom } from './random';
import type { MemberInfo } from './roster';
import type { Place } from './vocabulary';

export interface ListingCore {
  readonly index: number;
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

export interface ChildBuilders {
  readonly media?: RecordBuilder<'Media'>;
  readonly openHouse?: RecordBuilder<'OpenHouse'>;
  readonly history?: RecordBuilder<'HistoryTransactional'>;
  readonly rooms?: RecordBuilder<'PropertyRooms'>;
  readonly units?: RecordBuilder<'PropertyUnitTypes'>;
}

export const PHOTO = 'Photo';
export const DOCUMENT = 'Document';

const SOURCE = { OriginatingSystemName: 'Demo MLS', SourceSystemName: 'Demo MLS' };
const pad2 = (n: number) => String(n).padStart(2, '0');
const MEDIA_HOST = 'https://media.example.com/listings';

const HOME_SHOTS = [
  'Living Room', 'Kitchen', 'Dining Room', 'Master Bedroom', 'Master Bathroom', 'Bedroom', 'Bathroom', 'Family Room', 'Back of Structure',
  'Yard', 'Patio', 'Garage', 'Laundry', 'Office', 'Deck', 'View', 'Aerial View', 'Entry', 'Great Room', 'Bonus Room', 'Walk-In Closet(s)',
  'Pantry', 'Side of Structure', 'Fireplace', 'Hallway', 'Stairs', 'Loft', 'Community', 'Pool', 'Basement',
];
const LAND_SHOTS = ['Lot', 'Aerial View', 'View', 'Plat Map', 'Map', 'Lot', 'Aerial View', 'Pond', 'Out Buildings'];
const COMMERCIAL_SHOTS = ['Lobby', 'Reception', 'Office', 'Showroom', 'Parking', 'Loading Dock', 'Storage', 'Aerial View', 'Side of Structure', 'Back of Structure'];

export function buildMedia(rng: SeededRandom, core: ListingCore, builder: RecordBuilder<'Media'>): Entity<'Media'>[] {
  const { timeline: t, key } = core;
  const total = rng.int(5, 30);
  const extras: string[] = [];
  if (rng.chance(0.1)) extras.push('Floor Plan');
  if (rng.chance(0.2)) extras.push(...Array(rng.int(1, 2)).fill(DOCUMENT));
  if (rng.chance(0.12)) extras.push('Unbranded Virtual Tour');
  if (rng.chance(0.06)) extras.push('Branded Virtual Tour');
  if (rng.chance(0.04)) extras.push('Video');
  const photos = total - extras.length;
  const shots = core.facts.kind === 'land' ? LAND_SHOTS : core.facts.kind === 'commercial' ? COMMERCIAL_SHOTS : HOME_SHOTS;
  const firstShot = core.facts.kind === 'land' ? 'Lot' : 'Front of Structure';

  const uploaded = clamp(Math.floor(t.entry + rng.between(0, 2) * DAY), t.entry, t.modified);
  const refreshed = new Set(rng.chance(0.25) ? rng.sample(Array.from({ length: photos }, (_, i) => i + 1), rng.int(1, 5)) : []);
  const ctx: FieldContext = { rng, place: core.place, from: t.entry, to: t.modified };

  const out: Entity<'Media'>[] = [];
  for (let order = 1; order <= total; order++) {
    const category = order <= photos ? PHOTO : extras[order - photos - 1];
    const mediaKey = `${key}-M${pad2(order)}`;
    let at = Math.min(uploaded + order * MINUTE, t.modified);
    if (refreshed.has(order)) at = Math.floor(rng.between(at, t.modified));
    const photo = category === PHOTO;
    const imageOf = photo ? (order === 1 ? firstShot : shots[(order - 2) % shots.length]) : category === 'Floor Plan' ? 'Floor Plan' : null;
    const tour = /Virtual Tour/.test(category);
    const url = photo ? `${MEDIA_HOST}/${key}/${pad2(order)}.jpg`
      : category === DOCUMENT ? `${MEDIA_HOST}/${key}/documents/${rng.pick(['disclosures', 'hoa-documents', 'survey', 'inspection-report', 'seller-property-disclosure'])}-${order}.pdf`
        : category === 'Floor Plan' ? `${MEDIA_HOST}/${key}/floor-plan.pdf`
          : category === 'Video' ? `${MEDIA_HOST}/${key}/walkthrough.mp4`
            : `https://tours.example.com/${key}${category === 'Branded Virtual Tour' ? '/branded' : ''}`;
    const [width, height] = rng.pick([[2048, 1365], [1536, 1024], [3000, 2000], [1024, 683]] as const);
    out.push(builder.build({
      MediaKey: mediaKey,
      ModificationTimestamp: at,
      MediaModificationTimestamp: at,
      ChangedByMemberKey: core.agent.key,
      ClassName: core.className,
      MediaCategory: category,
      MediaType: photo ? 'jpeg' : category === 'Video' ? 'mp4' : tour ? null : 'pdf',
      MediaURL: url,
      MediaHTML: tour ? `<iframe src="${url}" width="100%" height="480" allowfullscreen></iframe>` : null,
      MediaObjectID: `${key}-${url.slice(url.lastIndexOf('/') + 1)}`,
      MediaStatus: 'Active',
      Order: order,
      ImageOf: imageOf,
      ImageWidth: photo ? width : null,
      ImageHeight: photo ? height : null,
      ImageSizeDescription: photo ? 'Large' : null,
      ShortDescription: imageOf ?? category,
      LongDescription: photo ? `${imageOf} - ${core.streetLine}` : `${category} for ${core.streetLine}`,
      MediaAlteration: photo && rng.chance(0.05) ? ['Virtual Staging - Item Addition'] : [],
      Permission: category === DOCUMENT ? ['Agent Only'] : ['Public'],
      PreferredPhotoYN: photo ? order === 1 : null,
      ResourceName: 'Property',
      ResourceRecordID: core.listingId,
      ResourceRecordKey: key,
      OriginatingSystemMediaKey: mediaKey,
      SourceSystemMediaKey: mediaKey,
      ...SOURCE,
    }, ctx));
  }
  return out;
}

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
  rng: SeededRandom, core: ListingCore, builder: RecordBuilder<'OpenHouse'>, showingAgents: readonly MemberInfo[],
): Entity<'OpenHouse'>[] {
  const window = openHouseWindow(core);
  if (!window) return [];
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
  return [...days].sort((a, b) => a - b).map((day, i) => {
    const n = i + 1;
    const start = day + (rng.pick([10, 11, 13, 14]) - core.place.utcOffset) * HOUR;
    const end = start + rng.pick([2, 2, 3]) * HOUR;
    const type = rng.weighted([['Public', 80], ['Broker', 12], ['Livestream Public', 5], ['Office', 3]] as const);
    const status = end > BASE_TIME ? 'Active' : rng.chance(0.08) ? 'Canceled' : 'Ended';
    const created = clamp(Math.floor(start - rng.between(1, 7) * DAY), t.entry, t.modified);
    const modified = status === 'Active' ? created : clamp(Math.floor(rng.between(created, Math.max(created, Math.min(end + DAY, t.modified)))), created, t.modified);
    const showing = rng.chance(0.6) || showingAgents.length === 0 ? core.agent : rng.pick(showingAgents);
    const key = `${core.key}-OH${n}`;
    return builder.build({
      OpenHouseKey: key,
      ModificationTimestamp: modified,
      OriginalEntryTimestamp: created,
      ListingKey: core.key,
      ListingId: core.listingId,
      OpenHouseId: `${core.listingId}-${n}`,
      OpenHouseDate: day,
      OpenHouseStartTime: start,
      OpenHouseEndTime: end,
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
    }, ctx);
  });
}

export function buildHistory(rng: SeededRandom, core: ListingCore, builder: RecordBuilder<'HistoryTransactional'>): Entity<'HistoryTransactional'>[] {
  const all = core.timeline.events;
  // At most five: the new listing and the latest four changes.
  const events = all.length <= 5 ? all : [all[0], ...all.slice(-4)];
  const ctx: FieldContext = { rng, place: core.place, from: core.timeline.entry, to: core.timeline.modified };
  return events.map((e, i) => {
    const key = `${core.key}-H${i + 1}`;
    return builder.build({
      HistoryTransactionalKey: key,
      ModificationTimestamp: e.at,
      ChangedByMemberID: core.agent.mlsId,
      ChangedByMemberKey: core.agent.key,
      ChangeType: e.changeType,
      ClassName: core.className,
      EntityEventSequence: core.index * 10 + i + 1,
      FieldKey: `Property.${e.field}`,
      FieldName: e.field,
      PreviousValue: e.previous ?? null,
      NewValue: e.next,
      ResourceName: 'Property',
      ResourceRecordID: core.listingId,
      ResourceRecordKey: core.key,
      OriginatingSystemHistoryKey: key,
      OriginatingSystemID: 'DEMO',
      SourceSystemHistoryKey: key,
      SourceSystemID: 'DEMO',
      ...SOURCE,
    }, ctx);
  });
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

export function buildRooms(rng: SeededRandom, core: ListingCore, builder: RecordBuilder<'PropertyRooms'>): Entity<'PropertyRooms'>[] {
  const t = core.timeline;
  const ctx: FieldContext = { rng, place: core.place, from: t.entry, to: t.modified };
  const at = clamp(Math.floor(t.entry + rng.between(0, 1) * DAY), t.entry, t.modified);
  const stories = core.facts.stories ?? 1;
  return roomTypes(rng, core.facts).map((type, i) => {
    const [, l0, l1, w0, w1] = ROOM_SIZES.find(([re]) => re.test(type)) ?? [/./, 10, 18, 9, 15];
    const length = rng.int(l0, l1);
    const width = rng.int(w0, w1);
    const bedroom = /Bedroom/.test(type);
    const level = type === 'Basement' ? 'Basement' : stories > 1 && bedroom ? 'Upper' : 'Main';
    return builder.build({
      RoomKey: `${core.key}-R${pad2(i + 1)}`,
      ModificationTimestamp: at,
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
    }, ctx, { emptyShare: 0.5 });
  });
}

export function buildUnits(rng: SeededRandom, core: ListingCore, builder: RecordBuilder<'PropertyUnitTypes'>): Entity<'PropertyUnitTypes'>[] {
  const t = core.timeline;
  const ctx: FieldContext = { rng, place: core.place, from: t.entry, to: t.modified };
  const at = clamp(Math.floor(t.entry + rng.between(0, 1) * DAY), t.entry, t.modified);
  return core.facts.units.map((u, i) => builder.build({
    UnitTypeKey: `${core.key}-U${i + 1}`,
    ModificationTimestamp: at,
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
  }, ctx));
}
