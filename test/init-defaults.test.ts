/**
 * docs/dictionary.md "Starting from your own dictionary": the policy `reso-server init` adds to an operator's dictionary where
 * it states none, inserted into the operator's text (everything else as written), keyed by RESO's names and applied
 * only where the set or field exists with the type it needs; an annotation the operator wrote is never changed.
 * On RESO's own DD 2.0 reference files (both lookup flavours) and on small dictionaries written here.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { BuiltModel } from '../codegen/build-model';
import type { BuiltEntitySet } from '../codegen/built-entity-set';
import { modelOf } from '../codegen/generate';
import { ADDED, dictionaryWithDefaults, isDemo, replacing } from '../codegen/init';
import { POLICY_SCHEMA } from '../codegen/policy-vocabulary';
import { REPO_ROOT, requireShared, sharedPath } from './support/shared';

const SHIPPED = readFileSync(join(REPO_ROOT, 'csdl/reso-dictionary.xml'), 'utf8');

/**
 * The original's lines, in order, are all in the result (a line ending an element written self-closing may end
 * with `>` instead, its element now holding what was inserted): nothing of the author's was changed or moved.
 */
function keepsEveryLine(original: string, result: string): void {
  const lines = result.split('\n');
  let at = 0;
  for (const line of original.split('\n')) {
    const opened = line.replace(/\s*\/>$/, '>');
    while (at < lines.length && lines[at] !== line && lines[at] !== opened) at++;
    expect(at, `the original's line "${line.trim()}" is in the result, in order`).to.be.lessThan(lines.length);
    at++;
  }
}

const setOf = (model: BuiltModel, name: string): BuiltEntitySet => model.entitySets.find((s) => s.name === name)!;
const filterable = (set: BuiltEntitySet) => set.fields.filter((f) => f.filterable).map((f) => f.name).sort();
const sortable = (set: BuiltEntitySet) => set.fields.filter((f) => f.sortable).map((f) => f.name).sort();

describe('init: the policy vocabulary and the demo dictionary', () => {
  it('the shipped dictionary declares exactly the ResoServer.Policy schema init declares', () => {
    const indented = POLICY_SCHEMA.map((l) => `    ${l}`).join('\n');
    expect(SHIPPED).to.include(`\n${indented}\n`);
  });

  it('the shipped dictionary is the demo one (init replaces it without --force); RESO\'s file is not', function () {
    requireShared(this);
    expect(isDemo(SHIPPED)).to.equal(true);
    expect(isDemo(readFileSync(sharedPath('reso/dd-2.0-lookup-resource.xml'), 'utf8'))).to.equal(false);
    expect(isDemo('<edmx:Edmx><!-- reso-server demo dictionary, but inside the root --></edmx:Edmx>')).to.equal(false);
  });

  it('a dictionary that states all its policy gets nothing added (the shipped one)', () => {
    const { text, plan } = dictionaryWithDefaults(SHIPPED);
    expect(plan.applied.map((a) => a.what)).to.deep.equal([]);
    expect(text).to.equal(SHIPPED);
  });
});

