/**
 * docs/dictionary.md "Changing the dictionary": each kind of change applied to a populated database (demo data and
 * ingested records) the way an operator applies it (edit the CSDL, `generate`, start on the new model), with
 * consumers replicating through it by ModificationTimestamp and by EntityEvent. After each: the server starts;
 * every record serves what the new $metadata says; filters and orders on changed fields give what a filter of the
 * served records gives, through an index; both consumers end exact. A change that stored records cannot take is
 * refused at start, naming them, and leaves the database as it was.
 */
import { expect } from 'chai';
import { planMigration } from '../src/storage/migrations/migrate';
import { MigrationRefused } from '../src/storage/migrations/record-migration';
import type { EntitySetSpec, ServiceModel } from '../src/model/service-model';
import { ListingService } from '../src/process/service';
import { openDatabase } from '../src/storage/db/open-database';
import { describeEachDatabase } from './support/databases';
import { DictionaryVersions, editProperty, makeQueryable, removeField } from './support/dictionary-versions';
import { get } from './support/http';
import { HEADERS, LiveDatabase } from './support/live-database';
import type { Rec } from './support/replication-paging';

const LISTINGS = 12;

/** The ways a served record may disagree with the set's fields in $metadata. */
function disagreements(set: EntitySetSpec, r: Rec): string[] {
  const fields = new Set(set.fields.map((f) => f.name));
  const out = Object.keys(r).filter((k) => !k.startsWith('@') && !fields.has(k)).map((k) => `${k} is not in $metadata`);
  for (const f of set.fields) {
    const v = r[f.name];
    if (!(f.name in r)) out.push(`${f.name} is missing`);
    if (v === null || v === undefined) continue;
    const values = f.collection ? (v as unknown[]) : [v];
    const expected = ['Edm.Int16', 'Edm.Int32', 'Edm.Int64', 'Edm.Decimal', 'Edm.Double'].includes(f.type) ? 'number' : f.type === 'Edm.Boolean' ? 'boolean' : 'string';
    for (const x of values) if (typeof x !== expected) out.push(`${f.name}: ${JSON.stringify(x)} is not a ${expected} (${f.type})`);
    if (f.maxLength && !f.collection && typeof v === 'string' && v.length > f.maxLength) out.push(`${f.name} is longer than ${f.maxLength}`);
  }
  return out;
}

async function disagreementsOf(live: LiveDatabase, model: ServiceModel, setName: string): Promise<string[]> {
  const set = model.entitySets.find((s) => s.name === setName)!;
  return [...(await live.records(setName, set.key)).values()].flatMap((r) => disagreements(set, r).map((d) => `${r[set.key]}: ${d}`));
}

const property = (model: ServiceModel) => model.entitySets.find((s) => s.name === 'Property')!;
const filtered = async (live: LiveDatabase, filter: string) => (
  [...(await live.records('Property', 'ListingKey', `?$filter=${encodeURIComponent(filter)}`)).keys()].sort());

