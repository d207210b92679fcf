/**
 * The RESO standard names the demo's story is told in, beyond single fields: which sets play which part, and the
 * fields that tie records together. Each binds only where the dictionary has a set or field of that name; a set or
 * field it lacks simply leaves the part untold (the set is then seeded from its declaration alone, as any other).
 *
 * The story's field rules live with the records they make, one table per set, keyed by field name: the listing
 * (property-record.ts), its media, open houses, history, rooms and unit types (listing-children.ts, listing-media.ts),
 * offices and members (roster-records.ts). A rule gives a value; the record builder takes it only when the field is
 * declared and can hold it (field-fit.ts).
 */

/** The sets of the story, by RESO's standard names. */
export const STORY_SETS = {
  /** The listings, when the dictionary declares no listing root (Policy.ListingRoot). */
  listings: 'Property',
  members: 'Member',
  offices: 'Office',
  /** Children of a listing, each when the listings reach it by a followable collection navigation. */
  media: 'Media',
  openHouses: 'OpenHouse',
  history: 'HistoryTransactional',
  rooms: 'PropertyRooms',
  units: 'PropertyUnitTypes',
} as const;

export type ChildRole = 'media' | 'openHouses' | 'history' | 'rooms' | 'units';
export const CHILD_ROLES: readonly ChildRole[] = ['media', 'openHouses', 'history', 'rooms', 'units'];

/**
 * RESO's sets whose records are the dictionary itself (Lookup, Field) or the change log (EntityEvent): the demo
 * writes none, also where the dictionary does not declare them so (Policy terms), as RESO's own DD 2.0 files do not.
 */
export const NOT_DEMO_SETS: ReadonlySet<string> = new Set(['Lookup', 'Field', 'EntityEvent']);

/** RESO's Lookup resource: where its rows are data, the demo writes one per lookup value its records hold (lookup-rows.ts). */
export const LOOKUP_RESOURCE = {
  set: 'Lookup',
  name: 'LookupName',
  value: 'LookupValue',
  standardValue: 'StandardLookupValue',
} as const;

/** The listing's own identifiers, which child records name their listing by: field → the story's value. */
export const LISTING_IDENTIFIERS = {
  ListingKey: 'key',
  ListingId: 'listingId',
} as const;

/** When a record was first entered: at or before its change timestamp. */
export const ENTRY_TIMESTAMP = 'OriginalEntryTimestamp';

/** When the story's record last changed; a set whose change timestamp has another name gets the time there too. */
export const MODIFICATION_TIMESTAMP = 'ModificationTimestamp';
