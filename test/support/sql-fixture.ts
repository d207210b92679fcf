/**
 * A small dictionary for the SQL compiler's snapshot tests: one field of each stored type on a listing set,
 * and a related media set whose records link to their listing. Hand-written, so a generator change cannot
 * move the snapshots; the generated field tables are exercised by the HTTP tests.
 */
import type { EntitySetSpec, FieldSpec, ServiceModel } from '../../src/model/service-model';

type Spec = Pick<FieldSpec, 'name' | 'type' | 'nullable'> & Partial<FieldSpec>;

const field = (f: Spec): FieldSpec => ({
  collection: false, filterable: true, sortable: true, restricted: false, column: f.name, ...f,
});

function entitySet(name: string, key: string, fields: readonly FieldSpec[], more: Partial<EntitySetSpec> = {}): EntitySetSpec {
  return {
    name, entityType: `org.example.${name}`, pathAliases: [], key, defaultOrder: ['ModificationTimestamp', key], table: name,
    fields, fieldsByName: Object.fromEntries(fields.map((f) => [f.name, f])), navigations: [], navigationProperties: [], bindings: [], ...more,
  };
}

export const listings = entitySet('Property', 'ListingKey', [
  field({ name: 'ListingKey', type: 'Edm.String', nullable: false, maxLength: 128 }),
  field({ name: 'ModificationTimestamp', type: 'Edm.DateTimeOffset', nullable: false }),
  field({ name: 'ListPrice', type: 'Edm.Decimal', nullable: true, precision: 14, scale: 2 }),
  field({ name: 'BedroomsTotal', type: 'Edm.Int64', nullable: true }),
  field({ name: 'City', type: 'Edm.String', nullable: true, maxLength: 50 }),
  field({ name: 'MlsStatus', type: 'Edm.String', nullable: true, maxLength: 50, lookupName: 'StandardStatus' }),
  field({ name: 'NewConstructionYN', type: 'Edm.Boolean', nullable: true }),
  field({ name: 'ListingContractDate', type: 'Edm.Date', nullable: true }),
  field({ name: 'ShowingStartTime', type: 'Edm.TimeOfDay', nullable: true }),
  field({ name: 'PublicRemarks', type: 'Edm.String', nullable: true, column: undefined, filterable: false, sortable: false }),
  field({
    name: 'Appliances', type: 'Edm.String', collection: true, nullable: true, lookupName: 'Appliances', column: undefined, sortable: false,
    valueTable: '_values_Property_Appliances',
  }),
], {
  listingRoot: true,
  navigations: [{ name: 'Media', target: 'Media', collection: true, join: { foreignKey: 'ResourceRecordKey', referencedKey: 'ListingKey' }, order: ['Order'] }],
});

export const media = entitySet('Media', 'MediaKey', [
  field({ name: 'MediaKey', type: 'Edm.String', nullable: false }),
  field({ name: 'ModificationTimestamp', type: 'Edm.DateTimeOffset', nullable: false }),
  field({ name: 'ResourceRecordKey', type: 'Edm.String', nullable: true }),
  field({ name: 'Order', type: 'Edm.Int64', nullable: true }),
]);

/** Only what visibility reads of a model. */
export const model = { entitySets: [listings, media] } as unknown as ServiceModel;
