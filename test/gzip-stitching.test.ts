/**
 * Issue 42: gzip bodies stitched from compressed runs of records. Every stitched body is a correct gzip stream:
 * decompressed by Node's zlib, `curl --compressed`, Python's gzip module and Chromium's fetch, it is the identity
 * body of the same request byte for byte (a nextLink's sealed token aside, which differs on every issue), for
 * random pages, every set, with and without $expand, an empty page, the last page, a key fetch, records with
 * multi-byte UTF-8, and a run kept before one of its records changed. Also the CRC-32 combination on its own.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { crc32 as zlibCrc32, gunzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { crc32Combine } from '../src/http/gzip/crc32';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { launchChromium } from './support/console-browser';
import { get, request, startTestServer, TEST_TOKEN } from './support/http';
import { parsePrometheus, sample } from './support/prometheus';
import { ListingFixtures, listingFixtures } from './support/listing-fixtures';

const LISTINGS = 240;
const GZIP = { 'Accept-Encoding': 'gzip' };
/** A nextLink's token is sealed anew on every issue: the one part two answers to one request may differ in. */
const sealed = (text: string) => text.replace(/("@odata\.nextLink":"[^"]*\$skiptoken=)[^"&]*/, '$1…');

/** A program's output (the server runs in this process: a program that calls it must not block it). */
function run(program: string, args: readonly string[], input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(program, args, { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 30_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
    child.stdin!.end(input);
  });
}

const wire = (url: string, headers: Record<string, string> = {}) => request(url, { wire: true, headers, token: TEST_TOKEN });

describe('Issue 42: CRC-32 of pieces combined from their CRCs and lengths', () => {
  it('equals the CRC of the joined bytes, for lengths 0 to beyond 2^16 and text of every byte', () => {
    let seed = 42;
    const random = (n: number) => Buffer.from(Array.from({ length: n }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24));
    for (const [a, b] of [[0, 0], [0, 7], [5, 0], [1, 1], [100, 3000], [70_000, 65_537], [3, 200_001]]) {
      const [x, y] = [random(a), random(b)];
      expect(crc32Combine(zlibCrc32(x), zlibCrc32(y), y.length), `${a}+${b}`).to.equal(zlibCrc32(Buffer.concat([x, y])));
    }
  });
});

describeEachDatabase('Issue 42 §4 every stitched body is a correct gzip stream', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let fixtures: ListingFixtures;
  let browser: Browser | undefined;
  let page: Page | undefined;

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    // Batches of 30 against runs of 50: runs cut by a batch's end, and pages of 100 streamed batch by batch.
    server = await startTestServer(serviceModel, db.url, { pageBatchSize: 30 });
    await seedDemoData(server.service, { listings: LISTINGS });
    fixtures = await listingFixtures(server.service, 'GZ');
    await fixtures.ingest('Property', { ...fixtures.listing('GZ-UTF8', 'Active'), PublicRemarks: 'Café à côté — 東京の家 🏠, ½ acre, “quoted”'.repeat(40) });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await db?.drop();
  });

  /** The body of `path` as each client decodes it, against the identity body; and the gzip answer's headers. */
  async function decodedEverywhere(path: string, clients: { curl?: boolean; python?: boolean } = {}): Promise<void> {
    const url = `${server.url}${path}`;
    const identity = await wire(url);
    const gzip = await wire(url, GZIP);
    expect(gzip.status, path).to.equal(identity.status);
    expect(gzip.headers.get('vary'), path).to.match(/Accept-Encoding/);
    const expected = sealed(identity.bytes.toString('utf8'));
    if (identity.bytes.length < 1024) {
      expect(gzip.headers.get('content-encoding'), `${path}: a small body goes as it is`).to.equal(null);
      expect(sealed(gzip.bytes.toString('utf8')), path).to.equal(expected);
      return;
    }
    expect(gzip.headers.get('content-encoding'), path).to.equal('gzip');
    const length = gzip.headers.get('content-length');
    if (length !== null) expect(Number(length), `${path}: Content-Length`).to.equal(gzip.bytes.length);
    expect(sealed(gunzipSync(gzip.bytes).toString('utf8')), `${path}: zlib`).to.equal(expected);
    if (clients.python) {
      const script = 'import gzip,sys; sys.stdout.buffer.write(gzip.decompress(sys.stdin.buffer.read()))';
      expect(sealed((await run('python3', ['-c', script], gzip.bytes)).toString('utf8')), `${path}: python`).to.equal(expected);
    }
    if (clients.curl) {
      const out = (await run('curl', ['-s', '--compressed', '-D', '-', '-H', `Authorization: Bearer ${TEST_TOKEN}`, url])).toString('utf8');
      const [head, body] = [out.slice(0, out.indexOf('\r\n\r\n')), out.slice(out.indexOf('\r\n\r\n') + 4)];
      expect(head, `${path}: curl was answered with gzip`).to.match(/content-encoding: gzip/i);
      expect(sealed(body), `${path}: curl`).to.equal(expected);
    }
  }

  const firstKeys = async (n: number) => (await wire(`${server.url}/Property?$top=${n}&$orderby=ListingKey&$select=ListingKey`)).json.value.map((r: { ListingKey: string }) => r.ListingKey) as string[];

  it('a key fetch, a record with multi-byte UTF-8, and the ETag naming its coding', async () => {
    const [key] = await firstKeys(1);
    for (const path of [`/Property('${key}')`, "/Property('GZ-UTF8')"]) await decodedEverywhere(path, { curl: true, python: true });
    const identity = await wire(`${server.url}/Property('GZ-UTF8')`);
    const gzip = await wire(`${server.url}/Property('GZ-UTF8')`, GZIP);
    expect(gzip.headers.get('etag')).to.equal(`${identity.headers.get('etag')!.slice(0, -1)}-gzip"`);
    expect((await wire(`${server.url}/Property('GZ-UTF8')`, { ...GZIP, 'If-None-Match': gzip.headers.get('etag')! })).status).to.equal(304);
  });

  it('random pages (whole and streamed), filtered pages, an empty page, and the walk to the last page', async () => {
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    const paths = ['/Property', '/Property?$top=1000', "/Property?$filter=ListingKey eq 'none'", "/Property?$filter=ListingKey eq 'GZ-UTF8'"];
    for (let i = 0; i < 6; i++) paths.push(`/Property?$top=${1 + next(150)}&$skip=${next(LISTINGS)}&$orderby=ListPrice desc`);
    for (const path of paths) await decodedEverywhere(path, { python: paths.indexOf(path) < 2, curl: paths.indexOf(path) < 2 });
    let link: string | undefined = `${server.url}/Property?$count=true`;
    let pages = 0;
    while (link) {
      await decodedEverywhere(link.slice(server.url.length), { python: true });
      link = (await wire(link)).json['@odata.nextLink'];
      pages++;
    }
    expect(pages, 'the walk has more than one page').to.be.greaterThan(1);
  });

  it('every set, with and without $expand', async () => {
    for (const set of serviceModel.entitySets) await decodedEverywhere(`/${set.name}?$top=120`);
    for (const nav of serviceModel.entitySets.find((s) => s.name === 'Property')!.navigations.filter((n) => n.followable)) {
      await decodedEverywhere(`/Property?$top=20&$expand=${nav.name}`);
    }
  });

  it('a run kept before one of its records changed is not served stale', async () => {
    const keys = await firstKeys(60);
    const path = '/Property?$top=60&$orderby=ListingKey';
    await decodedEverywhere(path);
    await decodedEverywhere(`/Property('${keys[10]}')`);
    await fixtures.ingest('Property', { ...fixtures.listing(keys[10], 'Pending'), PublicRemarks: 'changed after its run was kept ✓' });
    await decodedEverywhere(path);
    await decodedEverywhere(`/Property('${keys[10]}')`);
    const changed = JSON.parse(gunzipSync((await wire(`${server.url}${path}`, GZIP)).bytes).toString('utf8'));
    expect(changed.value[10].PublicRemarks).to.equal('changed after its run was kept ✓');
  });

  it('a page whose runs are kept, its positions read in windows of ten batches, and the run cache on /metrics', async () => {
    // Batches of 8: windows of 80 positions, so a page of 240 reads three, and its batches cut runs of 50. No page
    // is kept whole (gzip-kept-pages.test.ts), so each answer is stitched from its runs.
    const small = await startTestServer(serviceModel, db.url, { pageBatchSize: 8, gzipPageCacheBytes: 0 });
    try {
      const scrape = async () => parsePrometheus((await get(`${small.url.replace(/\/odata$/, '')}/metrics`)).text);
      const at = (samples: ReturnType<typeof parsePrometheus>, name: string) => sample(samples, name, {});
      const path = '/Property?$top=240&$orderby=ListingKey';
      const identity = sealed((await wire(`${small.url}${path}`)).bytes.toString('utf8'));
      expect(sealed(gunzipSync((await wire(`${small.url}${path}`, GZIP)).bytes).toString('utf8')), 'runs compressed').to.equal(identity);
      const cold = await scrape();
      // Runs of 50 cut where batches end: each piece is compressed once, then served from memory.
      const runs = at(cold, 'reso_gzip_run_cache_misses_total');
      expect(runs, 'runs compressed on the spot').to.be.at.least(30);
      expect(at(cold, 'reso_gzip_run_cache_hits_total')).to.equal(0);
      expect(at(cold, 'reso_gzip_run_cache_bytes')).to.be.greaterThan(0);
      for (let i = 0; i < 2; i++) {
        expect(sealed(gunzipSync((await wire(`${small.url}${path}`, GZIP)).bytes).toString('utf8')), 'runs kept').to.equal(identity);
      }
      const warm = await scrape();
      expect(at(warm, 'reso_gzip_run_cache_hits_total'), 'each run served from memory twice').to.equal(2 * runs);
      expect(at(warm, 'reso_gzip_run_cache_misses_total')).to.equal(runs);
      expect(at(warm, 'reso_gzip_run_cache_evictions_total')).to.equal(0);
    } finally {
      await small.close();
    }
  });

  it("Chromium's fetch decodes them to the identity bodies", async function () {
    this.timeout(120_000);
    browser = await launchChromium(this);
    page = await browser.newPage();
    await page.goto(`${server.url}/`);
    const [key] = await firstKeys(1);
    for (const path of ['/Property', `/Property('${key}')`, "/Property('GZ-UTF8')", '/Property?$top=1000', '/Property?$top=20&$expand=Media']) {
      const seen = await page.evaluate(async ([url, token]) => {
        const r = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
        return { text: await r.text(), coding: r.headers.get('content-encoding') };
      }, [`${server.url}${path}`, TEST_TOKEN] as const);
      // Chromium does not show the Content-Encoding it decoded; what it sends is asked the same way here.
      const asked = await wire(`${server.url}${path}`, { 'Accept-Encoding': 'gzip, deflate, br, zstd' });
      // A stitched shape answers gzip to a client that takes br too.
      expect(asked.headers.get('content-encoding'), path).to.equal('gzip');
      expect(sealed(seen.text), path).to.equal(sealed((await wire(`${server.url}${path}`)).bytes.toString('utf8')));
    }
  });
});
