/**
 * Related records whose visibility follows their listing's (src/query/visibility.ts: a listing outside a
 * feed or client scope hides its Media, OpenHouse, history, rooms and units). Whether a listing is visible
 * to a client depends only on the listing's own fields, so whenever a listing's record changes (created,
 * edited, marked deleted), its related records can appear or disappear for some client without changing
 * themselves. A consumer replicating those sets from their own endpoints by `ModificationTimestamp gt` would
 * then never learn of a record that comes back with an old timestamp. So, in the same transaction, every
 * related record of a changed listing takes the listing's new timestamp: it is in the next increment of its
 * set, and the removal check drops it where it vanished.
 *
 * A listing created after its related records (photos arriving first) also takes the timestamps those
 * records move on their parent (PhotosChangeTimestamp from photos, by the dictionary's MovedByRelated).
 * Which sets follow, by which join and discriminator, and which parent timestamps move, is the dictionary's
 * policy (ListingRoot, the navigations' referential constraints, RelatedTimestamps).
 */
import { EntitySetSpec, FieldCondition, listingRootOf, ownedNavigations, ServiceModel } from '../model/service-model';

/** One set of related records that follows the parent set's visibility. */
export interface Follower {
  readonly set: EntitySetSpec;
  readonly foreignKey: string;
  /** The parent's field the foreign key holds (the listing's key). */
  readonly referencedKey: string;
  /** Records with another value here belong to another resource (a Member's media) and do not follow. */
  readonly discriminator?: FieldCondition;
  /** Parent timestamps (besides its change timestamp) that such a record moves, and on which condition. */
  readonly moves: readonly { readonly field: string; readonly when?: FieldCondition }[];
}

/** The sets that follow `parent`: none unless it is the listing root, whose scopes hide its related records. */
export function followersOf(model: ServiceModel, parent: EntitySetSpec): Follower[] {
  if (listingRootOf(model) !== parent) return [];
  return ownedNavigations(parent).flatMap((nav) => {
    const set = model.entitySets.find((s) => s.name === nav.target);
    if (!set?.changeTimestamp) return [];
    const d = nav.join.discriminator;
    const moves = (parent.relatedTimestamps ?? []).filter((r) => r.navigation === nav.name && r.field !== parent.changeTimestamp);
    return [{
      set, foreignKey: nav.join.foreignKey, referencedKey: nav.join.referencedKey,
      ...(d?.on === 'target' ? { discriminator: { field: d.field, value: d.value } } : {}), moves,
    }];
  });
}
