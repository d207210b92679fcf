/**
 * Slow readers and requests in progress (issue 12, finding 4; docs/api.md "Limits"): a page larger than a batch is
 * written as it is read, waiting for the reader, so memory per connection is one batch's however large the
 * page and however slowly (or never) the client reads; a reader that takes nothing for WRITE_STALL_TIMEOUT_MS
 * is disconnected; a client past MAX_CONCURRENT_REQUESTS requests in progress gets 429. Against `reso-server
 * serve` processes of their own, whose resident memory is read from /proc.
 */
import { expect } from 'chai';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { request, TEST_TOKEN } from './support/http';
import { parseCredentials, runCli } from './support/licence-http';
import { walkPages } from './support/next-links';
import { until } from './support/poll';
import { ServerProcess, spawnServer } from './support/server-process';
import { peakUntilQuiet, residentMiB, stalledReader, StalledReader } from './support/stalled-reader';

/** Enough listings that the largest page (all of them, every navigation expanded) is tens of megabytes. */
const LISTINGS = 1000;
const LARGEST = `/Property?$expand=Media,OpenHouse,historyTransactional,PropertyRooms,PropertyUnits`;
const LARGEST_PAGE = { Prefer: `odata.maxpagesize=${LISTINGS}` };
const READERS = 16;
const CLIENTS = 4;

/** The raw record texts of a page body: what lies between `"value":[` and the array's end. */
function rawValue(body: string): string {
  const start = body.indexOf('"value":[') + '"value":['.length;
  return body.slice(start, body.lastIndexOf(']'));
}

