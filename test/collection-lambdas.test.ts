/**
 * Lambdas on multi-value lookups (RESO Web API Core 2.1.0: `CurrentUse/any(x: x eq 'Single Family' or x eq
 * 'Residential')`, `Appliances/all(x: x eq 'Dishwasher')`), offered on the collections a dictionary makes
 * filterable with the standard Capabilities term, and answered from their value tables. Each answer is read
 * against an oracle written here over the stored records; writes, removals and a database stored before the
 * collection was filterable keep the value tables in step; licences and the shipped dictionary refuse as
 * for any field.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { ServiceModel } from '../src/model/service-model';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { dictionaryWithFilterableCollections } from './support/collection-dictionary';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, odataError, startTestServer } from './support/http';
import { walkPages } from './support/next-links';
import { loadRecords, Rec } from './support/query-data';

const FILTERABLE = ['Appliances', 'CurrentUse'];

/** The keys a filter selects, every page followed. */
async function keysOf(base: string, filter: string, token?: string): Promise<string[]> {
  const walk = await walkPages(`${base}/Property?$select=ListingKey&$filter=${encodeURIComponent(filter)}`, { token });
  return walk.records.map((x) => x.ListingKey as string).sort();
}

/** The most frequent elements of a collection in the data, most frequent first. */
function frequent(records: readonly Rec[], field: string): string[] {
  const counts = new Map<string, number>();
  for (const r of records) for (const v of new Set<string>(r[field] ?? [])) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([v]) => v);
}

const list = (r: Rec, field: string): string[] => r[field] ?? [];

