/**
 * The generator on the full RESO Data Dictionary 2.0 reference (41 resources, 652 Property fields), in both of
 * RESO's lookup flavours (string lookups with a Lookup resource, and EnumType lookups, read as string lookups):
 * generate into a temporary folder, load what it wrote, create storage, load records and serve them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { generate } from '../codegen/generate';
import type { ServiceModel } from '../src/model/service-model';
import { describeEachDatabase } from './support/databases';
import { loadGenerated } from './support/generated-folder';
import { get, startTestServer } from './support/http';
import { hasShared, requireShared, sharedPath } from './support/shared';

const FLAVOURS = [
  // The string flavour's lookup values are data (Lookup resource rows); the EnumType flavour's are its members.
  { label: 'string lookups', file: 'reso/dd-2.0-lookup-resource.xml', valuesInDictionary: false },
  { label: 'EnumType lookups', file: 'reso/dd-2.0-enum.xml', valuesInDictionary: true },
];

for (const flavour of FLAVOURS) {
  describe(`Full RESO DD 2.0 reference (${flavour.label}): generation`, function () {
    this.timeout(120_000);
    let dir: string;
    let model: ServiceModel;
    before(function () {
      requireShared(this);
      dir = mkdtempSync(join(tmpdir(), 'reso-dd-'));
      generate({ dictionary: sharedPath(flavour.file), outDir: dir });
      model = loadGenerated(dir);
    });
    after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

    it('reads every lookup field as a string lookup naming its lookup, with RESO\'s standard names as values', () => {
      const property = model.entitySets.find((s) => s.name === 'Property')!;
      expect(property.fieldsByName.StandardStatus).to.include({ type: 'Edm.String', collection: false, lookupName: 'StandardStatus' });
      expect(property.fieldsByName.Appliances).to.include({ type: 'Edm.String', collection: true, lookupName: 'Appliances' });
      expect(property.fieldsByName.CountyOrParish).to.include({ type: 'Edm.String', lookupName: 'CountyOrParish' });
      const status = model.lookups.find((l) => l.name === 'StandardStatus');
      if (flavour.valuesInDictionary) expect(status!.values).to.deep.include({ value: 'Active Under Contract', legacyODataValue: 'ActiveUnderContract' });
      else expect(status).to.equal(undefined);
    });

    it('generates every resource and all 632 Property data fields', () => {
      expect(model.entitySets).to.have.length(41);
      expect(model.entitySets.find((s) => s.name === 'Property')!.fields).to.have.length(632);
    });

    it('joins the collection navigations it declares without constraints by RESO\'s key conventions', () => {
      const property = model.entitySets.find((s) => s.name === 'Property')!;
      const joins = Object.fromEntries(property.navigations.filter((n) => n.followable).map((n) => [n.name, n.join]));
      expect(Object.keys(joins)).to.have.members(
        ['GreenBuildingVerifications', 'HistoryTransactional', 'Media', 'OpenHouses', 'PowerProduction', 'Rooms', 'SocialMedia', 'UnitTypes']);
      expect(joins.Rooms).to.deep.equal({ foreignKey: 'ListingKey', referencedKey: 'ListingKey' });
      expect(joins.Media).to.deep.equal({
        foreignKey: 'ResourceRecordKey', referencedKey: 'ListingKey', discriminator: { field: 'ResourceName', value: 'Property', on: 'target' },
      });
      const member = model.entitySets.find((s) => s.name === 'Member')!;
      expect(member.navigations.find((n) => n.name === 'Media')!.join!.discriminator!.value).to.equal('Member');
      // To-one navigations (ListAgent, ListOffice) stay closed: the service follows collections only.
      expect(property.navigations.find((n) => n.name === 'ListAgent')!.followable).to.equal(undefined);
    });

    it('indexes only key and ModificationTimestamp where the dictionary states no policy', () => {
      const property = model.entitySets.find((s) => s.name === 'Property')!;
      expect(property.fields.filter((f) => f.filterable).map((f) => f.name)).to.have.members(['ListingKey', 'ModificationTimestamp']);
      const table = model.tables.find((t) => t.name === 'Property')!;
      expect(table.columns.length).to.be.lessThan(10);
    });
  });

  describeEachDatabase(`Full RESO DD 2.0 reference (${flavour.label}): storage and serving`, (target) => {
    let dir: string;
    let model: ServiceModel;
    let db: Awaited<ReturnType<typeof target.create>>;
    let server: Awaited<ReturnType<typeof startTestServer>>;

    before(async function () {
      this.timeout(180_000);
      if (!hasShared) return requireShared(this);
      dir = mkdtempSync(join(tmpdir(), 'reso-dd-'));
      generate({ dictionary: sharedPath(flavour.file), outDir: dir });
      model = loadGenerated(dir);
      db = await target.create();
      server = await startTestServer(model, db.url);
      const store = server.service.store('Property');
      const property = model.entitySets.find((s) => s.name === 'Property')!;
      // A record that touches every kind of field the full dictionary has.
      const record: Record<string, unknown> = {
        ListingKey: 'DD-1',
        ModificationTimestamp: '2026-03-04T05:06:07.089+02:00',
        ListPrice: 450000.5,
        BedroomsTotal: 3,
        ListingContractDate: '2019-12-30',
        NewConstructionYN: true,
        PublicRemarks: 'Full dictionary record',
        AccessibilityFeatures: ['Accessible Approach with Ramp'],
      };
      for (const name of Object.keys(record)) expect(property.fieldsByName[name], name).to.exist;
      await server.service.db.transaction((tx) => store.upsert(tx, [store.encode(record)]));
      // Related records joined by convention: a photo and a room of DD-1, and a member's photo under the same key.
      const media = server.service.store('Media');
      const rooms = server.service.store('PropertyRooms');
      const at = '2026-03-04T05:06:07.089Z';
      await server.service.db.transaction(async (tx) => {
        await media.upsert(tx, [
          media.encode({ MediaKey: 'M-1', ResourceRecordKey: 'DD-1', ResourceName: 'Property', ModificationTimestamp: at }),
          media.encode({ MediaKey: 'M-2', ResourceRecordKey: 'DD-1', ResourceName: 'Member', ModificationTimestamp: at }),
        ]);
        await rooms.upsert(tx, [rooms.encode({ RoomKey: 'R-1', ListingKey: 'DD-1', ModificationTimestamp: at })]);
      });
    });
    after(async () => {
      await server?.close();
      await db?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('serves the record by key with its values in RESO form', async () => {
      const r = await get(`${server.url}/Property('DD-1')`);
      expect(r.status).to.equal(200);
      expect(r.json).to.include({
        ListingKey: 'DD-1',
        ModificationTimestamp: '2026-03-04T03:06:07.089Z',
        ListPrice: 450000.5,
        BedroomsTotal: 3,
        ListingContractDate: '2019-12-30',
        NewConstructionYN: true,
      });
      expect(r.json.AccessibilityFeatures).to.deep.equal(['Accessible Approach with Ramp']);
      expect(r.json.Appliances).to.deep.equal([]);
      expect(r.json['@odata.context']).to.match(/\/\$metadata#Property\/\$entity$/);
    });

    it('serves it in the collection, and the service document lists all 41 sets', async () => {
      const r = await get(`${server.url}/Property`);
      expect(r.status).to.equal(200);
      expect(r.json.value.map((x: any) => x.ListingKey)).to.deep.equal(['DD-1']);
      const root = await get(`${server.url}/`);
      expect(root.json.value).to.have.length(41);
    });

    it('expands and follows navigations joined by RESO\'s key conventions', async () => {
      const r = await get(`${server.url}/Property('DD-1')?$expand=Media($select=MediaKey),Rooms($select=RoomKey)&$select=ListingKey`);
      expect(r.status, r.text.slice(0, 300)).to.equal(200);
      expect(r.json.Media).to.deep.equal([{ MediaKey: 'M-1' }]);
      expect(r.json.Rooms).to.deep.equal([{ RoomKey: 'R-1' }]);
      const path = await get(`${server.url}/Property('DD-1')/Media?$select=MediaKey`);
      expect(path.status).to.equal(200);
      expect(path.json.value).to.deep.equal([{ MediaKey: 'M-1' }]);
      expect((await get(`${server.url}/Property?$expand=ListAgent`)).status).to.equal(501);
    });

    it('serves the full metadata document', async () => {
      const r = await get(`${server.url}/$metadata`);
      expect(r.status).to.equal(200);
      expect(r.text).to.include('<EntityType Name="TransactionManagement">');
    });
  });
}