describe('init: RESO DD 2.0 with string lookups gets the spec\'s policy', function () {
  this.timeout(60_000);
  let original: string;
  let text: string;
  let model: BuiltModel;
  let notApplied: readonly string[];
  before(function () {
    requireShared(this);
    original = readFileSync(sharedPath('reso/dd-2.0-lookup-resource.xml'), 'utf8');
    const result = dictionaryWithDefaults(original);
    ({ text } = result);
    notApplied = result.plan.notApplied;
    model = modelOf(text);
  });

  it('keeps every line of the operator\'s file, in order; each insertion follows init\'s comment', () => {
    keepsEveryLine(original, text);
    const added = text.split('\n').filter((l) => !original.includes(l.replace(/>$/, '/>')) && !original.includes(l));
    expect(added.length).to.be.greaterThan(100);
    // The vocabularies' references and schema, 41 sets, 3 of Property's timestamps and 3 of its navigations.
    expect(text.split(`<!-- ${ADDED} -->`).length - 1).to.equal(2 + 41 + 3 + 3);
  });

  it('Property is the listing root; a listing in status Delete is a deleted one (spec §3)', () => {
    const property = setOf(model, 'Property');
    expect(property.listingRoot).to.equal(true);
    expect(property.deletedWhen).to.deep.equal({ field: 'MlsStatus', value: 'Delete' });
    expect(model.entitySets.filter((s) => s.listingRoot).map((s) => s.name)).to.deep.equal(['Property']);
  });

  it('Property filters and orders on the spec\'s §4 fields, Lookup also on LookupName, each other set on its key and change timestamp only', () => {
    const property = setOf(model, 'Property');
    const spec = ['DocumentsChangeTimestamp', 'ListingKey', 'MlsStatus', 'ModificationTimestamp', 'PhotosChangeTimestamp', 'PropertyType'];
    expect([filterable(property), sortable(property)]).to.deep.equal([spec, spec]);
    expect([filterable(setOf(model, 'Member')), sortable(setOf(model, 'Member'))]).to.deep.equal([['MemberKey', 'ModificationTimestamp'], ['MemberKey', 'ModificationTimestamp']]);
    expect(filterable(setOf(model, 'InternetTracking')), 'no ModificationTimestamp: its key').to.deep.equal(['EventKey']);
    expect(filterable(setOf(model, 'EntityEvent'))).to.deep.equal(['EntityEventSequence', 'ResourceName', 'ResourceRecordKey']);
    expect(sortable(setOf(model, 'EntityEvent'))).to.deep.equal(['EntityEventSequence']);
    // RESO's Lookup is read by lookup name (its clients, reso-cert): Lookup?$filter=LookupName eq 'StandardStatus'.
    expect([filterable(setOf(model, 'Lookup')), sortable(setOf(model, 'Lookup'))]).to.deep.equal([['LookupKey', 'LookupName', 'ModificationTimestamp'], ['LookupKey', 'LookupName', 'ModificationTimestamp']]);
  });

  it('the service keeps the listing\'s timestamps: every related record moves ModificationTimestamp, photos and documents their own; a filter on those orders by them', () => {
    const property = setOf(model, 'Property');
    const moved = (field: string) => property.relatedTimestamps!.filter((r) => r.field === field).map((r) => (r.when ? `${r.navigation}/${r.when.field} eq ${r.when.value}` : r.navigation));
    expect(moved('ModificationTimestamp')).to.deep.equal(['GreenBuildingVerifications', 'HistoryTransactional', 'Media', 'OpenHouses', 'PowerProduction', 'Rooms', 'SocialMedia', 'UnitTypes']);
    expect(moved('PhotosChangeTimestamp')).to.deep.equal(['Media/MediaCategory eq Photo']);
    expect(moved('DocumentsChangeTimestamp')).to.deep.equal(['Media/MediaCategory eq Document']);
    expect(property.fields.filter((f) => f.ordersWhenFiltered).map((f) => f.name)).to.deep.equal(['DocumentsChangeTimestamp', 'PhotosChangeTimestamp']);
  });

  it('expanding Media, OpenHouses or HistoryTransactional is charged (spec §4); the other expansions are not', () => {
    const property = setOf(model, 'Property');
    expect(property.navigations.filter((n) => n.charged).map((n) => n.name)).to.deep.equal(['HistoryTransactional', 'Media', 'OpenHouses']);
    expect(property.navigations.find((n) => n.name === 'Rooms')).to.include({ followable: true }).and.not.have.property('charged');
  });

  it('EntityEvent logs every other set; Field describes the dictionary; Lookup pages by $top and, its values being data, is left to the operator', () => {
    const log = setOf(model, 'EntityEvent').changeLog!;
    expect(log.sets.map((s) => s.name)).to.have.members(model.entitySets.filter((s) => s.name !== 'EntityEvent').map((s) => s.name));
    expect(setOf(model, 'Field').dictionaryRows?.kind).to.equal('fields');
    expect(setOf(model, 'Lookup').pagedByTop).to.equal(true);
    expect(setOf(model, 'Lookup').dictionaryRows).to.equal(undefined);
    expect(notApplied).to.deep.equal(['Lookup: DescribesDictionary not added: the dictionary does not hold the values of 222 of the 222 lookups '
      + 'its fields name (Country, CountyOrParish, StateOrProvince, …), so the Lookup rows are your data: ingest them']);
  });

  it('a second init adds nothing: the result states it all', () => {
    const again = dictionaryWithDefaults(text);
    expect([again.plan.applied.length, again.text === text]).to.deep.equal([0, true]);
  });
});

