/**
 * docs/configuration.md "Configuration" at its extremes: FILTER_MAX_LENGTH, PAGE_SIZE and MAX_PAGE_SIZE at the largest values
 * the service accepts, and a PAGING_SECRET the test knows. Whatever a client sends within those limits is
 * answered with a result or a 4xx from the error catalogue, never a 5xx: in (…) lists of tens of thousands of
 * values (one bound JSON array, the same results and collation as a short list), filters with more comparisons
 * than the database binds (FilterTooComplex), pages of 10,000 with every expansion, and $skiptokens forged with
 * the secret (SkipTokenInvalid).
 */
import { expect } from 'chai';
import { connect } from 'node:net';
import { serviceModel } from '../generated';
import { configFromEnv } from '../src/config/config';
import { seedDemoData } from '../src/demo/demo-data';
import type { RunningServer } from '../src/process/server';
import { DatabaseTarget, describeEachDatabase, TestDatabase } from './support/databases';
import { get, HttpResult, odataError, startTestServer } from './support/http';
import { walkPages } from './support/next-links';
import { digestOf, forgedPosition, sealToken } from './support/forged-skiptokens';
import { Rng } from './support/query-fuzz-gen';

const SECRET = 'a-paging-secret-the-test-knows';
const LISTINGS = 120;

/** The largest value configFromEnv accepts for `name`: `max` is accepted, one more is refused. */
function largestAllowed(name: string, max: number, env: Record<string, string> = {}): number {
  expect(configFromEnv({ ...env, [name]: String(max) }), name).to.be.an('object');
  expect(() => configFromEnv({ ...env, [name]: String(max + 1) }), `${name}=${max + 1}`).to.throw(name);
  return max;
}

const urlOf = (path: string, options: Record<string, string>) =>
  `${path}?${Object.entries(options).map(([k, v]) => `$${k}=${encodeURIComponent(v)}`).join('&')}`;