describeEachDatabase('Lambdas on multi-value lookups (Web API Core 2.1.0)', (target) => {
  let db: TestDatabase;
  let dir: string;
  let model: ServiceModel;
  let server: RunningServer;
  let records: Rec[];
  let a: string[];
  let u: string[];

  /** The oracle: the listings whose stored record meets `test`. */
  const expected = (test: (r: Rec) => boolean) => records.filter(test).map((r) => r.ListingKey as string).sort();

  before(async function () {
    this.timeout(240_000);
    dir = mkdtempSync(join(tmpdir(), 'reso-lambdas-'));
    model = dictionaryWithFilterableCollections(dir, FILTERABLE, ['Cooling']);
    db = await target.create();
    server = await startTestServer(model, db.url, { maxPageSize: 50 });
    await seedDemoData(server.service, { listings: 80 });
    // Edge cases: an empty collection, and one listing a value twice.
    const store = server.service.store('Property');
    const [first, second] = (await loadRecords(server.service, 'Property')).slice(0, 2);
    const twice = list(second, 'Appliances')[0] ?? 'Dishwasher';
    const planted = [{ ...first, Appliances: [] }, { ...second, Appliances: [twice, twice] }].map((r) => store.encode(r));
    await server.service.writer.transaction((tx) => tx.upsert('Property', planted));
    records = await loadRecords(server.service, 'Property');
    a = frequent(records, 'Appliances');
    u = frequent(records, 'CurrentUse');
  });
  after(async () => {
    await server?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the dictionary\'s filterable collections are filterable in $metadata, never sortable, and have a value table', async () => {
    const property = model.entitySets.find((s) => s.name === 'Property')!;
    for (const f of FILTERABLE) {
      expect(property.fieldsByName[f]).to.include({ collection: true, filterable: true, sortable: false });
      expect(model.valueTables.map((t) => t.field)).to.include(f);
    }
    const r = await get(`${server.url}/$metadata?$format=json`);
    const set = r.json['org.reso.metadata'].Default.Property;
    const paths = (term: string, member: string) => set[term][member].map((p: string | { $PropertyPath: string }) => (typeof p === 'string' ? p : p.$PropertyPath));
    expect(paths('@Capabilities.FilterRestrictions', 'NonFilterableProperties')).not.to.include.members(FILTERABLE);
    expect(paths('@Capabilities.SortRestrictions', 'NonSortableProperties')).to.include.members(FILTERABLE);
  });

  it('any and all with or, and, not, in and functions select what the oracle selects', async function () {
    this.timeout(60_000);
    expect(a.length, 'the data needs several appliances').to.be.at.least(3);
    expect(u.length, 'and several current uses').to.be.at.least(2);
    const cases: [string, (r: Rec) => boolean][] = [
      [`CurrentUse/any(x:x eq '${u[0]}' or x eq '${u[1]}')`, (r) => list(r, 'CurrentUse').some((x) => x === u[0] || x === u[1])],
      [`Appliances/all(x:x eq '${a[0]}')`, (r) => list(r, 'Appliances').every((x) => x === a[0])],
      [`Appliances/ANY(y: y eq '${a[1]}')`, (r) => list(r, 'Appliances').includes(a[1])],
      ['Appliances/any()', (r) => list(r, 'Appliances').length > 0],
      ['not Appliances/any()', (r) => list(r, 'Appliances').length === 0],
      [`not(Appliances/all(x: x eq '${a[0]}'))`, (r) => !list(r, 'Appliances').every((x) => x === a[0])],
      [`Appliances/any(x: x ne '${a[0]}')`, (r) => list(r, 'Appliances').some((x) => x !== a[0])],
      [`Appliances/all(x: not (x eq '${a[0]}') and x ne '${a[1]}')`, (r) => list(r, 'Appliances').every((x) => x !== a[0] && x !== a[1])],
      [`Appliances/any(x: x in ('${a[0]}', '${a[2]}')) and CurrentUse/any()`,
        (r) => list(r, 'Appliances').some((x) => x === a[0] || x === a[2]) && list(r, 'CurrentUse').length > 0],
      [`Appliances/any(x: startswith(x, '${a[0].slice(0, 3)}'))`, (r) => list(r, 'Appliances').some((x) => x.startsWith(a[0].slice(0, 3)))],
      [`Appliances/any(x: x eq '${a[0]}' and PropertyType eq 'Residential')`, (r) => list(r, 'Appliances').includes(a[0]) && r.PropertyType === 'Residential'],
      [`Appliances/any(x: x eq '${a[0]}') or MlsStatus eq 'Active'`, (r) => list(r, 'Appliances').includes(a[0]) || r.MlsStatus === 'Active'],
      [`Appliances/any(x: x eq 'no such appliance')`, () => false],
      [`Appliances/all(x: x eq 'no such appliance')`, (r) => list(r, 'Appliances').length === 0],
    ];
    for (const [filter, test] of cases) expect(await keysOf(server.url, filter), filter).to.deep.equal(expected(test));
    // The oracle's answers are not trivial: some listings in, some out.
    const some = expected((r) => list(r, 'CurrentUse').some((x) => x === u[0] || x === u[1]));
    expect(some.length).to.be.within(1, records.length - 1);
    expect(expected((r) => list(r, 'Appliances').length === 0).length).to.be.at.least(1);
  });

  it('$count and /$count count what the lambda selects', async () => {
    const filter = encodeURIComponent(`Appliances/any(x: x eq '${a[0]}')`);
    const want = expected((r) => list(r, 'Appliances').includes(a[0])).length;
    expect((await get(`${server.url}/Property?$filter=${filter}&$count=true&$top=1`)).json['@odata.count']).to.equal(want);
    expect((await get(`${server.url}/Property/$count?$filter=${filter}`)).text).to.equal(String(want));
  });

  it('a record written or removed moves its elements in the same transaction', async () => {
    const store = server.service.store('Property');
    // A value of the lookup no listing holds yet.
    const unused = model.lookups.find((l) => l.name === 'Appliances')!.values.map((v) => v.value).find((v) => !a.includes(v))!;
    const [r1, r2] = records.slice(-2);
    await server.service.writer.transaction(async (tx) => {
      await tx.upsert('Property', [store.encode({ ...r1, Appliances: [unused] })]);
      await tx.deleteByKeys('Property', [r2.ListingKey]);
    });
    expect(await keysOf(server.url, `Appliances/any(x: x eq '${unused}')`)).to.deep.equal([r1.ListingKey]);
    expect(await keysOf(server.url, `Appliances/all(x: x eq '${unused}') and Appliances/any()`)).to.deep.equal([r1.ListingKey]);
    const table = model.valueTables.find((t) => t.field === 'Appliances')!.name;
    const left = await server.service.db.all(`SELECT COUNT(*) AS n FROM \`${table}\` WHERE \`_key\` = ?`, [r2.ListingKey]);
    expect(Number(left[0].n)).to.equal(0);
    records = await loadRecords(server.service, 'Property');
  });

  it('refuses what is not a lambda on a filterable collection, with the error that says why', async () => {
    const cases: [string, number, string][] = [
      [`Appliances eq '${a[0]}'`, 400, 'CollectionNeedsLambda'],
      ["ListingKey/any(x: x eq 'L1')", 400, 'LambdaNeedsCollection'],
      ["Appliances/any(x: y eq 'a')", 400, 'FieldNotFound'],
      ["Appliances/any(x: x/Name eq 'a')", 400, 'FieldHasNoMembers'],
      ['Appliances/any(x: CurrentUse/any(y: y eq x))', 501, 'LambdaNotSupported'],
      ["Basement/any(x: x eq 'Finished')", 501, 'FieldNotFilterable'],
      ["Cooling/any(x: x eq 'Central Air')", 403, 'FieldRestricted'],
      ['Appliances/all()', 400, 'QuerySyntax'],
      ['Appliances/any(x: x eq 1)', 400, 'LiteralInvalid'],
    ];
    for (const [filter, status, code] of cases) {
      const r = await get(`${server.url}/Property?$filter=${encodeURIComponent(filter)}`);
      expect([r.status, odataError(r).code], filter).to.deep.equal([status, code]);
    }
  });

  it('a collection hidden from a client answers as a field the set does not have', async () => {
    const { client } = await server.service.clients.add({ id: 'no-appliances', name: 'No appliances', hiddenFields: ['Appliances'] });
    const token = await server.service.clients.issueToken(client.id, undefined);
    const r = await get(`${server.url}/Property?$filter=${encodeURIComponent(`Appliances/any(x: x eq '${a[0]}')`)}`, { Authorization: `Bearer ${token}` });
    expect([r.status, odataError(r).code, odataError(r).message]).to.deep.equal([400, 'FieldNotFound', 'Property has no field Appliances']);
    expect(await keysOf(server.url, `CurrentUse/any(x: x eq '${u[0]}')`, token)).to.deep.equal(expected((x) => list(x, 'CurrentUse').includes(u[0])));
  });

  it('a scope that is a lambda: the client sees exactly its listings, and the media of those alone (the lambda inside the media\'s semi-join)', async function () {
    this.timeout(60_000);
    const { client } = await server.service.clients.add({ id: 'with-dishwashers', name: 'Lambda scope', scope: `Appliances/any(x: x eq '${a[0]}')` });
    const token = await server.service.clients.issueToken(client.id, undefined);
    // Other tests here write listings: the oracle reads them as they are now.
    const now = await loadRecords(server.service, 'Property');
    const inScope = now.filter((x) => list(x, 'Appliances').includes(a[0])).map((x) => x.ListingKey as string).sort();
    expect(inScope.length).to.be.within(1, now.length - 1);
    expect(await keysOf(server.url, 'true', token)).to.deep.equal(inScope);
    const media = await loadRecords(server.service, 'Media');
    const seen = (await walkPages(`${server.url}/Media?$select=MediaKey`, { token })).records.map((x) => x.MediaKey as string);
    // Hidden: the media of a listing outside the scope. A photo whose listing is gone (an earlier test here
    // deletes one, without its photos) belongs to no listing the scope hides, as docs/licensing.md "Clients, licensing and usage" says.
    const [listed, existing] = [new Set(inScope), new Set(now.map((x) => x.ListingKey as string))];
    const hidden = (key: string) => existing.has(key) && !listed.has(key);
    const wanted = media.filter((m) => m.ResourceName !== 'Property' || !hidden(m.ResourceRecordKey as string)).map((m) => m.MediaKey as string);
    expect(wanted.length).to.be.lessThan(media.length);
    expect(seen.sort()).to.deep.equal(wanted.sort());
  });
});

describeEachDatabase('Lambdas: the shipped dictionary and stored databases', (target) => {
  let db: TestDatabase;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reso-lambdas-'));
    db = await target.create();
  });
  after(async () => {
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the shipped dictionary keeps the spec\'s 501 on its collections; a dictionary that makes them filterable fills their value tables from the stored records at start', async function () {
    this.timeout(240_000);
    const shipped = await startTestServer(serviceModel, db.url);
    try {
      await seedDemoData(shipped.service, { listings: 30 });
      const r = await get(`${shipped.url}/Property?$filter=${encodeURIComponent("Appliances/any(x: x eq 'Dishwasher')")}`);
      expect([r.status, odataError(r).code]).to.deep.equal([501, 'FieldNotFilterable']);
    } finally {
      await shipped.close();
    }
    const server = await startTestServer(dictionaryWithFilterableCollections(dir, FILTERABLE), db.url);
    try {
      const records = await loadRecords(server.service, 'Property');
      const value = frequent(records, 'CurrentUse')[0];
      const want = records.filter((r) => list(r, 'CurrentUse').includes(value)).map((r) => r.ListingKey as string).sort();
      expect(want).not.to.deep.equal([]);
      expect(await keysOf(server.url, `CurrentUse/any(x: x eq '${value}')`)).to.deep.equal(want);
    } finally {
      await server.close();
    }
  });
});
