/**
 * A listing's media: photos first (the first one the front of the house), then floor plans, documents, tours and
 * videos, uploaded just after the listing entered and some refreshed later. What the listing says of them (how many
 * photos, when photos and documents last changed, its tour links) is read off the media as planned here, not off the
 * records, whose fields the dictionary may lack or type otherwise.
 */
import { clamp, DAY, MINUTE, when } from './calendar';
import type { ListingCore } from './listing-children';
import type { DemoRecord, FieldContext } from './record-builder';
import type { RecordMaker } from './record-maker';
import type { SeededRandom } from './random';

/** MediaCategory values the listing's summary counts. */
export const PHOTO = 'Photo';
export const DOCUMENT = 'Document';
const UNBRANDED_TOUR = 'Unbranded Virtual Tour';
const BRANDED_TOUR = 'Branded Virtual Tour';

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

/** One medium as planned. */
interface MediaItem {
  readonly category: string;
  readonly at: number;
  readonly url: string;
}

/** A listing's media records and what the listing says of them. */
export interface ListingMedia {
  readonly records: DemoRecord[];
  /** The latest change of any of them. */
  readonly latest?: number;
  /** PhotosCount, PhotosChangeTimestamp, DocumentsChangeTimestamp: undefined where the media cannot say (no categories). */
  readonly photos?: number;
  readonly photosChanged?: Date | null;
  readonly documentsChanged?: Date | null;
  readonly tourUnbranded: string | null;
  readonly tourBranded: string | null;
}

/** What the listing says when the dictionary has no media at all: no photos. */
export const NO_MEDIA: ListingMedia = { records: [], photos: 0, photosChanged: null, documentsChanged: null, tourUnbranded: null, tourBranded: null };

export function buildMedia(rng: SeededRandom, core: ListingCore, maker: RecordMaker, listing: Readonly<DemoRecord>): ListingMedia {
  const { timeline: t, key } = core;
  const total = rng.int(5, 30);
  const extras: string[] = [];
  if (rng.chance(0.1)) extras.push('Floor Plan');
  if (rng.chance(0.2)) extras.push(...Array(rng.int(1, 2)).fill(DOCUMENT));
  if (rng.chance(0.12)) extras.push(UNBRANDED_TOUR);
  if (rng.chance(0.06)) extras.push(BRANDED_TOUR);
  if (rng.chance(0.04)) extras.push('Video');
  const photos = total - extras.length;
  const shots = core.facts.kind === 'land' ? LAND_SHOTS : core.facts.kind === 'commercial' ? COMMERCIAL_SHOTS : HOME_SHOTS;
  const firstShot = core.facts.kind === 'land' ? 'Lot' : 'Front of Structure';

  const uploaded = clamp(Math.floor(t.entry + rng.between(0, 2) * DAY), t.entry, t.modified);
  const refreshed = new Set(rng.chance(0.25) ? rng.sample(Array.from({ length: photos }, (_, i) => i + 1), rng.int(1, 5)) : []);
  const ctx: FieldContext = { rng, place: core.place, from: t.entry, to: t.modified };

  const records: DemoRecord[] = [];
  const items: MediaItem[] = [];
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
            : `https://tours.example.com/${key}${category === BRANDED_TOUR ? '/branded' : ''}`;
    const [width, height] = rng.pick([[2048, 1365], [1536, 1024], [3000, 2000], [1024, 683]] as const);
    items.push({ category, at, url });
    records.push(maker.make({
      MediaKey: mediaKey,
      ModificationTimestamp: when(at),
      MediaModificationTimestamp: when(at),
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
      ResourceName: core.setName,
      ResourceRecordID: core.listingId,
      ResourceRecordKey: key,
      OriginatingSystemMediaKey: mediaKey,
      SourceSystemMediaKey: mediaKey,
      ...SOURCE,
    }, ctx, listing));
  }
  return summarise(items, records, maker);
}

function summarise(items: readonly MediaItem[], records: DemoRecord[], maker: RecordMaker): ListingMedia {
  const latest = (of: readonly MediaItem[]): number | undefined => (of.length ? Math.max(...of.map((i) => i.at)) : undefined);
  const tour = (category: string) => items.find((i) => i.category === category)?.url ?? null;
  // Counting photos by category says something only where the records carry the category.
  const categorised = maker.builder.admits('MediaCategory', PHOTO);
  const photos = items.filter((i) => i.category === PHOTO);
  return {
    records,
    latest: latest(items),
    photos: categorised ? photos.length : undefined,
    photosChanged: categorised ? when(latest(photos)) : undefined,
    documentsChanged: categorised ? when(latest(items.filter((i) => i.category === DOCUMENT))) : undefined,
    tourUnbranded: tour(UNBRANDED_TOUR),
    tourBranded: tour(BRANDED_TOUR),
  };
}