describeEachDatabase('Configuration at its largest: FILTER_MAX_LENGTH, PAGE_SIZE and MAX_PAGE_SIZE never lead to a 5xx', (target: DatabaseTarget) => {
  const filterMax = largestAllowed('FILTER_MAX_LENGTH', 512 * 1024);
  const pageMax = largestAllowed('MAX_PAGE_SIZE', 10_000);
  let db: TestDatabase;
  let server: RunningServer;
  let keys: string[];
  let base: string;
  const read = (url: string, headers: Record<string, string> = {}) => get(`${base}${url}`, headers);
  const filtered = (filter: string, rest = '') => read(`/Property?$filter=${encodeURIComponent(filter)}&$select=ListingKey${rest}`);
  const keysOf = (r: HttpResult) => {
    expect(r.status, r.text.slice(0, 300)).to.equal(200);
    return (r.json.value as { ListingKey: string }[]).map((x) => x.ListingKey).sort();
  };

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, {
      maxFilterLength: filterMax, maxPageSize: pageMax, pageSize: largestAllowed('PAGE_SIZE', 10_000, { MAX_PAGE_SIZE: '10000' }), pagingSecret: SECRET,
    });
    await seedDemoData(server.service, { listings: LISTINGS });
    base = server.url;
    keys = keysOf(await read('/Property?$select=ListingKey')).sort();
    expect(keys).to.have.length(LISTINGS);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  describe('in (…) lists up to FILTER_MAX_LENGTH: one bound value, the results of a short list', () => {
    /** 40,000 keys, every stored one among them at a spread of positions. */
    const manyKeys = () => Array.from({ length: 40_000 }, (_, i) => (i % 300 === 7 && i / 300 < keys.length ? keys[Math.floor(i / 300)] : `X${String(i).padStart(6, '0')}`));

    it('ListingKey in (…40,000 strings…) is under the limit and answers exactly the stored keys among them', async function () {
      this.timeout(60_000);
      const list = manyKeys();
      const filter = `ListingKey in (${list.map((k) => `'${k}'`).join(',')})`;
      expect(filter.length).to.be.within(300_000, filterMax);
      expect(keysOf(await filtered(filter))).to.deep.equal(keys.filter((k) => list.includes(k)).sort());
      const count = await read(`/Property/$count?$filter=${encodeURIComponent(`not (${filter})`)}`);
      expect(count.status, count.text).to.equal(200);
      expect(Number(count.text)).to.equal(keys.filter((k) => !list.includes(k)).length);
    });

    it('the same records as a short list and as or-ed equalities, whatever the list length (collation: case and trailing spaces count)', async () => {
      const wanted = keys.slice(0, 5);
      const near = wanted.flatMap((k) => [`${k} `, k.toLowerCase(), ` ${k}`]);
      const padding = Array.from({ length: 100 }, (_, i) => `Y${i}`);
      const short = keysOf(await filtered(`ListingKey in (${[...wanted, ...near.slice(0, 3)].map((k) => `'${k}'`).join(',')})`));
      const long = keysOf(await filtered(`ListingKey in (${[...wanted, ...near, ...padding].map((k) => `'${k}'`).join(',')})`));
      const ors = keysOf(await filtered([...wanted, ...near, ...padding].map((k) => `ListingKey eq '${k}'`).join(' or ')));
      expect(short).to.deep.equal(wanted.slice().sort());
      expect(long).to.deep.equal(short);
      expect(ors).to.deep.equal(short);
    });

    it('timestamps keep their stored form in a long list; not in (…) keeps records whose value is null', async () => {
      const all = (await read('/Property?$select=ListingKey,ModificationTimestamp,PhotosChangeTimestamp')).json.value as Record<string, string>[];
      const times = all.slice(0, 70).map((r) => r.ModificationTimestamp);
      // The same instants written with an offset, normalised by the binder before they are listed.
      const withOffset = times.map((t) => new Date(Date.parse(t)).toISOString().replace('Z', '+00:00'));
      const expected = all.filter((r) => times.includes(r.ModificationTimestamp)).map((r) => r.ListingKey).sort();
      expect(keysOf(await filtered(`ModificationTimestamp in (${withOffset.join(',')})`))).to.deep.equal(expected);
      const photos = all.map((r) => r.PhotosChangeTimestamp).filter((t): t is string => typeof t === 'string').slice(0, 70);
      const outside = keysOf(await filtered(`not (PhotosChangeTimestamp in (${[...photos, ...times].join(',')}))`));
      expect(outside).to.deep.equal(all.filter((r) => !photos.includes(r.PhotosChangeTimestamp) || r.PhotosChangeTimestamp === null).map((r) => r.ListingKey).sort());
    });

    it('a filter with more comparisons than the database binds answers 400 FilterTooComplex (SQLite binds 32,766), or its result', async function () {
      this.timeout(60_000);
      const term = "endswith(MlsStatus,'ve')";
      const filter = Array.from({ length: Math.floor(filterMax / (term.length + 4)) }, () => term).join(' or ');
      const r = await filtered(filter);
      if (target.label === 'SQLite') {
        expect(r.status, r.text.slice(0, 300)).to.equal(400);
        expect(odataError(r)).to.include({ code: 'FilterTooComplex', target: '$filter' });
      } else {
        expect(keysOf(r)).to.deep.equal(keysOf(await filtered("endswith(MlsStatus,'ve')")));
      }
    });
  });

  describe('FILTER_MAX_LENGTH characters reach the service however they are encoded', () => {
    it(`a $filter of ${512 * 1024} characters that each take 9 bytes percent-encoded: answered by the service, not refused by the HTTP parser`, async function () {
      this.timeout(60_000);
      const value = '日'.repeat(filterMax - "MlsStatus eq ''".length);
      const r = await filtered(`MlsStatus eq '${value}'`);
      expect(r.status, r.text.slice(0, 200)).to.equal(200);
      expect(r.json.value).to.deep.equal([]);
      const over = await filtered(`MlsStatus eq '${value}x'`);
      expect(over.status).to.equal(413);
      expect(odataError(over).code).to.equal('FilterTooLong');
    });
  });

  describe('what the HTTP parser refuses still gets an OData error body', () => {
    /** Sends `bytes` on a connection of its own; answers what the server wrote before it closed. */
    const rawExchange = (bytes: string) => new Promise<string>((resolve, reject) => {
      const { hostname, port } = new URL(base);
      const socket = connect(Number(port), hostname, () => socket.end(bytes));
      let out = '';
      socket.on('data', (c: Buffer) => { out += c.toString(); }).on('close', () => resolve(out)).on('error', reject);
    });
    const parts = (answer: string) => ({ head: answer.slice(0, answer.indexOf('\r\n\r\n')), body: JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) });

    it('a request line beyond the head limit (1 MiB + 9 × FILTER_MAX_LENGTH): 431 RequestHeadTooLarge, then the connection closes', async function () {
      this.timeout(60_000);
      const { head, body } = parts(await rawExchange(`GET /odata/Property?$filter=${'x'.repeat(1024 * 1024 + 9 * filterMax)} HTTP/1.1\r\nHost: x\r\n\r\n`));
      expect(head).to.match(/^HTTP\/1\.1 431 /).and.match(/Content-Type: application\/json/).and.match(/Connection: close/);
      expect(body.error.code).to.equal('RequestHeadTooLarge');
      expect(body.error.message).to.include(String(1024 * 1024 + 9 * filterMax));
    });

    it('bytes that are not HTTP: 400 RequestMalformed', async () => {
      const { head, body } = parts(await rawExchange('HELLO THERE\r\n\r\n'));
      expect(head).to.match(/^HTTP\/1\.1 400 /);
      expect(body.error).to.include({ code: 'RequestMalformed' });
    });
  });

  describe('PAGE_SIZE and MAX_PAGE_SIZE at 10,000', () => {
    it('one page holds every listing with all five expansions, each expansion under its own parent', async function () {
      this.timeout(60_000);
      const navs = ['Media', 'OpenHouse', 'historyTransactional', 'PropertyRooms', 'PropertyUnits'];
      const r = await read(`/Property?$select=ListingKey&$expand=${navs.join(',')}`, { Prefer: `odata.maxpagesize=${pageMax}` });
      expect(r.status, r.text.slice(0, 300)).to.equal(200);
      expect(r.json.value).to.have.length(LISTINGS);
      expect(r.json['@odata.nextLink']).to.equal(undefined);
      let related = 0;
      for (const listing of r.json.value) {
        for (const nav of navs) {
          expect(listing[nav], nav).to.be.an('array');
          for (const rec of listing[nav]) expect(rec.ListingKey ?? rec.ResourceRecordKey, nav).to.equal(listing.ListingKey);
          related += listing[nav].length;
        }
      }
      expect(related, 'records expanded').to.be.greaterThan(LISTINGS);
    });

    it('maxpagesize beyond the maximum and $top beyond it are capped, not refused', async () => {
      const r = await read('/Property?$select=ListingKey&$top=99999', { Prefer: 'odata.maxpagesize=999999999' });
      expect(r.status).to.equal(200);
      expect(r.headers.get('preference-applied')).to.equal(`odata.maxpagesize=${pageMax}`);
      expect(r.json.value).to.have.length(LISTINGS);
    });
  });

  describe('$skiptoken sealed with the known PAGING_SECRET: a forged position is 400 SkipTokenInvalid, never a 5xx', () => {
    const queries: Record<string, string>[] = [
      {}, { orderby: 'MlsStatus desc' }, { orderby: 'PhotosChangeTimestamp desc,ListingKey' }, { filter: "MlsStatus ne 'Closed'", orderby: 'ListingKey desc' },
      { orderby: 'DocumentsChangeTimestamp', top: '50' },
    ];

    it('tokens the service issues still walk every record once, in each order', async function () {
      this.timeout(60_000);
      for (const options of queries.slice(0, 4)) {
        const walk = await walkPages(`${base}${urlOf('/Property', { ...options, select: 'ListingKey' })}`, { headers: { Prefer: 'odata.maxpagesize=17' } });
        const seen = walk.records.map((x) => x.ListingKey as string);
        const expected = options.filter ? keysOf(await filtered(options.filter)) : keys;
        expect(seen.slice().sort(), JSON.stringify(options)).to.deep.equal(expected);
      }
    });

    it('500 forged positions (wrong shapes, types, lengths, huge numbers, invalid dates, nested values) over five orders: all 400', async function () {
      this.timeout(120_000);
      const r = new Rng(20261123);
      const failures: string[] = [];
      const statuses: Record<number, number> = {};
      for (let i = 0; i < 500; i++) {
        const options = r.pick(queries);
        const body = forgedPosition(r);
        const token = sealToken(SECRET, digestOf('/Property', options), body);
        const a = await read(`${urlOf('/Property', options)}&$skiptoken=${token}`);
        statuses[a.status] = (statuses[a.status] ?? 0) + 1;
        if (a.status >= 500 || (a.status !== 200 && odataError(a).code !== 'SkipTokenInvalid')) {
          failures.push(`${a.status} for ${JSON.stringify(options)} with ${body.slice(0, 200)}: ${a.text.slice(0, 200)}`);
        }
      }
      expect(failures, failures.slice(0, 5).join('\n')).to.deep.equal([]);
      // Most forgeries are malformed; the well-formed ones among them are positions like any other (200).
      expect(statuses[400] ?? 0).to.be.greaterThan(400);
    });
  });
});
