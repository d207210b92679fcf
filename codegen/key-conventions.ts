/**
 * RESO's key conventions, for navigations the dictionary declares without a referential constraint (RESO's own
 * DD 2.0 reference files declare none, so without these every expansion of them would be refused).
 * - Collections: related records carry their owner's key under the same name (OpenHouse.ListingKey,
 *   PropertyRooms.ListingKey); records any resource may own (Media, HistoryTransactional, SocialMedia,
 *   OtherPhone) carry it in ResourceRecordKey, with the owner's resource name in ResourceName.
 * - Single-valued: the record names the related one by `<Navigation>Key` (Property.ListAgent by ListAgentKey,
 *   Member's MemberKey; ListOffice by ListOfficeKey; OpenHouse.Listing by ListingKey).
 */
import type { NavigationSpec } from '../src/model/service-model';
import type { EntityTypeDef } from './dictionary-defs';

/** The fields RESO names for records that any resource may own. */
const OWNED_BY_ANY = { key: 'ResourceRecordKey', resource: 'ResourceName' } as const;

/**
 * `<Navigation>Key` fields that hold this record's own key in another system, not the key of the record the
 * navigation leads to: RESO's OriginatingSystemKey and SourceSystemKey ("the system key, a unique record identifier,
 * from the originating system", DD 2.0), beside navigations of the same name to OUID (which OriginatingSystemID
 * names, by its OrganizationUniqueId, not by its key). Following them would hand out a wrong record.
 */
const KEYS_IN_OTHER_SYSTEMS = /(?:OriginatingSystem|SourceSystem)Key$/;

const typeOf = (t: EntityTypeDef, name: string) => t.properties.find((p) => p.name === name)?.type;

/** How the navigation's `target` records join `source` by RESO's conventions, or undefined when none applies. */
export function conventionalJoin(
  source: EntityTypeDef, sourceSet: string, navigation: { readonly name: string; readonly collection: boolean }, target: EntityTypeDef | undefined,
): NavigationSpec['join'] | undefined {
  if (!target) return undefined;
  return navigation.collection ? ownedJoin(source, sourceSet, target) : namedJoin(source, navigation.name, target);
}

/** A collection's records carrying their owner's key. */
function ownedJoin(source: EntityTypeDef, sourceSet: string, target: EntityTypeDef): NavigationSpec['join'] | undefined {
  const keyType = typeOf(source, source.key);
  if (keyType !== undefined && typeOf(target, source.key) === keyType) {
    return { foreignKey: source.key, referencedKey: source.key };
  }
  if (typeOf(target, OWNED_BY_ANY.key) === keyType && typeOf(target, OWNED_BY_ANY.resource) === 'Edm.String') {
    return {
      foreignKey: OWNED_BY_ANY.key,
      referencedKey: source.key,
      discriminator: { field: OWNED_BY_ANY.resource, value: sourceSet, on: 'target' },
    };
  }
  return undefined;
}

/**
 * How the one `target` record a single-valued navigation `name` of `source` leads to is found by RESO's
 * convention: `source.<name>Key = target.<key>`. Safe because it names one field and one record: the field is
 * RESO's name for exactly that foreign key (DD 2.0 describes ListAgentKey as "a foreign key relating to the
 * Member Resource's MemberKey"), it is a single value of the target key's own type, and the target's key is
 * unique, so a record leads to one record or none, never to a guess among several. Where no such field
 * exists (or it is one of KEYS_IN_OTHER_SYSTEMS), nothing identifies the related record and the navigation
 * stays closed.
 */
function namedJoin(source: EntityTypeDef, name: string, target: EntityTypeDef): NavigationSpec['join'] | undefined {
  const field = `${name}Key`;
  const keyType = typeOf(target, target.key);
  if (keyType === undefined || KEYS_IN_OTHER_SYSTEMS.test(field) || typeOf(source, field) !== keyType) return undefined;
  return { foreignKey: target.key, referencedKey: field };
}