describeEachDatabase('Slow readers and requests in progress', (target) => {
  let db: TestDatabase;
  /** Defaults (batches of 100, 8 requests in progress per client, a 30 s stall timeout). */
  let server: ServerProcess;
  /** A 2 s stall timeout and 2 requests in progress per client. */
  let strict: ServerProcess;
  let tokens: string[];

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    server = await spawnServer(db.url, { DEMO_TOKEN: TEST_TOKEN, SEED_LISTINGS: String(LISTINGS) });
    tokens = [TEST_TOKEN];
    for (let i = 1; i < CLIENTS; i++) {
      const added = await runCli(db.url, ['clients', 'add', '--name', `Slow Reader ${i}`, '--static-token']);
      expect(added.code, added.stderr).to.equal(0);
      tokens.push(parseCredentials(added.stdout).token!);
    }
    strict = await spawnServer(db.url, { DEMO_TOKEN: TEST_TOKEN, WRITE_STALL_TIMEOUT_MS: '2000', MAX_CONCURRENT_REQUESTS: '2' });
  });

  after(async () => {
    await Promise.all([server?.stop(), strict?.stop()]);
    await db?.drop();
  });

  describe('large pages are streamed', () => {
    it('a page larger than a batch goes out chunked, byte for byte the records its 100-record pages hold', async function () {
      this.timeout(60_000);
      const whole = await request(`${server.url}${LARGEST}`, { token: TEST_TOKEN, headers: LARGEST_PAGE });
      expect(whole.status, whole.text.slice(0, 300)).to.equal(200);
      expect(whole.headers.get('transfer-encoding')).to.equal('chunked');
      expect(whole.headers.get('content-length')).to.equal(null);
      expect(whole.text.length, 'the largest page is large').to.be.above(10 << 20);
      expect(whole.json.value).to.have.length(LISTINGS);
      expect(whole.json).not.to.have.property('@odata.nextLink');
      // The same records as pages of one batch each, which go out whole (with a Content-Length, when not compressed).
      const { pages } = await walkPages(`${server.url}${LARGEST}`, { headers: { Prefer: 'odata.maxpagesize=100', 'Accept-Encoding': 'identity' } });
      for (const page of pages) expect(Number(page.headers.get('content-length'))).to.equal(Buffer.byteLength(page.text));
      const parts = pages.map((page) => rawValue(page.text));
      expect(parts).to.have.length(LISTINGS / 100);
      const context = JSON.stringify(whole.json['@odata.context']);
      expect(whole.text === `{"@odata.context":${context},"value":[${parts.join(',')}]}`, 'streamed body equals the pages joined').to.equal(true);
    });

    it('a streamed page that does not end the query carries a nextLink that continues it', async function () {
      this.timeout(60_000);
      const first = await request(`${server.url}${LARGEST}&$count=true`, { token: TEST_TOKEN, headers: { Prefer: 'odata.maxpagesize=250' } });
      expect(first.status).to.equal(200);
      expect(first.headers.get('transfer-encoding')).to.equal('chunked');
      expect(first.json['@odata.count']).to.equal(LISTINGS);
      expect(first.json.value).to.have.length(250);
      const second = await request(first.json['@odata.nextLink'], { token: TEST_TOKEN, headers: { Prefer: 'odata.maxpagesize=250' } });
      expect(second.status).to.equal(200);
      const keys = [...first.json.value, ...second.json.value].map((r: { ListingKey: string }) => r.ListingKey);
      expect(new Set(keys).size, 'no listing twice').to.equal(500);
    });
  });

  describe('memory per connection is bounded', () => {
    it(`${READERS} readers of the largest page that never read hold memory below twice idle, round after round, and it is not kept once they leave`, async function () {
      this.timeout(120_000);
      const pid = server.child.pid!;
      // Idle: after serving the largest page once to a reader that reads it.
      expect((await request(`${server.url}${LARGEST}`, { token: TEST_TOKEN, headers: LARGEST_PAGE })).status).to.equal(200);
      const idle = residentMiB(pid);
      const peaks: number[] = [];
      // A second round must fit in the same bound: what the first held was given back, not leaked.
      for (let round = 0; round < 2; round++) {
        // Several clients, so that their limit on requests in progress is not what bounds the memory.
        const readers = Array.from({ length: READERS }, (_, i) => stalledReader(`${server.url}${LARGEST}`, tokens[i % CLIENTS], LARGEST_PAGE));
        try {
          const statuses = await Promise.all(readers.map((r) => r.statusLine));
          expect(statuses, 'every reader got its page under way').to.deep.equal(readers.map(() => 'HTTP/1.1 200 OK'));
          peaks.push(await peakUntilQuiet(pid, { everyMs: 50, quietMs: 1000, maxMs: 30_000 }));
        } finally {
          readers.forEach((r) => r.close());
        }
        expect(peaks[round], `round ${round + 1}: peak ${peaks[round].toFixed(0)} MiB against ${idle.toFixed(0)} MiB idle`).to.be.below(2 * idle);
      }
      // The answers still work once the readers are gone: nothing they held is kept.
      const after = await request(`${server.url}/Property?$top=1`, { token: TEST_TOKEN });
      expect(after.status).to.equal(200);
      const left = residentMiB(pid);
      expect(left, `after they left: ${left.toFixed(0)} MiB against ${idle.toFixed(0)} MiB idle`).to.be.below(2 * idle);
    });

    it('a reader that takes nothing for WRITE_STALL_TIMEOUT_MS is disconnected mid-body: the body it got is cut short, never valid JSON', async function () {
      this.timeout(60_000);
      const token = tokens[1];
      const [stalled, beside] = [1, 2].map(() => stalledReader(`${strict.url}${LARGEST}`, token, LARGEST_PAGE));
      try {
        expect(await Promise.all([stalled.statusLine, beside.statusLine])).to.deep.equal(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
        expect((await request(`${strict.url}/Property?$top=1`, { token })).status, 'both slots taken').to.equal(429);
        await until('the stalled reader is cut off', async () => stalled.peerClosed());
        // And its slot is given back.
        await until('a slot is free again', async () => (await request(`${strict.url}/Property?$top=1`, { token })).status === 200);
        const got = (await stalled.drain()).toString('latin1');
        expect(got.startsWith('HTTP/1.1 200 OK')).to.equal(true);
        expect(got.endsWith('\r\n0\r\n\r\n'), 'no final chunk').to.equal(false);
        expect(got.length).to.be.below(10 << 20);
      } finally {
        stalled.close();
        beside.close();
      }
    });
  });

  describe('requests in progress per client (MAX_CONCURRENT_REQUESTS)', () => {
    it('past the limit: 429 ConcurrencyLimited with Retry-After; other clients are served meanwhile', async function () {
      this.timeout(60_000);
      const readers = [1, 2].map(() => stalledReader(`${strict.url}${LARGEST}`, tokens[2], LARGEST_PAGE));
      try {
        expect(await Promise.all(readers.map((r) => r.statusLine))).to.deep.equal(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
        const third = await request(`${strict.url}/Property?$top=1`, { token: tokens[2] });
        expect(third.status).to.equal(429);
        expect(third.headers.get('retry-after')).to.equal('1');
        expect(third.json.error.code).to.equal('ConcurrencyLimited');
        expect(third.json.error.message).to.match(/2 requests in progress/);
        const other = await request(`${strict.url}/Property?$top=1`, { token: tokens[3] });
        expect(other.status, 'another client').to.equal(200);
      } finally {
        readers.forEach((r) => r.close());
      }
    });

    it('slots are given back when a response finishes, fails or its client closes the connection', async function () {
      this.timeout(60_000);
      const token = tokens[3];
      // Finished and failed responses, many more than the limit, one after another.
      for (const path of ['/Property?$top=1', `/Property('no-such-listing')`, '/Property?$filter=nonsense eq', '/Property?$skip=1', '/NoSuchSet']) {
        for (let i = 0; i < 3; i++) expect((await request(`${strict.url}${path}`, { token })).status).not.to.equal(429);
      }
      // Closed by the client while its page is under way: each pair of readers needs both slots.
      for (let round = 0; round < 3; round++) {
        let readers: StalledReader[] = [];
        await until(`round ${round + 1}: both slots free again`, async () => {
          readers.forEach((r) => r.close());
          readers = [1, 2].map(() => stalledReader(`${strict.url}${LARGEST}`, token, LARGEST_PAGE));
          const statuses = await Promise.all(readers.map((r) => r.statusLine.catch(() => 'closed')));
          return statuses.every((st) => st === 'HTTP/1.1 200 OK');
        }, 5_000, 100);
        expect((await request(`${strict.url}/Property?$top=1`, { token })).status, 'both slots taken').to.equal(429);
        readers.forEach((r) => r.close());
      }
    });
  });
});
