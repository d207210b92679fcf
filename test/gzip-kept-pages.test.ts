/**
 * Issue 42: stitched gzip pages kept whole while no record is written (http/gzip/page-bodies.ts). A page asked for
 * again is the same bytes, sent whole with its Content-Length, while the write mark stays; any record write moves
 * the mark (storage/records/write-mark.ts), and the next answer is the identity body of that moment. A kept page is
 * never served to another licence, another service root or another place in the walk.
 */
import { expect } from 'chai';
import { gunzipSync } from 'node:zlib';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, request, startTestServer, TEST_TOKEN } from './support/http';
import { parsePrometheus, sample } from './support/prometheus';
import { ListingFixtures, listingFixtures } from './support/listing-fixtures';
import { requestToken } from './support/licence-http';
import { WriteMark } from '../src/storage/records/write-mark';
import type { Settings } from '../src/storage/tables/settings';

const LISTINGS = 120;
const GZIP = { 'Accept-Encoding': 'gzip' };
/** A nextLink's token is sealed anew on every issue: the one part two answers to one request may differ in. */
const sealed = (text: string) => text.replace(/("@odata\.nextLink":"[^"]*\$skiptoken=)[^"&]*/, '$1…');

describe('Issue 42: the write mark, read by many callers at once', () => {
  it('a caller that comes while a read is going shares the next read, begun after it came, never that one', async () => {
    // The settings row read with its timing in the test's hands: each read answers the mark as it was when it began.
    let stored = '1';
    const reads: (() => void)[] = [];
    const settings = { get: () => { const at = stored; return new Promise<string>((answer) => reads.push(() => answer(at))); } };
    const mark = new WriteMark(settings as unknown as Settings);
    const first = mark.current();
    stored = '2'; // a write commits while the first read is going
    const later = [mark.current(), mark.current(), mark.current()];
    expect(reads, 'one read at a time').to.have.length(1);
    reads[0]();
    expect(await first).to.equal('1');
    await new Promise<void>((tick) => setImmediate(tick));
    expect(reads, 'the callers that came meanwhile share one read').to.have.length(2);
    reads[1]();
    expect(await Promise.all(later)).to.deep.equal(['2', '2', '2']);
    const alone = mark.current();
    expect(reads, 'no read going: a caller starts its own').to.have.length(3);
    reads[2]();
    expect(await alone).to.equal('2');
  });
});

describeEachDatabase('Issue 42: stitched gzip pages kept whole while no record is written', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let fixtures: ListingFixtures;

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageBatchSize: 30, maxConcurrentRequests: 32 });
    await seedDemoData(server.service, { listings: LISTINGS });
    fixtures = await listingFixtures(server.service, 'KP');
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  const wire = (url: string, headers: Record<string, string> = {}, token = TEST_TOKEN) => request(url, { wire: true, headers, token });
  const gzipText = async (url: string, token?: string) => {
    const r = await wire(url, GZIP, token);
    expect(r.status, url).to.equal(200);
    expect(r.headers.get('content-encoding'), url).to.equal('gzip');
    return { r, text: gunzipSync(r.bytes).toString('utf8') };
  };
  const counters = async () => {
    const samples = parsePrometheus((await get(`${server.url.replace(/\/odata$/, '')}/metrics`)).text);
    return { hits: sample(samples, 'reso_gzip_page_cache_hits_total', {}), misses: sample(samples, 'reso_gzip_page_cache_misses_total', {}) };
  };

  it('a page asked again is the same bytes, whole with its Content-Length, and the identity body', async () => {
    const url = `${server.url}/Property?$top=100&$orderby=ListingKey&$count=true`;
    const before = await counters();
    const first = await gzipText(url);
    expect(first.r.headers.get('transfer-encoding'), 'the first answer is streamed batch by batch').to.equal('chunked');
    const again = await gzipText(url);
    expect(again.r.headers.get('content-length')).to.equal(String(again.r.bytes.length));
    expect(again.r.bytes.equals(first.r.bytes), 'the kept bytes').to.equal(true);
    expect(again.r.headers.get('vary')).to.match(/Accept-Encoding/);
    expect(again.r.headers.get('content-type')).to.equal(first.r.headers.get('content-type'));
    expect(sealed(again.text)).to.equal(sealed((await wire(url)).bytes.toString('utf8')));
    const after = await counters();
    expect(after.hits - before.hits, 'one answer from the kept page').to.equal(1);
    expect(after.misses - before.misses, 'one stitched').to.equal(1);
  });

  it('a record written moves the mark: the next answer is read again and holds the change', async () => {
    const url = `${server.url}/Property?$top=60&$orderby=ListingKey`;
    const kept = JSON.parse((await gzipText(url)).text);
    await gzipText(url);
    const key = kept.value[7].ListingKey as string;
    await fixtures.ingest('Property', { ...fixtures.listing(key, 'Pending'), PublicRemarks: 'written after the page was kept ✓' });
    const changed = JSON.parse((await gzipText(url)).text);
    expect(changed.value[7].PublicRemarks).to.equal('written after the page was kept ✓');
    expect(sealed(JSON.stringify(changed))).to.equal(sealed(JSON.stringify((await wire(url)).json)));
    // A photo written moves it too: the expanded page is read again.
    const expanded = `${server.url}/Property?$top=10&$orderby=ListingKey&$expand=Media`;
    const media = JSON.parse((await gzipText(expanded)).text).value[2].Media.length as number;
    await fixtures.ingest('Media', fixtures.photo(JSON.parse((await gzipText(expanded)).text).value[2].ListingKey, 'KP-PHOTO-1'));
    expect(JSON.parse((await gzipText(expanded)).text).value[2].Media.length).to.equal(media + 1);
  });

  it("a removed record leaves the kept page's next answer", async () => {
    const url = `${server.url}/Member?$top=50&$orderby=MemberKey`;
    const before = JSON.parse((await gzipText(url)).text).value as { MemberKey: string }[];
    await gzipText(url);
    await fixtures.ingest('Member', { MemberKey: before[3].MemberKey, '@delete': true } as never);
    const after = JSON.parse((await gzipText(url)).text).value as { MemberKey: string }[];
    expect(after.map((m) => m.MemberKey)).to.not.include(before[3].MemberKey);
  });

  it("never another licence's page, nor another service root's, nor another place in the walk", async () => {
    const url = `${server.url}/Property?$top=100&$orderby=ListingKey`;
    const open = JSON.parse((await gzipText(url)).text).value as { MlsStatus: string }[];
    await gzipText(url);
    const { client, secret } = await server.service.clients.add({ name: 'Active Only', scope: "MlsStatus eq 'Active'" });
    const token = (await requestToken(server.url, { id: client.id, secret, via: 'basic' })).json.access_token as string;
    const scoped = JSON.parse((await gzipText(url, token)).text).value as { MlsStatus: string }[];
    expect(open.some((r) => r.MlsStatus !== 'Active'), 'the open page holds other statuses').to.equal(true);
    expect(scoped.every((r) => r.MlsStatus === 'Active'), "the scoped client's page").to.equal(true);
    const other = await wire(url, { ...GZIP, Host: 'replica.example:8443' });
    expect(gunzipSync(other.bytes).toString('utf8')).to.include('replica.example:8443');
    // Pages of 40 of one walk: each its own records, its nextLink to the next.
    let link: string | undefined = `${server.url}/Property?$orderby=ListingKey`;
    const seen = new Set<string>();
    for (let round = 0; round < 2; round++) {
      link = `${server.url}/Property?$orderby=ListingKey`;
      const keys: string[] = [];
      while (link) {
        const page = JSON.parse((await gzipText(link)).text);
        keys.push(...page.value.map((r: { ListingKey: string }) => r.ListingKey));
        link = page['@odata.nextLink'];
      }
      expect(new Set(keys).size, `round ${round}: every listing once`).to.equal(keys.length);
      if (round === 0) keys.forEach((k) => seen.add(k));
      else expect(keys).to.deep.equal([...seen]);
    }
  });

  it('a request that follows a write sees it, while other requests keep reading the same page', async () => {
    const url = `${server.url}/Property?$top=30&$orderby=ListingKey`;
    const key = JSON.parse((await gzipText(url)).text).value[4].ListingKey as string;
    let reading = true;
    // Requests all the while: write mark reads are going when each write commits, and callers share them.
    const readers = Array.from({ length: 6 }, async () => {
      while (reading) await gzipText(url);
    });
    try {
      for (let i = 0; i < 15; i++) {
        await fixtures.ingest('Property', { ...fixtures.listing(key, 'Active'), PublicRemarks: `write ${i}` });
        const seen = await Promise.all([gzipText(url), gzipText(url), gzipText(url)]);
        for (const s of seen) expect(JSON.parse(s.text).value[4].PublicRemarks, `after write ${i}`).to.equal(`write ${i}`);
      }
    } finally {
      reading = false;
      await Promise.all(readers);
    }
  });

  it('GZIP_PAGE_CACHE_MB=0 keeps none: every answer is stitched', async () => {
    const none = await startTestServer(serviceModel, db.url, { gzipPageCacheBytes: 0 });
    try {
      const url = `${none.url}/Property?$top=100&$orderby=ListingKey`;
      const a = await wire(url, GZIP);
      const b = await wire(url, GZIP);
      expect(gunzipSync(a.bytes).equals(gunzipSync(b.bytes)) || sealed(gunzipSync(a.bytes).toString()) === sealed(gunzipSync(b.bytes).toString())).to.equal(true);
      const samples = parsePrometheus((await get(`${none.url.replace(/\/odata$/, '')}/metrics`)).text);
      expect(sample(samples, 'reso_gzip_page_cache_hits_total', {})).to.equal(0);
    } finally {
      await none.close();
    }
  });
});