describe('init: the Lookup resource describes the dictionary only when the dictionary holds every lookup\'s values', function () {
  this.timeout(60_000);
  it('RESO DD 2.0 with EnumType lookups: some lookups\' values are each MLS\'s (CountyOrParish, MlsStatus): the rows are data', function () {
    requireShared(this);
    const { text, plan } = dictionaryWithDefaults(readFileSync(sharedPath('reso/dd-2.0-enum.xml'), 'utf8'));
    const model = modelOf(text);
    expect(setOf(model, 'Lookup').dictionaryRows).to.equal(undefined);
    expect(plan.notApplied).to.deep.equal(['Lookup: DescribesDictionary not added: the dictionary does not hold the values of 29 of the 222 lookups '
      + 'its fields name (CountyOrParish, AOR, ImageSizeDescription, …), so the Lookup rows are your data: ingest them']);
    expect(setOf(model, 'Property').listingRoot).to.equal(true);
  });

  it('a dictionary whose lookups all have their values: Lookup describes them', () => {
    const { text, plan } = dictionaryWithDefaults(small({
      mlsStatus: '<Property Name="StandardStatus" Type="mls.enums.StandardStatus"/>',
      types: LOOKUP_TYPE,
      sets: '<EntitySet Name="Lookup" EntityType="mls.Lookup"/>',
      schemas: '<Schema Namespace="mls.enums" xmlns="http://docs.oasis-open.org/odata/ns/edm"><EnumType Name="StandardStatus"><Member Name="Active"/><Member Name="Closed"/></EnumType></Schema>',
    }));
    expect(plan.applied.map((a) => a.what)).to.include('Lookup: Policy.DescribesDictionary "Lookups"');
    expect(setOf(modelOf(text), 'Lookup').dictionaryRows?.kind).to.equal('lookups');
  });
});

/** A small dictionary in RESO's names; `parts` replace its pieces. */
const LOOKUP_TYPE = `<EntityType Name="Lookup"><Key><PropertyRef Name="LookupKey"/></Key>${
  ['LookupKey', 'LookupName', 'LookupValue', 'StandardLookupValue', 'LegacyODataValue'].map((n) => `<Property Name="${n}" Type="Edm.String"/>`).join('')
}<Property Name="ModificationTimestamp" Type="Edm.DateTimeOffset"/></EntityType>`;

interface SmallParts {
  readonly edmxHead?: string;
  readonly propertySet?: string;
  readonly mlsStatus?: string;
  readonly types?: string;
  readonly sets?: string;
  readonly schemas?: string;
  readonly layout?: (xml: string) => string;
}

