/**
 * $skip: refused (501) by the shipped dictionary, as spec §4 says; offered on an entity set whose dictionary
 * declares Capabilities.SkipSupported true on it (RESO Web API Core's `$top=5&$skip=5`), bounded like a page,
 * with server-driven paging continuing after the skipped records.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { generate } from '../codegen/generate';
import { serviceModel } from '../generated';
import type { ServiceModel } from '../src/model/service-model';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { loadGenerated } from './support/generated-folder';
import { get, odataError, startTestServer } from './support/http';
import { walkPages } from './support/next-links';
import { REPO_ROOT } from './support/shared';

/** The shipped dictionary with SkipSupported declared true on Property, generated into a temporary folder. */
function dictionaryWithSkipOnProperty(dir: string): ServiceModel {
  const shipped = readFileSync(join(REPO_ROOT, 'csdl/reso-dictionary.xml'), 'utf8');
  const open = /<EntitySet Name="Property"[^>]*>/.exec(shipped)![0];
  const edited = shipped.replace(open, `${open}<Annotation Term="Capabilities.SkipSupported" Bool="true"/>`);
  expect(edited).not.to.equal(shipped);
  writeFileSync(join(dir, 'dictionary.xml'), edited);
  generate({ dictionary: join(dir, 'dictionary.xml'), outDir: join(dir, 'generated') });
  return loadGenerated(join(dir, 'generated'));
}

describeEachDatabase('$skip', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let shipped: RunningServer;
  let dir: string;
  let all: string[];

  before(async function () {
    this.timeout(180_000);
    dir = mkdtempSync(join(tmpdir(), 'reso-skip-'));
    const model = dictionaryWithSkipOnProperty(dir);
    db = await target.create();
    server = await startTestServer(model, db.url, { pageSize: 20, maxPageSize: 50 });
    await seedDemoData(server.service, { listings: 30 });
    shipped = await startTestServer(serviceModel, db.url);
    const r = await get(`${server.url}/Property?$select=ListingKey`, { Prefer: 'odata.maxpagesize=50' });
    all = r.json.value.map((x: any) => x.ListingKey);
    expect(all).to.have.length(30);
  });
  after(async () => {
    await shipped?.close();
    await server?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the shipped dictionary refuses $skip on every set with 501 SkipNotSupported', async () => {
    for (const set of serviceModel.entitySets) {
      const r = await get(`${shipped.url}/${set.name}?$top=5&$skip=5`);
      expect(r.status, set.name).to.equal(501);
      expect(odataError(r).code).to.equal('SkipNotSupported');
    }
  });

  it('a set declaring SkipSupported says so in its metadata; the others still refuse', async () => {
    const metadata = await get(`${server.url}/$metadata?$format=json`);
    expect(metadata.json['org.reso.metadata'].Default.Property['@Capabilities.SkipSupported']).to.equal(true);
    expect(metadata.json['org.reso.metadata'].Default.Member['@Capabilities.SkipSupported']).to.equal(false);
    expect((await get(`${server.url}/Member?$skip=1`)).status).to.equal(501);
  });

  it('$top=5&$skip=5 answers the sixth to tenth records of the order, and $count ignores $skip', async () => {
    const r = await get(`${server.url}/Property?$top=5&$skip=5&$select=ListingKey&$count=true`);
    expect(r.status, r.text.slice(0, 200)).to.equal(200);
    expect(r.json.value.map((x: any) => x.ListingKey)).to.deep.equal(all.slice(5, 10));
    expect(r.json['@odata.count']).to.equal(30);
    expect(r.json['@odata.nextLink']).to.equal(undefined);
  });

  it('pages after a $skip continue where the first left off, to the end or to $top', async () => {
    for (const [query, expected] of [['$skip=7', all.slice(7)], ['$skip=7&$top=9', all.slice(7, 16)], ['$skip=40', []]] as const) {
      const walk = await walkPages(`${server.url}/Property?${query}&$select=ListingKey`, { headers: { Prefer: 'odata.maxpagesize=4' } });
      expect(walk.records.map((x) => x.ListingKey), query).to.deep.equal(expected);
    }
  });

  it('$skip past a page\'s worth (MAX_PAGE_SIZE) answers 400, and on a single record 400', async () => {
    const far = await get(`${server.url}/Property?$skip=51`);
    expect(far.status).to.equal(400);
    expect(odataError(far)).to.include({ code: 'OptionValueInvalid', target: '$skip' });
    expect((await get(`${server.url}/Property?$skip=50&$top=1`)).status).to.equal(200);
    const single = await get(`${server.url}/Property('${all[0]}')?$skip=1`);
    expect(single.status).to.equal(400);
    expect(odataError(single).code).to.equal('OptionNotApplicable');
  });
});
