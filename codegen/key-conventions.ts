/**
 * RESO's key conventions, for a collection navigation the dictionary declares without a referential
 * constraint (RESO's own DD 2.0 reference files declare none, so without these every expansion of them would
 * be refused). Related records carry their owner's key under the same name (OpenHouse.ListingKey,
 * PropertyRooms.ListingKey); records any resource may own (Media, HistoryTransactional, SocialMedia,
 * OtherPhone) carry it in ResourceRecordKey, with the owner's resource name in ResourceName.
 */
import type { NavigationSpec } from '../src/model/service-model';
import type { EntityTypeDef } from './dictionary';

/** The fields RESO names for records that any resource may own. */
const OWNED_BY_ANY = { key: 'ResourceRecordKey', resource: 'ResourceName' } as const;

/** How `target` records join `source` by RESO's conventions, or undefined when neither applies. */
export function conventionalJoin(source: EntityTypeDef, sourceSet: string, target: EntityTypeDef): NavigationSpec['join'] | undefined {
  const typeOf = (t: EntityTypeDef, name: string) => t.properties.find((p) => p.name === name)?.type;
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