describeEachDatabase('Changing the dictionary under a live database', (target) => {
  const versions = new DictionaryVersions();
  after(() => versions.remove());

  describe('a field removed (Property.BuilderName): its values leave the records', function () {
    let live: LiveDatabase;
    let stored: Map<string, Rec>;
    before(async () => {
      live = await LiveDatabase.open(target, versions.base.model, LISTINGS);
      await live.ingest('Property', [{ ...[...(await live.records('Property', 'ListingKey')).values()][0], BuilderName: 'Acme Homes' }]);
      stored = await live.records('Property', 'ListingKey');
    });
    after(() => live.close());

    it('generate writes the next migration, and a dry run says what a start would do, changing nothing', async () => {
      const next = versions.next((xml) => removeField(xml, 'Property', 'Property', 'BuilderName'));
      const name = versions.migrationName('property-buildername-removed');
      expect(next.model.migrations.map((m) => m.name)).to.deep.equal([...versions.baseMigrations, name]);
      expect(next.model.migrations.at(-1)!.changes.join('\n')).to.include('Property.BuilderName: removed');
      const holders = [...stored.values()].filter((r) => r.BuilderName !== null).length;
      const service = new ListingService(next.model, openDatabase(live.db.url));
      try {
        const plan = await planMigration(service);
        expect(plan.pending.map((p) => p.name)).to.deep.equal([`dictionary/${name}`]);
        // A field without a column lives only in the stored records: no schema step, only the records' pass.
        expect(plan.pending[0].statements).to.deep.equal([]);
        const listings = plan.records.find((r) => r.set === 'Property')!;
        expect(listings).to.include({ records: stored.size, rewritten: stored.size, restamped: holders, refusedCount: 0 });
      } finally {
        await service.close();
      }
      expect(await live.records('Property', 'ListingKey')).to.deep.equal(stored);
      await live.restart(next.model);
      const metadata = await get(`${live.url}/$metadata?$format=json`, HEADERS);
      expect(JSON.stringify(metadata.json)).not.to.include('BuilderName');
      expect(await disagreementsOf(live, next.model, 'Property')).to.deep.equal([]);
    });

    it('a listing that held a value moves its ModificationTimestamp (one EntityEvent); the others keep theirs', async () => {
      const after = await live.records('Property', 'ListingKey');
      for (const [key, was] of stored) {
        const now = after.get(key)!;
        if (was.BuilderName === null) expect(now.ModificationTimestamp, key).to.equal(was.ModificationTimestamp);
        else expect(now.ModificationTimestamp > was.ModificationTimestamp, key).to.equal(true);
      }
    });

    it('both consumers end exact', async () => {
      expect(await live.replicationDifferences()).to.deep.equal([]);
    });

    it('a client that hid the removed field is still served (nothing is left to hide)', async () => {
      const clients = live.server.service.clients;
      await clients.register({ id: 'hides-builder', name: 'hides BuilderName', hiddenFields: ['BuilderName'] });
      const token = await clients.issueToken('hides-builder', undefined);
      const r = await get(`${live.url}/Property?$top=1`, { Authorization: `Bearer ${token}` });
      expect(r.status, r.text).to.equal(200);
    });
  });

  describe('a field made filterable, then its MaxLength raised (Property.PostalCode 10 → 20)', function () {
    let live: LiveDatabase;
    let model: ServiceModel;
    before(async () => {
      live = await LiveDatabase.open(target, versions.base.model, LISTINGS);
      const queryable = versions.next((xml) => makeQueryable(xml, 'Property', 'PostalCode'));
      await live.restart(queryable.model);
      const wider = versions.next((xml) => editProperty(xml, 'Property', 'PostalCode', (d) => d.replace('MaxLength="10"', 'MaxLength="20"')), queryable);
      model = wider.model;
      await live.restart(model);
    });
    after(() => live.close());

    it('a value longer than the old MaxLength is stored and found by a filter through the index', async () => {
      const [first] = [...(await live.records('Property', 'ListingKey')).values()];
      await live.ingest('Property', [{ ...first, PostalCode: '1234567890-123456' }]);
      expect(await filtered(live, "PostalCode eq '1234567890-123456'")).to.deep.equal([first.ListingKey]);
      const plan = await live.plan('SELECT `_record` FROM `Property` WHERE `PostalCode` = ?', ['x']);
      expect(plan).to.include('ix_Property_PostalCode');
    });

    it('filters and orders on it give what the served records give', async () => {
      const all = [...(await live.records('Property', 'ListingKey')).values()];
      const expected = all.filter((r) => r.PostalCode !== null && r.PostalCode < '5').map((r) => r.ListingKey).sort();
      expect(await filtered(live, "PostalCode lt '5'")).to.deep.equal(expected);
      const ordered = await get(`${live.url}/Property?$orderby=PostalCode desc,ListingKey&$select=PostalCode&$top=1000`, HEADERS);
      const codes = (ordered.json.value as Rec[]).map((r) => r.PostalCode);
      expect(codes).to.deep.equal([...codes].sort((a, b) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? 1 : -1)));
      expect(await disagreementsOf(live, model, 'Property')).to.deep.equal([]);
    });

    it('both consumers end exact', async () => {
      expect(await live.replicationDifferences()).to.deep.equal([]);
    });
  });

  describe('a type changed (StreetNumber String → Int32, BedroomsTotal Int64 → Decimal), both made filterable', function () {
    let live: LiveDatabase;
    let model: ServiceModel;
    let stored: Map<string, Rec>;
    before(async () => {
      live = await LiveDatabase.open(target, versions.base.model, LISTINGS);
      stored = await live.records('Property', 'ListingKey');
      model = versions.next((xml) => {
        let x = editProperty(xml, 'Property', 'StreetNumber', () => '<Property Name="StreetNumber" Type="Edm.Int32"/>');
        x = editProperty(x, 'Property', 'BedroomsTotal', () => '<Property Name="BedroomsTotal" Type="Edm.Decimal" Precision="4" Scale="1"/>');
        return makeQueryable(makeQueryable(x, 'Property', 'StreetNumber'), 'Property', 'BedroomsTotal');
      }).model;
      await live.restart(model);
    });
    after(() => live.close());

    it('every value is converted: numbers served as numbers; a record whose value changed moved its timestamp', async () => {
      expect(await disagreementsOf(live, model, 'Property')).to.deep.equal([]);
      const after = await live.records('Property', 'ListingKey');
      for (const [key, was] of stored) {
        const now = after.get(key)!;
        expect(now.StreetNumber, key).to.equal(was.StreetNumber === null ? null : Number(was.StreetNumber));
        expect(now.BedroomsTotal, key).to.equal(was.BedroomsTotal);
        expect(now.ModificationTimestamp > was.ModificationTimestamp, key).to.equal(was.StreetNumber !== null);
      }
    });

    it('filters compare numbers as numbers, through the indexes; 2.5 is stored and found as 2.5', async () => {
      const all = [...(await live.records('Property', 'ListingKey')).values()];
      expect(await filtered(live, 'StreetNumber lt 9000')).to.deep.equal(all.filter((r) => r.StreetNumber !== null && r.StreetNumber < 9000).map((r) => r.ListingKey).sort());
      await live.ingest('Property', [{ ...all[0], BedroomsTotal: 2.5 }]);
      expect(await filtered(live, 'BedroomsTotal eq 2.5')).to.deep.equal([all[0].ListingKey]);
      const one = await get(`${live.url}/Property('${all[0].ListingKey}')?$select=BedroomsTotal`, HEADERS);
      expect(one.json.BedroomsTotal).to.equal(2.5);
      expect(await live.plan('SELECT `_record` FROM `Property` WHERE `StreetNumber` < ?', [9000])).to.include('ix_Property_StreetNumber');
      expect(await live.plan('SELECT `_record` FROM `Property` WHERE `BedroomsTotal` = ?', [2.5])).to.include('ix_Property_BedroomsTotal');
    });

    it('both consumers end exact', async () => {
      expect(await live.replicationDifferences()).to.deep.equal([]);
    });
  });

  describe('a change some record cannot take is refused at start, naming it, and changes nothing', function () {
    let live: LiveDatabase;
    before(async () => {
      live = await LiveDatabase.open(target, versions.base.model, LISTINGS);
    });
    after(() => live.close());

    it('StreetNumber → Int32 with a listing whose StreetNumber is "12A"', async () => {
      const [first] = [...(await live.records('Property', 'ListingKey')).values()];
      await live.ingest('Property', [{ ...first, StreetNumber: '12A' }]);
      const before = await live.records('Property', 'ListingKey');
      const next = versions.next((xml) => editProperty(xml, 'Property', 'StreetNumber', () => '<Property Name="StreetNumber" Type="Edm.Int32"/>'));
      let refused: unknown;
      await live.restart(next.model).catch((e: unknown) => { refused = e; });
      expect(refused).to.be.instanceOf(MigrationRefused);
      expect((refused as Error).message).to.include(`${first.ListingKey}: StreetNumber: "12A" is not an integer`);
      await live.restart(versions.base.model);
      expect(await live.records('Property', 'ListingKey')).to.deep.equal(before);
      const refusedName = `dictionary/${versions.migrationName('property-streetnumber-type-edm-string-edm-int32')}`;
      expect(next.model.migrations.at(-1)!.name).to.equal(refusedName.slice('dictionary/'.length));
      expect((await live.server.service.db.all('SELECT name FROM reso_migrations')).map((r) => r.name)).not.to.include(refusedName);
      expect(property(versions.base.model).fieldsByName.StreetNumber.type).to.equal('Edm.String');
    });
  });
});
