/**
 * The generator on the full RESO Data Dictionary 2.0 reference (41 resources, 652 Property fields), in both of
 * RESO's lookup flavours (string lookups with a Lookup resource, and EnumType lookups, read as string lookups):
 * generate into a temporary folder, load what it wrote, create storage, load records and serve them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { generate } from '../codegen/generate';
import type { LookupValueSpec, ServiceModel } from '../src/model/service-model';
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
    });

    it('joins the single-valued navigations by RESO\'s <Navigation>Key convention, and leaves closed what no field identifies', () => {
      const property = model.entitySets.find((s) => s.name === 'Property')!;
      const nav = (set: string, name: string) => model.entitySets.find((s) => s.name === set)!.navigations.find((n) => n.name === name)!;
      // DD 2.0 declares them without a referential constraint; ListAgentKey is its foreign key to Member's MemberKey.
      expect(nav('Property', 'ListAgent')).to.deep.include({ collection: false, join: { foreignKey: 'MemberKey', referencedKey: 'ListAgentKey' }, navigable: true });
      expect(nav('Property', 'ListOffice').join).to.deep.equal({ foreignKey: 'OfficeKey', referencedKey: 'ListOfficeKey' });
      expect(nav('OpenHouse', 'Listing').join).to.deep.equal({ foreignKey: 'ListingKey', referencedKey: 'ListingKey' });
      expect(nav('Media', 'ChangedByMember').join).to.deep.equal({ foreignKey: 'MemberKey', referencedKey: 'ChangedByMemberKey' });
      expect(property.navigations.filter((n) => !n.collection && n.navigable).map((n) => n.name)).to.have.members([
        'BuyerAgent', 'BuyerOffice', 'BuyerTeam', 'CoBuyerAgent', 'CoBuyerOffice', 'CoListAgent', 'CoListOffice', 'ListAgent', 'ListOffice', 'ListTeam']);
      // OriginatingSystemKey is this listing's key in the originating system, not an OUID's key: closed, as a
      // navigation without any <Navigation>Key field is (Association's AssociationMember).
      for (const [set, name] of [['Property', 'OriginatingSystem'], ['Property', 'SourceSystem'], ['OpenHouse', 'OriginatingSystem'], ['Association', 'AssociationMember']]) {
        expect(nav(set, name), `${set}.${name}`).to.not.have.any.keys('join', 'followable', 'navigable');
      }
    });

    it('indexes only key and ModificationTimestamp where the dictionary states no policy', () => {
      const property = model.entitySets.find((s) => s.name === 'Property')!;
      expect(property.fields.filter((f) => f.filterable).map((f) => f.name)).to.have.members(['ListingKey', 'ModificationTimestamp']);
      const table = model.tables.find((t) => t.name === 'Property')!;
      // Besides those, the record and its revision, a column for each field naming a single-valued navigation's
      // record (read beside the listing for its expansion, never searched: no index).
      const links = property.navigations.filter((n) => n.navigable).map((n) => n.join!.referencedKey);
      expect(links).to.include('ListAgentKey');
      expect(table.columns.map((c) => c.name)).to.have.members(['ListingKey', 'ModificationTimestamp', '_revision', '_record', ...links]);
      const indexed = table.indexes.flatMap((i) => i.columns);
      for (const link of links) expect(indexed).to.not.include(link);
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
        ListAgentKey: 'AG-1',
        ListOfficeKey: 'NO-SUCH-OFFICE',
        PublicRemarks: 'Full dictionary record',
        AccessibilityFeatures: ['Accessible Approach with Ramp'],
      };
      for (const name of Object.keys(record)) expect(property.fieldsByName[name], name).to.exist;
      await server.service.db.transaction((tx) => store.upsert(tx, [store.encode(record)]));
      // Related records joined by convention: a photo and a room of DD-1, and a member's photo under the same key.
      const media = server.service.store('Media');
      const rooms = server.service.store('PropertyRooms');
      const members = server.service.store('Member');
      const at = '2026-03-04T05:06:07.089Z';
      await server.service.db.transaction(async (tx) => {
        await media.upsert(tx, [
          media.encode({ MediaKey: 'M-1', ResourceRecordKey: 'DD-1', ResourceName: 'Property', ModificationTimestamp: at }),
          media.encode({ MediaKey: 'M-2', ResourceRecordKey: 'DD-1', ResourceName: 'Member', ModificationTimestamp: at }),
        ]);
        await rooms.upsert(tx, [rooms.encode({ RoomKey: 'R-1', ListingKey: 'DD-1', ModificationTimestamp: at })]);
        await members.upsert(tx, [members.encode({ MemberKey: 'AG-1', MemberFirstName: 'Ada', ModificationTimestamp: at })]);
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
      // Single-valued: the record its <Navigation>Key names, or null; closed where no field identifies it.
      const agent = await get(`${server.url}/Property('DD-1')?$select=ListingKey&$expand=ListAgent($select=MemberKey,MemberFirstName),ListOffice`);
      expect(agent.status, agent.text.slice(0, 300)).to.equal(200);
      expect(agent.json).to.deep.include({ ListingKey: 'DD-1', ListAgent: { MemberKey: 'AG-1', MemberFirstName: 'Ada' }, ListOffice: null });
      const page = await get(`${server.url}/Property?$select=ListingKey&$expand=ListAgent($select=MemberKey)`);
      expect(page.json.value).to.deep.equal([{ ListingKey: 'DD-1', ListAgent: { MemberKey: 'AG-1' } }]);
      expect((await get(`${server.url}/Property('DD-1')/ListAgent?$select=MemberKey`)).json).to.deep.include({ MemberKey: 'AG-1' });
      expect((await get(`${server.url}/Property?$expand=OriginatingSystem`)).status).to.equal(501);
    });

    it('serves the full metadata document', async () => {
      const r = await get(`${server.url}/$metadata`);
      expect(r.status).to.equal(200);
      expect(r.text).to.include('<EntityType Name="TransactionManagement">');
    });
  });
}

/**
 * The EnumType flavour with StandardStatus, Appliances and CurrentUse made filterable (FilterRestrictions on
 * Property naming every other field): values named as OData names enumeration values — by qualified literal,
 * by member name, with `has` on single and multi-value lookups, in `in (…)` and inside lambdas — select what
 * the oracle over the stored records selects.
 */
