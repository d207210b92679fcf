/**
 * Records of the sets the story does not tell, from their declarations alone: a few per listing of a set hanging off
 * the listings (within the listing's life), and a bounded number of every other set, pointing at records of other demo
 * sets wherever a navigation's join says so. Each set has random streams of its own (salted by its name), so a set
 * added to or removed from the dictionary leaves every other set's records as they were.
 */
import { recordTimes, when } from './calendar';
import type { ListingCore } from './listing-children';
import { mixSeed, saltOf, SeededRandom } from './random';
import type { DemoRecord, FieldContext } from './record-builder';
import type { RecordMaker } from './record-maker';
import type { ParentLink } from './set-plan';
import { ENTRY_TIMESTAMP, MODIFICATION_TIMESTAMP } from './standard-names';
import { PLACES } from './vocabulary';

/** Records of a set written on its own: one per this many listings, at most STANDALONE_MAX. */
const LISTINGS_PER_STANDALONE = 10;
const STANDALONE_MAX = 1000;

export function standaloneCount(listings: number): number {
  return Math.min(STANDALONE_MAX, Math.ceil(listings / LISTINGS_PER_STANDALONE));
}

function timesGiven(entry: number, modified: number): DemoRecord {
  return { [MODIFICATION_TIMESTAMP]: when(modified), [ENTRY_TIMESTAMP]: when(entry) };
}

/** Up to two records of the set for the listing (at least one for the first listing), changed within its life. */
export function otherChildRecords(seed: number, core: ListingCore, identity: Readonly<DemoRecord>, maker: RecordMaker): DemoRecord[] {
  const rng = new SeededRandom(mixSeed(seed, core.index, saltOf(maker.set.name)));
  const t = core.timeline;
  const ctx: FieldContext = { rng, place: core.place, from: t.entry, to: t.modified };
  const count = rng.int(core.index === 0 ? 1 : 0, 2);
  return Array.from({ length: count }, () => {
    const entry = Math.floor(rng.between(t.entry, t.modified));
    return maker.make(timesGiven(entry, Math.floor(rng.between(entry, t.modified))), ctx, identity);
  });
}

/** A set's links grouped by the field they fill: one link of a group is chosen for each record. */
export function linkGroups(links: readonly ParentLink[]): ParentLink[][] {
  const groups = new Map<string, ParentLink[]>();
  for (const l of links) groups.set(l.field, [...(groups.get(l.field) ?? []), l]);
  return [...groups.values()];
}

/**
 * The `ordinal`th record of a set written on its own. `parents`: the maker of a demo set whose records have been
 * written (undefined for one not written), holding the values its records' fields were given.
 */
export function standaloneRecord(
  seed: number, ordinal: number, maker: RecordMaker, groups: readonly ParentLink[][], parents: (set: string) => RecordMaker | undefined,
): DemoRecord {
  const rng = new SeededRandom(mixSeed(seed, ordinal, saltOf(maker.set.name)));
  const place = rng.pick(PLACES);
  const { entry, modified } = recordTimes(rng);
  const given = timesGiven(entry, modified);
  for (const group of groups) {
    const usable = group.filter((l) => (parents(l.parent)?.sample(l.parentField).length ?? 0) > 0);
    if (!usable.length) continue;
    const link = rng.pick(usable);
    given[link.field] = rng.pick(parents(link.parent)!.sample(link.parentField));
    if (link.discriminator) given[link.discriminator.field] = link.discriminator.value;
  }
  return maker.make(given, { rng, place, from: entry, to: modified });
}
