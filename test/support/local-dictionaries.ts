/**
 * Dictionaries an MLS might bring, made at test time: the shipped dictionary cut down to a subset with local
 * fields, a local lookup and a local resource; and a minimal one of keys and change timestamps.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serviceModel } from '../../generated';
import { SeededRandom } from '../../src/demo/random';
import { addField, namedFields, within, withoutField } from './dictionary-versions';
import { REPO_ROOT } from './shared';

/** The local additions of the MLS subset, as its tests name them. */
export const LOCAL = {
  lookupField: 'MLSX_ViewQuality',
  lookup: 'MLSX_ViewQuality',
  lookupValues: ['Mountain', 'Water', 'City Lights', 'None'],
  decimalField: 'MLSX_LotDepth',
  set: 'ListingNote',
  toNotes: 'MLSX_Notes',
  toListing: 'Listing',
} as const;

/** Inserts `text` before the first `marker` after `from` (which must be there). */
function insertBefore(xml: string, from: string, marker: string, text: string): string {
  const start = xml.indexOf(from);
  const at = start < 0 ? -1 : xml.indexOf(marker, start);
  if (at < 0) throw new Error(`no ${marker} after ${from}`);
  return xml.slice(0, at) + text + xml.slice(at);
}

/**
 * The shipped dictionary with about half of Property's fields removed (never one a policy, key, join or order
 * names), and the MLS's own additions: a string field with a local lookup, its values declared as the shipped
 * dictionary declares lookup values (an EnumType in org.reso.metadata.enums, each member with its
 * RESO.OData.Metadata.StandardName); a decimal field; and a resource of its own, ListingNote, reached from Property
 * by a collection navigation with a referential constraint and back by a single-valued one, logged in EntityEvent.
 * Returns the dictionary and the Property fields removed.
 */
export function mlsSubsetDictionary(): { xml: string; removed: string[] } {
  const named = namedFields(serviceModel);
  const property = serviceModel.entitySets.find((s) => s.name === 'Property')!;
  const removable = property.fields.map((f) => f.name).filter((f) => !named.has(`Property.${f}`));
  const removed = new SeededRandom(39).sample(removable, Math.round(removable.length / 2));
  let xml = readFileSync(join(REPO_ROOT, 'csdl/reso-dictionary.xml'), 'utf8');
  for (const f of removed) xml = withoutField(xml, 'Property', 'Property', f);

  xml = addField(xml, 'Property', `<Property Name="${LOCAL.lookupField}" Type="Edm.String" MaxLength="50">\n          <Annotation Term="RESO.OData.Metadata.LookupName" String="${LOCAL.lookup}"/>\n        </Property>`);
  xml = addField(xml, 'Property', `<Property Name="${LOCAL.decimalField}" Type="Edm.Decimal" Precision="10" Scale="2"/>`);
  const members = LOCAL.lookupValues.map((v, i) => `        <Member Name="${v.replace(/\s/g, '')}" Value="${i}"><Annotation Term="RESO.OData.Metadata.StandardName" String="${v}"/></Member>\n`).join('');
  xml = insertBefore(xml, '<Schema Namespace="org.reso.metadata.enums"', '    </Schema>', `      <EnumType Name="${LOCAL.lookup}">\n${members}      </EnumType>\n`);

  xml = within(xml, 'EntityType', 'Property', (text) => text.replace(/\n(\s*)<\/EntityType>$/,
    `\n        <NavigationProperty Name="${LOCAL.toNotes}" Type="Collection(org.reso.metadata.${LOCAL.set})" Partner="${LOCAL.toListing}">`
    + '\n          <ReferentialConstraint Property="ListingKey" ReferencedProperty="ListingKey"/>\n        </NavigationProperty>\n$1</EntityType>'));
  xml = insertBefore(xml, '<Schema Namespace="org.reso.metadata"', '      <EntityContainer', `      <EntityType Name="${LOCAL.set}">
        <Key><PropertyRef Name="ListingNoteKey"/></Key>
        <Property Name="ListingNoteKey" Type="Edm.String" MaxLength="255" Nullable="false"/>
        <Property Name="ListingKey" Type="Edm.String" MaxLength="255"/>
        <Property Name="ModificationTimestamp" Type="Edm.DateTimeOffset" Precision="3" Nullable="false"/>
        <Property Name="NoteText" Type="Edm.String" MaxLength="4000"/>
        <NavigationProperty Name="${LOCAL.toListing}" Type="org.reso.metadata.Property" Partner="${LOCAL.toNotes}"/>
      </EntityType>
`);
  xml = within(xml, 'EntitySet', 'Property', (text) => text.replace('<NavigationPropertyBinding Path="Media" Target="Media"/>',
    `<NavigationPropertyBinding Path="Media" Target="Media"/>\n          <NavigationPropertyBinding Path="${LOCAL.toNotes}" Target="${LOCAL.set}"/>`));
  xml = insertBefore(xml, '<EntityContainer', '      </EntityContainer>',
    `        <EntitySet Name="${LOCAL.set}" EntityType="org.reso.metadata.${LOCAL.set}">\n          <NavigationPropertyBinding Path="${LOCAL.toListing}" Target="Property"/>\n        </EntitySet>\n`);
  xml = within(xml, 'EntitySet', 'EntityEvent', (text) => text.replace(/(Term="Policy.ChangeLogOf" String="[^"]*)"/, `$1,${LOCAL.set}"`));
  return { xml, removed };
}

/**
 * Several sets with nothing but their key and ModificationTimestamp (one keyed by an integer), and one navigation:
 * a listing's detail record, keyed by the listing's key, joined by a referential constraint on the key itself.
 */
export function minimalDictionary(): string {
  const text = 'Type="Edm.String" MaxLength="255"';
  const types = [['Property', 'ListingKey', text], ['Member', 'MemberKey', text], ['Office', 'OfficeKey', text], ['Showing', 'ShowingId', 'Type="Edm.Int64"'],
    ['ListingDetail', 'ListingKey', text]] as const;
  const declared = types.map(([name, key, type]) => `      <EntityType Name="${name}">
        <Key><PropertyRef Name="${key}"/></Key>
        <Property Name="${key}" ${type} Nullable="false"/>
        <Property Name="ModificationTimestamp" Type="Edm.DateTimeOffset" Precision="3" Nullable="false"/>${name === 'Property' ? `
        <NavigationProperty Name="Detail" Type="org.example.minimal.ListingDetail">
          <ReferentialConstraint Property="ListingKey" ReferencedProperty="ListingKey"/>
        </NavigationProperty>` : ''}
      </EntityType>`).join('\n');
  const sets = types.map(([name]) => `        <EntitySet Name="${name}" EntityType="org.example.minimal.${name}"${name === 'Property'
    ? '>\n          <NavigationPropertyBinding Path="Detail" Target="ListingDetail"/>\n        </EntitySet>' : '/>'}`).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx">
  <edmx:DataServices>
    <Schema Namespace="org.example.minimal" xmlns="http://docs.oasis-open.org/odata/ns/edm">
${declared}
      <EntityContainer Name="Minimal">
${sets}
      </EntityContainer>
    </Schema>
  </edmx:DataServices>
</edmx:Edmx>
`;
}