describeEachDatabase('Full RESO DD 2.0 reference (EnumType lookups): enumeration literals, has and lambdas', (target) => {
  const ENUMS = 'org.reso.metadata.enums';
  const FILTERED = ['ListingKey', 'ModificationTimestamp', 'StandardStatus', 'Appliances', 'CurrentUse'];
  let dir: string;
  let db: Awaited<ReturnType<typeof target.create>>;
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let status: LookupValueSpec[];
  let appliances: LookupValueSpec[];
  const records: Record<string, any>[] = [];

  before(async function () {
    this.timeout(180_000);
    if (!hasShared) return requireShared(this);
    dir = mkdtempSync(join(tmpdir(), 'reso-dd-enum-'));
    const xml = readFileSync(sharedPath('reso/dd-2.0-enum.xml'), 'utf8');
    const type = xml.slice(xml.indexOf('<EntityType Name="Property"'), xml.indexOf('</EntityType>', xml.indexOf('<EntityType Name="Property"')));
    const others = [...type.matchAll(/<Property Name="([^"]+)"/g)].map((m) => m[1]).filter((n) => !FILTERED.includes(n));
    const restriction = '<Annotation Term="Org.OData.Capabilities.V1.FilterRestrictions"><Record><PropertyValue Property="NonFilterableProperties"><Collection>'
      + others.map((n) => `<PropertyPath>${n}</PropertyPath>`).join('') + '</Collection></PropertyValue></Record></Annotation>';
    const open = /<EntitySet Name="Property"[^>]*>/.exec(xml)![0];
    writeFileSync(join(dir, 'dictionary.xml'), xml.replace(open, `${open}${restriction}`));
    generate({ dictionary: join(dir, 'dictionary.xml'), outDir: join(dir, 'generated') });
    const model = loadGenerated(join(dir, 'generated'));
    const lookup = (name: string) => model.lookups.find((l) => l.name === name)!.values;
    status = lookup('StandardStatus').slice(0, 3);
    appliances = lookup('Appliances').slice(0, 4);
    const uses = lookup(model.entitySets.find((s) => s.name === 'Property')!.fieldsByName.CurrentUse.lookupName!);
    expect(status[1].value).not.to.equal(status[1].legacyODataValue); // 'Active Under Contract' / ActiveUnderContract
    for (let i = 0; i < 12; i++) {
      records.push({
        ListingKey: `E-${i}`,
        ModificationTimestamp: `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`,
        StandardStatus: status[i % 3].value,
        Appliances: appliances.filter((_, j) => (i >> j) & 1).map((v) => v.value),
        CurrentUse: [uses[i % 2].value],
      });
    }
    db = await target.create();
    server = await startTestServer(model, db.url);
    const store = server.service.store('Property');
    await server.service.writer.transaction((tx) => tx.upsert('Property', records.map((r) => store.encode(r))));
  });
  after(async () => {
    await server?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const keys = async (filter: string): Promise<string[]> => {
    const r = await get(`${server.url}/Property?$select=ListingKey&$filter=${encodeURIComponent(filter)}`);
    expect(r.status, `${filter}: ${r.text.slice(0, 300)}`).to.equal(200);
    return r.json.value.map((x: any) => x.ListingKey).sort();
  };
  const expected = (test: (r: Record<string, any>) => boolean) => records.filter(test).map((r) => r.ListingKey).sort();

  it('single-value lookups: eq and ne by qualified literal or member name, has, and in', async () => {
    const [s0, s1, s2] = status;
    const lit = (v: LookupValueSpec) => `${ENUMS}.StandardStatus'${v.legacyODataValue}'`;
    const cases: [string, (r: Record<string, any>) => boolean][] = [
      [`StandardStatus eq ${lit(s1)}`, (r) => r.StandardStatus === s1.value],
      [`StandardStatus ne ${lit(s1)}`, (r) => r.StandardStatus !== s1.value],
      [`StandardStatus eq '${s1.legacyODataValue}'`, (r) => r.StandardStatus === s1.value],
      [`StandardStatus eq '${s1.value}'`, (r) => r.StandardStatus === s1.value],
      [`StandardStatus has ${lit(s2)}`, (r) => r.StandardStatus === s2.value],
      [`StandardStatus in (${lit(s0)}, ${lit(s2)})`, (r) => r.StandardStatus === s0.value || r.StandardStatus === s2.value],
      [`StandardStatus in ('${s0.legacyODataValue}', '${s1.value}')`, (r) => r.StandardStatus === s0.value || r.StandardStatus === s1.value],
    ];
    for (const [filter, test] of cases) expect(await keys(filter), filter).to.deep.equal(expected(test));
    expect(expected((r) => r.StandardStatus === s1.value)).to.have.length(4);
  });

  it('multi-value lookups: has (one member, or several at once), and members inside any/all', async () => {
    const [a0, a1, a2] = appliances;
    const lit = (...v: LookupValueSpec[]) => `${ENUMS}.Appliances'${v.map((x) => x.legacyODataValue).join(',')}'`;
    const has = (r: Record<string, any>, v: LookupValueSpec) => r.Appliances.includes(v.value);
    const cases: [string, (r: Record<string, any>) => boolean][] = [
      [`Appliances has ${lit(a0)}`, (r) => has(r, a0)],
      [`Appliances has ${lit(a0, a2)}`, (r) => has(r, a0) && has(r, a2)],
      [`Appliances has ${lit(a0)} and Appliances has ${lit(a1)}`, (r) => has(r, a0) && has(r, a1)],
      [`not (Appliances has ${lit(a1)})`, (r) => !has(r, a1)],
      [`Appliances/any(a: a eq ${lit(a1)} or a eq '${a2.legacyODataValue}')`, (r) => has(r, a1) || has(r, a2)],
      [`Appliances/all(a: a in (${lit(a0)}, ${lit(a1)}))`, (r) => r.Appliances.every((x: string) => x === a0.value || x === a1.value)],
      [`Appliances/any(a: a has ${lit(a2)}) and StandardStatus eq ${ENUMS}.StandardStatus'${status[0].legacyODataValue}'`,
        (r) => has(r, a2) && r.StandardStatus === status[0].value],
    ];
    for (const [filter, test] of cases) expect(await keys(filter), filter).to.deep.equal(expected(test));
  });

  it('refuses a member the enumeration does not have, another enumeration\'s literal, and has on other operands', async () => {
    const cases: [string, number, string][] = [
      [`StandardStatus eq ${ENUMS}.StandardStatus'NoSuchStatus'`, 400, 'LiteralInvalid'],
      [`StandardStatus eq ${ENUMS}.Appliances'${appliances[0].legacyODataValue}'`, 400, 'TypeMismatch'],
      [`StandardStatus eq ${ENUMS}.StandardStatus'${status[0].legacyODataValue},${status[1].legacyODataValue}'`, 400, 'LiteralInvalid'],
      [`ListingKey has ${ENUMS}.StandardStatus'${status[0].legacyODataValue}'`, 400, 'HasNotApplicable'],
      [`'Active' has StandardStatus`, 400, 'HasNotApplicable'],
    ];
    for (const [filter, code, name] of cases) {
      const r = await get(`${server.url}/Property?$filter=${encodeURIComponent(filter)}`);
      expect([r.status, r.json?.error?.code], filter).to.deep.equal([code, name]);
    }
  });
});