function small(parts: SmallParts = {}): string {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<!-- The operator's comment, kept. -->
<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx">${parts.edmxHead ?? ''}
  <edmx:DataServices>
    <Schema Namespace="mls" xmlns="http://docs.oasis-open.org/odata/ns/edm">
      <EntityType Name="Property">
        <Key><PropertyRef Name="ListingKey"/></Key>
        <Property Name="ListingKey" Type="Edm.String" MaxLength="64"/>
        <Property Name="ModificationTimestamp" Type="Edm.DateTimeOffset"/>
        ${parts.mlsStatus ?? '<Property Name="MlsStatus" Type="Edm.String" MaxLength="50"/>'}
        <Property Name="ListPrice" Type="Edm.Decimal" Precision="14" Scale="2"/>
        <Property Name="PhotosChangeTimestamp" Type="Edm.DateTimeOffset"/>
        <NavigationProperty Name="Media" Type="Collection(mls.Media)"/>
      </EntityType>
      <EntityType Name="Media">
        <Key><PropertyRef Name="MediaKey"/></Key>
        <Property Name="MediaKey" Type="Edm.String" MaxLength="64"/>
        <Property Name="ModificationTimestamp" Type="Edm.DateTimeOffset"/>
        <Property Name="ResourceRecordKey" Type="Edm.String" MaxLength="64"/>
        <Property Name="ResourceName" Type="Edm.String" MaxLength="64"/>
        <Property Name="MediaCategory" Type="Edm.String" MaxLength="64"/>
      </EntityType>${parts.types ?? ''}
      <EntityContainer Name="Default">
        ${parts.propertySet ?? '<EntitySet Name="Property" EntityType="mls.Property"/>'}
        <EntitySet Name="Media" EntityType="mls.Media"/>${parts.sets ?? ''}
      </EntityContainer>
    </Schema>${parts.schemas ?? ''}
  </edmx:DataServices>
</edmx:Edmx>
`;
  return parts.layout ? parts.layout(xml) : xml;
}

describe('init: what the operator wrote stays as written', () => {
  it('stated policy is never changed, even under other aliases; what is missing is added with the aliases the file uses', () => {
    const original = small({
      edmxHead: '\n  <edmx:Reference Uri="https://example.org/cap.xml"><edmx:Include Namespace="Org.OData.Capabilities.V1" Alias="Cap"/></edmx:Reference>',
      propertySet: `<EntitySet Name="Property" EntityType="mls.Property">
          <Annotation Term="ResoServer.Policy.DeletedWhen" String="MlsStatus eq 'Withdrawn'"/>
          <Annotation Term="Cap.FilterRestrictions"><Record><PropertyValue Property="NonFilterableProperties"><Collection/></PropertyValue></Record></Annotation>
        </EntitySet>`,
    });
    const { text, plan } = dictionaryWithDefaults(original);
    keepsEveryLine(original, text);
    const model = modelOf(text);
    const property = setOf(model, 'Property');
    expect(property.deletedWhen).to.deep.equal({ field: 'MlsStatus', value: 'Withdrawn' });
    expect(filterable(property), 'its own FilterRestrictions: every field').to.deep.equal(['ListPrice', 'ListingKey', 'MlsStatus', 'ModificationTimestamp', 'PhotosChangeTimestamp']);
    expect(sortable(property), 'SortRestrictions added').to.deep.equal(['ListingKey', 'MlsStatus', 'ModificationTimestamp', 'PhotosChangeTimestamp']);
    expect(text).to.include('<Annotation Term="Cap.SortRestrictions">').and.not.include('Alias="Capabilities"');
    expect(plan.applied.map((a) => a.what)).to.include.members(['a reference to Org.OData.Core.V1 (alias Core)', 'the ResoServer.Policy schema (alias Policy)', 'Property: Policy.ListingRoot']);
    expect(property.relatedTimestamps!.map((r) => r.navigation)).to.deep.equal(['Media', 'Media']);
  });

  it('a default applies only where its field exists with the type it needs', () => {
    const { plan, text } = dictionaryWithDefaults(small({ mlsStatus: '<Property Name="MlsStatus" Type="Collection(Edm.String)"/>' }));
    expect(setOf(modelOf(text), 'Property').deletedWhen).to.equal(undefined);
    expect(plan.notApplied).to.include('Property: DeletedWhen not added: no single Edm.String MlsStatus');
    const root = dictionaryWithDefaults(small({ mlsStatus: '' }).replace('<Property Name="ModificationTimestamp" Type="Edm.DateTimeOffset"/>', ''));
    expect(root.plan.notApplied).to.include('Property: ListingRoot not added: its type has no Edm.DateTimeOffset ModificationTimestamp, which the listing root needs');
    expect(modelOf(root.text).entitySets.some((s) => s.listingRoot)).to.equal(false);
  });

  it('a condition default applies only where the field\'s closed lookup holds its value (else generate would refuse it)', () => {
    const { plan, text } = dictionaryWithDefaults(small({
      mlsStatus: '<Property Name="MlsStatus" Type="mls.enums.MlsStatus"/>',
      schemas: '<Schema Namespace="mls.enums" xmlns="http://docs.oasis-open.org/odata/ns/edm"><EnumType Name="MlsStatus"><Member Name="Active"/><Member Name="Removed"/></EnumType></Schema>',
    }));
    expect(setOf(modelOf(text), 'Property').deletedWhen).to.equal(undefined);
    expect(plan.notApplied).to.include('Property: DeletedWhen not added: the lookup MlsStatus of MlsStatus has no value Delete');
  });

  it('follows the file\'s layout: its indentation step, its line endings, one line when it is one line', () => {
    const tabs = small({ layout: (xml) => xml.replace(/^( {2})+/gm, (m) => '\t'.repeat(m.length / 2)) });
    const tabbed = dictionaryWithDefaults(tabs).text;
    keepsEveryLine(tabs, tabbed);
    expect(tabbed).to.include('\t\t\t\t<EntitySet Name="Media" EntityType="mls.Media">\n\t\t\t\t\t<!-- added by reso-server init -->\n\t\t\t\t\t<Annotation Term="Capabilities.FilterRestrictions">\n\t\t\t\t\t\t<Record>');
    const crlf = small({ layout: (xml) => xml.replace(/\n/g, '\r\n') });
    expect(dictionaryWithDefaults(crlf).text.replace(/\r\n/g, '')).to.not.include('\n');
    const oneLine = small({ layout: (xml) => xml.replace(/\n\s*/g, '') });
    const inline = dictionaryWithDefaults(oneLine).text;
    expect(inline.split('\n')).to.have.length(1);
    expect(setOf(modelOf(inline), 'Property').listingRoot).to.equal(true);
  });
});

describe('init: what it replaces in the project, and the migration history that follows', () => {
  let dir: string;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'reso-init-replacing-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('nothing there, or the demo dictionary: replaced (a new history); the same dictionary: kept; one of the operator\'s own: only with --force (its history kept)', () => {
    const target = join(dir, 'reso-dictionary.xml');
    const mine = small();
    expect(replacing(target, mine, false, dir)).to.equal('none');
    writeFileSync(target, SHIPPED);
    expect(replacing(target, mine, false, dir)).to.equal('demo');
    writeFileSync(target, mine);
    expect(replacing(target, mine, false, dir)).to.equal('same');
    const other = mine.replace('<!-- The operator\'s comment, kept. -->', '<!-- Another version. -->');
    expect(() => replacing(target, other, false, dir)).to.throw(/ holds another dictionary, not the demo one \(it has no "reso-server demo dictionary" comment\): run init again with --force to replace it; its migration history in .+ is kept/);
    expect(replacing(target, other, true, dir)).to.equal('own');
  });
});
