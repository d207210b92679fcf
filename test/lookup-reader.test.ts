/**
 * The Lookup resource as RESO's tooling reads it (Data Dictionary 2.0 Lookup resource): `$top=1000`, then
 * every `@odata.nextLink` to the end, expecting every lookup value. The shipped dictionary declares
 * Policy.PagedByTop on Lookup: there `$top` bounds each response (never more than `$top` records) and the
 * nextLinks go on to the end; on every other set `$top` stays OData's total across pages.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';
import { walkPages } from './support/next-links';

const LOOKUP = serviceModel.entitySets.find((s) => s.dictionaryRows?.kind === 'lookups')!;
const LOOKUP_VALUES = serviceModel.lookups.reduce((n, l) => n + l.values.length, 0);

describeEachDatabase('Lookup resource: a reader taking $top as its page size', (target) => {
  let db: TestDatabase;
  let server: RunningServer;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageBatchSize: 300 });
    await seedDemoData(server.service, { listings: 3 });
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  /** Every page of a walk from `url`, following nextLinks. */
  const walk = async (url: string, headers: Record<string, string> = {}) => (await walkPages(url, { headers, maxPages: 99 })).pages;

  it('the dictionary declares it on the Lookup set only', () => {
    expect(serviceModel.entitySets.filter((s) => s.pagedByTop).map((s) => s.name)).to.deep.equal([LOOKUP.name]);
  });

  it(`$top=1000 and nextLinks: every lookup value (${LOOKUP_VALUES}) exactly once, no response over 1000`, async () => {
    const pages = await walk(`${server.url}/${LOOKUP.name}?$top=1000`);
    const keys = pages.flatMap((p) => p.json.value.map((r: Record<string, unknown>) => r[LOOKUP.key]));
    expect(pages.map((p) => p.json.value.length)).to.deep.equal([1000, 1000, LOOKUP_VALUES - 2000]);
    expect(new Set(keys).size).to.equal(LOOKUP_VALUES);
    expect(LOOKUP_VALUES).to.be.greaterThan(2000);
  });

  it('$top below a page, and odata.maxpagesize below $top: the smaller bounds each response', async () => {
    const small = await walk(`${server.url}/${LOOKUP.name}?$top=700&$select=${LOOKUP.key}`);
    expect(small.map((p) => p.json.value.length)).to.deep.equal([700, 700, 700, LOOKUP_VALUES - 2100]);
    const preferred = await walk(`${server.url}/${LOOKUP.name}?$top=1000`, { Prefer: 'odata.maxpagesize=900' });
    expect(preferred[0].headers.get('preference-applied')).to.equal('odata.maxpagesize=900');
    expect(preferred.map((p) => p.json.value.length)).to.deep.equal([900, 900, LOOKUP_VALUES - 1800]);
  });

  it('$top=0&$count=true: the count and no records, with no nextLink (RESO\'s count query)', async () => {
    const r = await get(`${server.url}/${LOOKUP.name}?$top=0&$count=true`);
    expect(r.status).to.equal(200);
    expect(r.json['@odata.count']).to.equal(LOOKUP_VALUES);
    expect(r.json.value).to.deep.equal([]);
    expect(r.json).to.not.have.property('@odata.nextLink');
  });

  it('on every other set $top is still the total across pages', async () => {
    const pages = await walk(`${server.url}/Property?$top=3`, { Prefer: 'odata.maxpagesize=2' });
    expect(pages.map((p) => p.json.value.length)).to.deep.equal([2, 1]);
  });
});
