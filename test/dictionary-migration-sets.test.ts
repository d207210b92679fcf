/**
 * docs/dictionary.md "Changing the dictionary", continued (see dictionary-migration.test.ts): lookup values added and removed,
 * a field made unfilterable and a new field, a new entity set and a navigation, a decimal's precision and scale,
 * and three instances starting together on a changed dictionary. Each on a populated database, with consumers
 * replicating through the change.
 */
import { expect } from 'chai';
import { MigrationRefused } from '../src/storage/migrations/record-migration';
import type { ServiceModel } from '../src/model/service-model';
import { RunningServer, startServer } from '../src/process/server';
import { describeEachDatabase } from './support/databases';
import {
  addField, addLookupValue, DictionaryVersions, editProperty, makeUnqueryable, removeField, removeLookupValue, within,
} from './support/dictionary-versions';
import { get, odataError, testConfig } from './support/http';
import { HEADERS, LiveDatabase } from './support/live-database';
import type { Rec } from './support/replication-paging';

const LISTINGS = 12;

const timestamps = (records: Map<string, Rec>) => new Map([...records].map(([k, r]) => [k, r.ModificationTimestamp as string]));

describeEachDatabase('Changing the dictionary under a live database: lookups, capabilities, sets', (target) => {
  const versions = new DictionaryVersions();
  after(() => versions.remove());

  describe('lookup values added and removed (PropertyType)', function () {
    let live: LiveDatabase;
    let used: Set<string>;
    before(async () => {
      live = await LiveDatabase.open(target, versions.base.model, LISTINGS);
      used = new Set([...(await live.records('Property', 'ListingKey')).values()].map((r) => r.PropertyType as string));
    });
    after(() => live.close());

    it('an added value is accepted and filtered on; an unused one removed; no record moves', async () => {
      const all = versions.base.model.lookups.find((l) => l.name === 'PropertyType')!.values;
      const unused = all.find((v) => !used.has(v.value))!;
      const before = await live.records('Property', 'ListingKey');
      const next = versions.next((xml) => removeLookupValue(addLookupValue(xml, 'PropertyType', 'Houseboat', 'Houseboat'), 'PropertyType', unused.legacyODataValue));
      await live.restart(next.model);
      expect(timestamps(await live.records('Property', 'ListingKey'))).to.deep.equal(timestamps(before));
      const [first] = before.values();
      await live.ingest('Property', [{ ...first, PropertyType: 'Houseboat' }]);
      expect([...(await live.records('Property', 'ListingKey', "?$filter=PropertyType eq 'Houseboat'")).keys()]).to.deep.equal([first.ListingKey]);
      const lookup = await get(`${live.url}/Lookup?$filter=${encodeURIComponent("LookupName eq 'PropertyType'")}`, HEADERS);
      const values = (lookup.json.value as Rec[]).map((r) => r.LookupValue);
      expect(values).to.include('Houseboat');
      expect(values).not.to.include(unused.value);
      expect(await live.replicationDifferences()).to.deep.equal([]);
    });

    it('removing a value a record holds is refused at start, naming the record; the database is left as it was', async () => {
      const before = await live.records('Property', 'ListingKey');
      const holder = [...before.values()].find((r) => r.PropertyType === 'Residential')!;
      const next = versions.next((xml) => removeLookupValue(xml, 'PropertyType', 'Residential'));
      const running = live.server.service.model;
      const refused = await live.restart(next.model).then(() => undefined, (e: unknown) => e);
      expect(refused).to.be.instanceOf(MigrationRefused);
      expect((refused as Error).message).to.include(`${holder.ListingKey}: PropertyType: "Residential" is not a value of lookup PropertyType`);
      await live.restart(running);
      expect(await live.records('Property', 'ListingKey')).to.deep.equal(before);
    });
  });

  describe('a field made unfilterable (PropertyType), and a new field (filterable by default)', function () {
    let live: LiveDatabase;
    let model: ServiceModel;
    let notices: readonly string[];
    let stored: Map<string, Rec>;
    let token: string;
    before(async () => {
      live = await LiveDatabase.open(target, versions.base.model, LISTINGS);
      stored = await live.records('Property', 'ListingKey');
      await live.server.service.clients.register({ id: 'by-type', name: 'residential only', scope: "PropertyType eq 'Residential'", hiddenFields: [] });
      token = await live.server.service.clients.issueToken('by-type', undefined);
      const next = versions.next((xml) => addField(makeUnqueryable(xml, 'Property', 'PropertyType'), 'Property', '<Property Name="FloorCovering" Type="Edm.String" MaxLength="50"/>'));
      ({ model, notices } = next);
      await live.restart(model);
    });
    after(() => live.close());

    it('generate says the new field is filterable and indexed, and how to keep it unindexed', () => {
      expect(notices.join('\n')).to.match(/Property\.FloorCovering is new and filterable and sortable.*NonFilterableProperties/);
    });

    it('the unfilterable field answers 501, its index is gone; the new field is null everywhere, and no timestamp moved', async () => {
      for (const query of ["$filter=PropertyType eq 'Residential'", '$orderby=PropertyType']) {
        const r = await get(`${live.url}/Property?${query}`, HEADERS);
        expect(r.status, query).to.equal(501);
        expect(odataError(r).code).to.match(/NotFilterable|NotSortable/);
      }
      expect(await live.plan('SELECT `_record` FROM `Property` WHERE `ListingKey` = ?', ['x'])).not.to.include('ix_Property_PropertyType');
      const after = await live.records('Property', 'ListingKey');
      expect(timestamps(after)).to.deep.equal(timestamps(stored));
      for (const r of after.values()) expect(r.FloorCovering).to.equal(null);
    });

    it('a client whose scope filters on the field is refused (403) until its scope is corrected, and the start said so', async () => {
      const r = await get(`${live.url}/Property`, { Authorization: `Bearer ${token}` });
      expect([r.status, odataError(r).code]).to.deep.equal([403, 'LicenceInvalid']);
      expect(live.said.join('\n')).to.match(/client by-type: .*PropertyType.*refused \(403\)/);
      await live.server.service.clients.setScope('by-type', "MlsStatus eq 'Active'");
      const after = await get(`${live.url}/Property`, { Authorization: `Bearer ${token}` });
      expect(after.status, after.text).to.equal(200);
    });

    it('the new field is filtered on through its index', async () => {
      const [first] = stored.values();
      await live.ingest('Property', [{ ...first, FloorCovering: 'Oak' }]);
      expect([...(await live.records('Property', 'ListingKey', "?$filter=FloorCovering eq 'Oak'")).keys()]).to.deep.equal([first.ListingKey]);
      expect(await live.plan('SELECT `_record` FROM `Property` WHERE `FloorCovering` = ?', ['Oak'])).to.include('ix_Property_FloorCovering');
      expect(await live.replicationDifferences()).to.deep.equal([]);
    });
  });

  describe('a new entity set (Teams) and a new navigation (Office → its members)', function () {
    let live: LiveDatabase;
    let model: ServiceModel;
    before(async () => {
      live = await LiveDatabase.open(target, versions.base.model, LISTINGS);
      const next = versions.next((xml) => {
        const teams = `<EntityType Name="Teams">
        <Key><PropertyRef Name="TeamKey"/></Key>
        <Property Name="TeamKey" Type="Edm.String" MaxLength="255" Nullable="false"/>
        <Property Name="ModificationTimestamp" Type="Edm.DateTimeOffset" Precision="3" Nullable="false"/>
        <Property Name="TeamName" Type="Edm.String" MaxLength="50"/>
      </EntityType>
      `;
        let x = xml.replace('<EntityType Name="Lookup">', `${teams}<EntityType Name="Lookup">`);
        x = x.replace('<EntitySet Name="Lookup"', '<EntitySet Name="Teams" EntityType="org.reso.metadata.Teams"/>\n        <EntitySet Name="Lookup"');
        x = within(x, 'EntityType', 'Member', (t) => t.replace('</EntityType>',
          '  <NavigationProperty Name="Office" Type="org.reso.metadata.Office" Partner="OfficeMembers">\n          <ReferentialConstraint Property="OfficeKey" ReferencedProperty="OfficeKey"/>\n        </NavigationProperty>\n      </EntityType>'));
        x = within(x, 'EntityType', 'Office', (t) => t.replace('</EntityType>',
          '  <NavigationProperty Name="OfficeMembers" Type="Collection(org.reso.metadata.Member)" Partner="Office"/>\n      </EntityType>'));
        return within(x, 'EntitySet', 'Office', (t) => t.replace('>', '>\n          <NavigationPropertyBinding Path="OfficeMembers" Target="Member"/>'));
      });
      model = next.model;
      await live.restart(model);
    });
    after(() => live.close());

    it('the service document lists the new set; it answers, empty, then with what is ingested', async () => {
      const root = await get(`${live.url}/`, HEADERS);
      expect((root.json.value as Rec[]).map((s) => s.name)).to.include('Teams');
      expect((await get(`${live.url}/Teams`, HEADERS)).json.value).to.deep.equal([]);
      await live.ingest('Teams', [{ TeamKey: 'T1', TeamName: 'North' }]);
      const teams = (await get(`${live.url}/Teams?$filter=${encodeURIComponent("TeamKey eq 'T1'")}`, HEADERS)).json.value as Rec[];
      expect(teams.map((t) => t.TeamName)).to.deep.equal(['North']);
      // Without Capabilities on the set, only its key and change timestamp are indexed (and said so).
      expect((await get(`${live.url}/Teams?$filter=${encodeURIComponent("TeamName eq 'North'")}`, HEADERS)).status).to.equal(501);
      expect(model.migrations.at(-1)!.changes[0]).to.equal('Teams: new entity set (table Teams; filterable: TeamKey, ModificationTimestamp)');
    });

    it('an office expands to exactly its members', async () => {
      const members = [...(await live.records('Member', 'MemberKey')).values()];
      const office = members[0].OfficeKey as string;
      const r = await get(`${live.url}/Office('${office}')?$expand=OfficeMembers`, HEADERS);
      expect(r.status).to.equal(200);
      const expanded = (r.json.OfficeMembers as Rec[]).map((m) => m.MemberKey).sort();
      expect(expanded).to.deep.equal(members.filter((m) => m.OfficeKey === office).map((m) => m.MemberKey).sort());
      expect(await live.replicationDifferences()).to.deep.equal([]);
    });
  });

  describe('a decimal\'s precision and scale (ListPrice)', function () {
    let live: LiveDatabase;
    before(async () => {
      live = await LiveDatabase.open(target, versions.base.model, LISTINGS);
    });
    after(() => live.close());

    it('a wider precision and scale keep every value and move no timestamp; a scale that would round a value is refused', async () => {
      const [first] = (await live.records('Property', 'ListingKey')).values();
      await live.ingest('Property', [{ ...first, ListPrice: 412345.67 }]);
      const before = await live.records('Property', 'ListingKey');
      const wider = versions.next((xml) => editProperty(xml, 'Property', 'ListPrice', (d) => d.replace('Precision="14" Scale="2"', 'Precision="16" Scale="3"')));
      await live.restart(wider.model);
      expect(await live.records('Property', 'ListingKey')).to.deep.equal(before);
      const whole = versions.next((xml) => editProperty(xml, 'Property', 'ListPrice', (d) => d.replace('Precision="16" Scale="3"', 'Precision="16" Scale="0"')), wider);
      const refused = await live.restart(whole.model).then(() => undefined, (e: unknown) => e);
      expect((refused as Error).message).to.include(`${first.ListingKey}: ListPrice: 412345.67 does not fit Scale 0 without rounding`);
      await live.restart(wider.model);
      expect(await live.replicationDifferences()).to.deep.equal([]);
    });
  });

  describe('three instances starting together on a changed dictionary', function () {
    let live: LiveDatabase;
    const servers: RunningServer[] = [];
    after(async () => {
      for (const s of servers) await s.close();
      await live.close();
    });

    it('one migrates (each migration applied once, each changed record moved once); all three serve the new model', async () => {
      live = await LiveDatabase.open(target, versions.base.model, LISTINGS);
      const before = await live.records('Property', 'ListingKey');
      const removed = versions.next((xml) => removeField(xml, 'Property', 'Property', 'BuilderName'));
      const next = versions.next((xml) => addField(xml, 'Property', '<Property Name="FloorCovering" Type="Edm.String" MaxLength="50"/>'), removed);
      await live.stop();
      const lines: string[][] = [[], [], []];
      servers.push(...await Promise.all(lines.map((said) => startServer(next.model, testConfig(live.db.url), (l) => said.push(l)))));
      // The ones that found another doing the work answer 503 until it is done, then go on by themselves.
      await Promise.all(servers.map((s) => s.service.readiness.whenReady()));
      const applied = lines.map((said) => said.filter((l) => l.startsWith('migration dictionary/')).length);
      expect(applied.sort()).to.deep.equal([0, 0, 2]);
      const names = (await servers[0].service.db.all('SELECT name FROM reso_migrations ORDER BY id')).map((r) => String(r.name));
      const expected = [...versions.baseMigrations, versions.migrationName('property-buildername-removed'), versions.migrationName('property-floorcovering-new-field', 2)];
      expect(names.filter((n) => n.startsWith('dictionary/'))).to.deep.equal(expected.map((n) => `dictionary/${n}`));
      const holders = [...before.values()].filter((r) => r.BuilderName !== null).map((r) => r.ListingKey);
      const events = await servers[0].service.db.all("SELECT ResourceRecordKey AS k, COUNT(*) AS n FROM EntityEvent WHERE ResourceName = 'Property' AND EntityEventSequence > ? GROUP BY ResourceRecordKey", [live.byEvents.mark]);
      expect(events.map((e) => e.k).sort()).to.deep.equal(holders.sort());
      expect(events.every((e) => Number(e.n as number) === 1)).to.equal(true);
      for (const s of servers) expect((await get(`${s.url}/Property?$filter=${encodeURIComponent("FloorCovering eq 'x'")}`, HEADERS)).status).to.equal(200);
    });
  });
});
