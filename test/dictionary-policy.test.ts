/**
 * Everything the dictionary can say, it says (ResoServer.Policy terms in csdl/): the listing root that scopes
 * apply to, charged expansions, the timestamps the service keeps and what moves them, the "filter on X ⇒
 * order by X" rule, resource discriminators and followable navigations. The generator checks each term and
 * writes it into the field tables; src/ reads them and names no resource or field of its own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildModel } from '../codegen/build-model';
import { readDictionary } from '../codegen/dictionary';
import { serviceModel } from '../generated';
import { listingRootOf } from '../src/model/service-model';
import { REPO_ROOT } from './support/shared';

const DICTIONARY = readFileSync(join(REPO_ROOT, 'csdl/reso-dictionary.xml'), 'utf8');
const set = (name: string) => serviceModel.entitySets.find((s) => s.name === name)!;
const nav = (setName: string, name: string) => set(setName).navigations.find((n) => n.name === name)!;

/** Builds the model of the dictionary with one edit, which must change it. */
function buildEdited(from: string, to: string, ...more: readonly (readonly [string, string])[]) {
  let xml = DICTIONARY;
  for (const [a, b] of [[from, to] as const, ...more]) {
    expect(xml, `the dictionary contains ${a}`).to.include(a);
    xml = xml.replace(a, b);
  }
  return () => buildModel(readDictionary(xml));
}

describe('Dictionary policy: the field tables carry it', () => {
  it('Property is the listing root; a removed listing is marked MlsStatus Delete, other records are removed', () => {
    expect(listingRootOf(serviceModel)?.name).to.equal('Property');
    expect(serviceModel.entitySets.filter((s) => s.listingRoot)).to.have.length(1);
    expect(set('Property').deletedWhen).to.deep.equal({ field: 'MlsStatus', value: 'Delete' });
    expect(serviceModel.entitySets.filter((s) => s.deletedWhen).map((s) => s.name)).to.deep.equal(['Property']);
  });

  it('expanding Media, OpenHouse and historyTransactional is charged; rooms and units are not (spec §4 expansion rules 2 and 3)', () => {
    expect(set('Property').navigations.filter((n) => n.charged).map((n) => n.name)).to.deep.equal(['Media', 'OpenHouse', 'historyTransactional']);
  });

  it('every set but the change log has ModificationTimestamp as its change timestamp and default order', () => {
    for (const s of serviceModel.entitySets.filter((x) => !x.changeLog)) {
      expect(s.changeTimestamp, s.name).to.equal('ModificationTimestamp');
      expect(s.defaultOrder, s.name).to.deep.equal(['ModificationTimestamp', s.key]);
    }
  });

  it('any related change moves the listing\'s ModificationTimestamp; photos and documents move their own timestamps (spec §2)', () => {
    const related = set('Property').relatedTimestamps!;
    expect(related.filter((r) => r.field === 'ModificationTimestamp').map((r) => r.navigation))
      .to.deep.equal(['Media', 'OpenHouse', 'historyTransactional', 'PropertyRooms', 'PropertyUnits']);
    expect(related.find((r) => r.field === 'PhotosChangeTimestamp')).to.deep.equal({
      field: 'PhotosChangeTimestamp', navigation: 'Media', when: { field: 'MediaCategory', value: 'Photo' },
    });
    expect(related.find((r) => r.field === 'DocumentsChangeTimestamp')?.when).to.deep.equal({ field: 'MediaCategory', value: 'Document' });
  });

  it('a filter on PhotosChangeTimestamp or DocumentsChangeTimestamp orders by it (spec §4 sorting rules 2 and 3), and on no other field', () => {
    const ordering = serviceModel.entitySets.flatMap((s) => s.fields.filter((f) => f.ordersWhenFiltered).map((f) => `${s.name}.${f.name}`));
    expect(ordering).to.deep.equal(['Property.DocumentsChangeTimestamp', 'Property.PhotosChangeTimestamp']);
  });

  it('Media and history belong to a listing only when their ResourceName says Property, and ResourceName is stored (not indexed) for the check', () => {
    for (const [name, target] of [['Media', 'Media'], ['historyTransactional', 'HistoryTransactional']]) {
      expect(nav('Property', name).join?.discriminator).to.deep.equal({ field: 'ResourceName', value: 'Property', on: 'target' });
      expect(set(target).fieldsByName.ResourceName.column, target).to.equal('ResourceName');
      // Checked on the rows the join's index finds: an index of its own would lure the planner off the join's.
      const table = serviceModel.tables.find((t) => t.name === set(target).table)!;
      expect(table.indexes.filter((i) => i.columns[0] === 'ResourceName'), target).to.deep.equal([]);
    }
    expect(nav('Media', 'Listing').join?.discriminator).to.deep.equal({ field: 'ResourceName', value: 'Property', on: 'source' });
    expect(nav('Property', 'OpenHouse').join?.discriminator).to.equal(undefined);
  });

  it('the navigations from Property to its collections are followable; the ones back to Property are followed as paths, not expanded', () => {
    expect(set('Property').navigations.every((n) => n.followable)).to.equal(true);
    expect(nav('Media', 'Listing').followable).to.equal(undefined);
    expect(nav('Media', 'Listing').navigable).to.equal(true);
  });

  it('Lookup and Field describe the dictionary, each part of a row under its RESO field', () => {
    expect(set('Lookup').dictionaryRows).to.deep.equal({
      kind: 'lookups',
      fields: { key: 'LookupKey', lookupName: 'LookupName', value: 'LookupValue', standardValue: 'StandardLookupValue', legacyValue: 'LegacyODataValue' },
    });
    expect(set('Field').dictionaryRows).to.deep.equal({ kind: 'fields', fields: { key: 'FieldKey', resourceName: 'ResourceName', fieldName: 'FieldName' } });
  });
  it('HistoryTransactional and Field name fields of the set their ResourceName names (history also holds the values), Lookup names lookups; each name is stored, not indexed', () => {
    expect(set('HistoryTransactional').namesFields).to.deep.equal({ field: 'FieldName', resource: 'ResourceName', values: ['NewValue', 'PreviousValue'] });
    expect(set('Field').namesFields).to.deep.equal({ field: 'FieldName', resource: 'ResourceName', values: [] });
    expect(set('Lookup').namesLookups).to.equal('LookupName');
    expect(serviceModel.entitySets.filter((s) => s.namesFields || s.namesLookups).map((s) => s.name).sort()).to.deep.equal(['Field', 'HistoryTransactional', 'Lookup']);
    for (const name of ['HistoryTransactional', 'Field']) {
      expect(set(name).fieldsByName.FieldName.column, name).to.equal('FieldName');
      const table = serviceModel.tables.find((t) => t.name === set(name).table)!;
      expect(table.indexes.filter((i) => i.columns[0] === 'FieldName'), name).to.deep.equal([]);
    }
  });
});

