/**
 * Per-client rate limits (docs/licensing.md "Clients, licensing and usage"): a sliding one-minute window, so no 60 s
 * span serves more than the limit, whatever the timing; shared by every instance on one database; the
 * RateLimit-* and Retry-After headers say where the client stands; clients without a limit pay nothing.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { RATE_WINDOWS_TABLE } from '../src/storage/tables/internal-schema';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { HttpResult, request, startTestServer } from './support/http';
import { ManualClock } from './support/manual-clock';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

describeEachDatabase('Rate limits', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let second: RunningServer;
  let listingKey: string;
  let made = 0;
  /** Both instances measure windows against this clock. */
  const clock = new ManualClock();

  /** A client with `perMinute` requests a minute and a static token for it. */
  const limitedClient = async (perMinute: number | undefined) => {
    const id = `rate-${++made}`;
    await server.service.clients.add({ id, name: id, ...(perMinute ? { rateLimit: perMinute } : {}) });
    return { id, token: await server.service.clients.issueToken(id, undefined) };
  };
  const fetchKey = (root: string, token: string) => request(`${root}/Property('${listingKey}')`, { token });
  const statuses = (replies: HttpResult[]) => replies.map((r) => r.status);
  const served = (replies: HttpResult[]) => replies.filter((r) => r.status === 200).length;
  const rowsOf = async (clientId: string) =>
    Number((await server.service.db.all(`SELECT COUNT(*) AS n FROM \`${RATE_WINDOWS_TABLE}\` WHERE client_id = ?`, [clientId]))[0].n);

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    // 40 requests at once from one client: the limit on requests in progress must not be what answers 429.
    server = await startTestServer(serviceModel, db.url, { pageSize: 3, maxConcurrentRequests: 40 }, { clock });
    second = await startTestServer(serviceModel, db.instanceUrl(1), { pageSize: 3, maxConcurrentRequests: 40 }, { clock });
    await seedDemoData(server.service, { listings: 3 });
    const reader = await limitedClient(undefined);
    listingKey = (await request(`${server.url}/Property?$top=1&$select=ListingKey`, { token: reader.token })).json.value[0].ListingKey;
  });
  after(async function () {
    this.timeout(60_000);
    await second?.close();
    await server?.close();
    await db?.drop();
  });
  // Each test starts on a whole second, so the times below are exact.
  beforeEach(() => clock.advance(SECOND - (clock.now() % SECOND)));

  describe('a sliding window: no 60 s span serves more than the limit', function () {
    this.timeout(60_000);
    it('the boundary burst of a fixed window is refused: a request, 59 more a minute later and 60 just after serve 61 in 60.5 s (60 in any 60 s span), not 120', async () => {
      const { token } = await limitedClient(60);
      const first = await fetchKey(server.url, token);
      expect(first.status).to.equal(200);
      clock.advance(59 * SECOND);
      const late: HttpResult[] = [];
      for (let i = 0; i < 59; i++) late.push(await fetchKey(server.url, token));
      expect(served(late), 'the rest of the first minute').to.equal(59);
      clock.advance(1.5 * SECOND); // a fixed window that began with the first request would start afresh here
      const early: HttpResult[] = [];
      for (let i = 0; i < 60; i++) early.push(await fetchKey(server.url, token));
      expect(served(early), 'only the first request has left the window').to.equal(1);
      expect(served([first, ...late, ...early]), 'served within 60.5 s').to.equal(61);
      const refused = early[early.length - 1];
      expect(refused.status).to.equal(429);
      expect(refused.json.error.code).to.equal('RateLimited');
      // The 59 late requests were served at +59 s: room comes back 60 s after them, 58.5 s from now.
      expect(refused.headers.get('retry-after')).to.equal('59');
      expect(refused.headers.get('ratelimit-remaining')).to.equal('0');
      expect(refused.headers.get('ratelimit-limit')).to.equal('60');
    });
    it('a request is served exactly when fewer than the limit were served in the 60 s before it', async () => {
      const { token } = await limitedClient(3);
      const at0 = [await fetchKey(server.url, token), await fetchKey(server.url, token)];
      clock.advance(30 * SECOND);
      const at30 = [await fetchKey(server.url, token), await fetchKey(server.url, token)];
      expect(statuses([...at0, ...at30])).to.deep.equal([200, 200, 200, 429]);
      expect(at0.map((r) => r.headers.get('ratelimit-remaining'))).to.deep.equal(['2', '1']);
      expect(at30[1].headers.get('retry-after'), 'the two at 0 s leave the window at 60 s').to.equal('30');
      clock.advance(30 * SECOND - 1);
      const justBefore = await fetchKey(server.url, token);
      expect(justBefore.status).to.equal(429);
      expect(justBefore.headers.get('retry-after')).to.equal('1');
      clock.advance(1);
      const at60 = [await fetchKey(server.url, token), await fetchKey(server.url, token), await fetchKey(server.url, token)];
      expect(statuses(at60), 'two places free again at 60 s').to.deep.equal([200, 200, 429]);
      expect(at60[0].headers.get('ratelimit-remaining')).to.equal('1');
      expect(at60[0].headers.get('ratelimit-reset')).to.equal('60');
      expect(at60[2].headers.get('retry-after'), 'the one at 30 s leaves at 90 s').to.equal('30');
    });
  });

  describe('shared by the instances on one database', function () {
    this.timeout(60_000);
    it('requests alternating between two instances share one limit', async () => {
      const { token } = await limitedClient(10);
      const replies: HttpResult[] = [];
      for (let i = 0; i < 20; i++) replies.push(await fetchKey(i % 2 ? second.url : server.url, token));
      expect(statuses(replies)).to.deep.equal([...Array(10).fill(200), ...Array(10).fill(429)]);
      expect(replies.map((r) => r.headers.get('ratelimit-remaining')).slice(0, 10)).to.deep.equal(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);
    });
    it('an instance that last saw an old version of the window cannot write on top of it once older versions are gone', async () => {
      // The first instance sees version 1; the second writes versions 2–17, deleting those before 16 as it goes.
      // The first still knows version 1 (one request in the window): its next request must be refused all the same.
      const { token } = await limitedClient(17);
      expect((await fetchKey(server.url, token)).status).to.equal(200);
      for (let i = 0; i < 16; i++) expect((await fetchKey(second.url, token)).status, `request ${i + 2}`).to.equal(200);
      const stale = await fetchKey(server.url, token);
      expect(stale.status, 'the 18th request in a minute, on the instance that saw only the first').to.equal(429);
      expect(stale.headers.get('ratelimit-remaining')).to.equal('0');
    });
    it('40 requests at once, half on each instance: exactly the limit are served', async () => {
      const { token } = await limitedClient(12);
      const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => fetchKey(i % 2 ? second.url : server.url, token)));
      expect(served(replies)).to.equal(12);
      expect(replies.every((r) => r.status === 200 || r.status === 429)).to.equal(true);
      clock.advance(MINUTE);
      const again = await Promise.all(Array.from({ length: 40 }, (_, i) => fetchKey(i % 2 ? second.url : server.url, token)));
      expect(served(again), 'a minute later, the limit again').to.equal(12);
    });
  });

  describe('what it costs', function () {
    this.timeout(60_000);
    it('a client without a limit: no headers, nothing stored', async () => {
      const { id, token } = await limitedClient(undefined);
      for (let i = 0; i < 5; i++) {
        const r = await fetchKey(server.url, token);
        expect(r.status).to.equal(200);
        expect(r.headers.get('ratelimit-limit')).to.equal(null);
      }
      expect(await rowsOf(id)).to.equal(0);
    });
    it('a limited client: the rows it keeps stay few however many requests it makes', async () => {
      const { id, token } = await limitedClient(1000);
      for (let i = 0; i < 70; i++) expect((await fetchKey(server.url, token)).status).to.equal(200);
      expect(await rowsOf(id)).to.be.within(1, 16);
    });
  });
}, { cluster: true });