describe('Dictionary policy: the change log (ChangeLogOf, RESO EntityEvent)', () => {
  const log = () => set('EntityEvent').changeLog!;

  it('EntityEvent logs every served set but itself, the listing root last, ordered by its sequence key', () => {
    expect(log().sets.map((s) => s.name)).to.have.members(serviceModel.entitySets.filter((s) => !s.changeLog).map((s) => s.name));
    expect(log().sets.at(-1)!.name).to.equal('Property');
    expect(set('EntityEvent').defaultOrder).to.deep.equal(['EntityEventSequence']);
    expect([log().sequence, log().resourceName, log().recordKey, log().recordUrl]).to.deep.equal(['EntityEventSequence', 'ResourceName', 'ResourceRecordKey', undefined]);
  });

  it('each logged set says how its records reach their listing, and the prior image keeps what licences read', () => {
    const logged = (name: string) => log().sets.find((s) => s.name === name)!;
    expect(logged('Media').listing).to.deep.equal({ foreignKey: 'ResourceRecordKey', discriminator: { field: 'ResourceName', value: 'Property' } });
    expect(logged('Property').listing).to.deep.equal({ foreignKey: 'ListingKey' });
    expect(logged('Member').listing).to.equal(undefined);
    expect(logged('HistoryTransactional').columns).to.have.members(['FieldName', 'ResourceName']);
    const table = serviceModel.tables.find((t) => t.name === log().priorImage.table)!;
    expect(table.columns.map((c) => c.name)).to.include.members(['EntityEventSequence', 'ListingKey', 'MlsStatus', 'FieldName', 'LookupName']);
  });
});

describe('Dictionary policy: the generator refuses policy it cannot apply, naming it', () => {
  it('a DeletedWhen that is not "Field eq \'Value\'"', () => {
    expect(buildEdited(`String="MlsStatus eq 'Delete'"`, `String="MlsStatus ne 'Delete'"`)).to.throw(/Property: DeletedWhen.*Field eq 'Value'/);
  });

  it('a condition on an unknown field', () => {
    expect(buildEdited(`String="Media/MediaCategory eq 'Photo'"`, `String="Media/NoSuchField eq 'Photo'"`)).to.throw(/PhotosChangeTimestamp.*unknown field NoSuchField/);
  });

  it('MovedByRelated naming a navigation that cannot be followed', () => {
    expect(buildEdited('String="Media,OpenHouse,', 'String="Nowhere,OpenHouse,')).to.throw(/ModificationTimestamp: MovedByRelated: Nowhere is not a followable navigation/);
  });

  it('a ChangeLogOf naming an unknown set, or on a set whose key is not Edm.Int64', () => {
    expect(buildEdited('String="Property,Member,', 'String="Nowhere,Member,')).to.throw(/EntityEvent: ChangeLogOf: "Nowhere" is not another entity set/);
    const sequence = '<Property Name="EntityEventSequence" Type="Edm.Int64" Nullable="false"/>';
    expect(buildEdited(sequence, sequence.replace('Edm.Int64', 'Edm.String'))).to.throw(/EntityEvent: ChangeLogOf: the key EntityEventSequence is the event sequence and must be Edm.Int64/);
  });

  it('two listing roots', () => {
    const member = '<EntitySet Name="Member" EntityType="org.reso.metadata.Member">';
    expect(buildEdited(member, `${member}<Annotation Term="Policy.ListingRoot"/>`)).to.throw(/only one entity set can be the ListingRoot \(Property, Member\)/);
  });

  it('two change timestamps on one type', () => {
    const photos = '<Property Name="PhotosChangeTimestamp" Type="Edm.DateTimeOffset" Precision="3">';
    expect(buildEdited(photos, `${photos}<Annotation Term="Policy.ChangeTimestamp"/>`)).to.throw(/Property: more than one change timestamp/);
  });

  it('OrdersWhenFiltered on a field that cannot be ordered by', () => {
    const remarks = /<Property Name="PublicRemarks"[^/]*\/>/.exec(DICTIONARY)![0];
    expect(buildEdited(remarks, remarks.replace('/>', '><Annotation Term="Policy.OrdersWhenFiltered"/></Property>')))
      .to.throw(/PublicRemarks: OrdersWhenFiltered needs a filterable and sortable Edm.DateTimeOffset field/);
  });

  it('Followable on a navigation that cannot be followed (a single record nothing identifies), ChargedExpansion on one that cannot be expanded', () => {
    const listing = '<NavigationProperty Name="Listing" Type="org.reso.metadata.Property" Partner="OpenHouse">';
    const joined = `${listing}\n          <ReferentialConstraint Property="ListingKey" ReferencedProperty="ListingKey"/>`;
    // Without a constraint, a partner's, or a field named by RESO's convention (HomeKey), nothing says which field
    // holds the listing's key.
    const unjoined = (term: string) => `<NavigationProperty Name="Home" Type="org.reso.metadata.Property"><Annotation Term="Policy.${term}"/>`;
    // The set's binding follows the navigation's new name (a binding of a navigation the type lacks is refused first).
    const binding = ['<NavigationPropertyBinding Path="Listing" Target="Property"/>\n          <Annotation Term="Policy.PathAlias" String="OpenHouses"/>',
      '<NavigationPropertyBinding Path="Home" Target="Property"/>\n          <Annotation Term="Policy.PathAlias" String="OpenHouses"/>'] as const;
    expect(buildEdited(joined, unjoined('Followable'), binding)).to.throw(/OpenHouse.Home: Followable/);
    expect(buildEdited(joined, unjoined('ChargedExpansion'), binding)).to.throw(/OpenHouse.Home: ChargedExpansion/);
    expect(buildEdited(listing, `${listing}<Annotation Term="Policy.Followable"/>`)).not.to.throw();
    // A single record joined on its key expands (as itself or null): the dictionary may charge it.
    expect(buildEdited(listing, `${listing}<Annotation Term="Policy.ChargedExpansion"/>`)).not.to.throw();
  });

  it('a ResourceDiscriminator without a referential constraint to qualify', () => {
    const rooms = '<NavigationProperty Name="PropertyRooms" Type="Collection(org.reso.metadata.PropertyRooms)" Partner="Listing"/>';
    const noPartner = '<NavigationProperty Name="PropertyRooms" Type="Collection(org.reso.metadata.PropertyRooms)"><Annotation Term="Policy.ResourceDiscriminator" String="ListingKey"/></NavigationProperty>';
    expect(buildEdited(rooms, noPartner)).to.throw(/Property.PropertyRooms: ResourceDiscriminator needs a referential constraint/);
  });

  it('DescribesDictionary with an unknown kind', () => {
    expect(buildEdited('String="Lookups"', 'String="Values"')).to.throw(/Lookup: DescribesDictionary must be "Lookups" or "Fields"/);
  });

  it('a dictionary without the terms still generates, with RESO\'s ModificationTimestamp as change timestamp and no listing root', () => {
    const plain = DICTIONARY.replace(/\s*<Annotation Term="Policy\.(ListingRoot|ChangeTimestamp|DeletedWhen)"[^>]*\/>/g, '');
    const model = buildModel(readDictionary(plain));
    expect(model.entitySets.filter((s) => s.name !== 'EntityEvent').every((s) => s.changeTimestamp === 'ModificationTimestamp')).to.equal(true);
    expect(model.entitySets.some((s) => s.listingRoot || s.deletedWhen)).to.equal(false);
  });
});
