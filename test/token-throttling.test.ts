/**
 * Throttling at the token endpoint (docs/licensing.md "Clients, licensing and usage"): failed attempts are counted per
 * client id and per remote address; past the limit, 429 `slow_down` with Retry-After, refused before the
 * secret is hashed; successful attempts count nothing; malformed and hostile input never gets a 5xx, and a
 * brute-force run leaves other clients' requests served.
 */
import type { AddressInfo } from 'node:net';
import { createServer, Server } from 'node:http';
import { expect } from 'chai';
import express from 'express';
import { serviceModel } from '../generated';
import type { TokenIssuer } from '../src/auth/clients';
import { DEFAULT_THROTTLE, TokenThrottle } from '../src/auth/token-throttle';
import { tokenEndpoint } from '../src/http/authentication';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { Ask, HttpResult, request, startTestServer, TEST_TOKEN } from './support/http';
import { originOf, requestToken } from './support/licence-http';
import { ManualClock } from './support/manual-clock';

const MINUTE = 60_000;

function expectSlowDown(r: HttpResult, label: string): number {
  expect(r.status, `${label}: ${r.text.slice(0, 200)}`).to.equal(429);
  expect(r.headers.get('content-type') ?? '', label).to.match(/^application\/json/);
  expect(r.headers.get('cache-control'), label).to.match(/no-store/);
  expect(r.json?.error, label).to.equal('slow_down');
  expect(r.json?.error_description, label).to.be.a('string');
  expect(r.json, label).not.to.have.property('access_token');
  const retry = Number(r.headers.get('retry-after'));
  expect(Number.isInteger(retry) && retry >= 1 && retry <= 60, `${label}: Retry-After ${r.headers.get('retry-after')}`).to.equal(true);
  return retry;
}

/** POST /oauth2/token from another loopback address (127.0.0.2), as another host would. */
function tokenFromElsewhere(base: string, creds: { id: string; secret: string; via: 'basic' | 'form' }): Promise<HttpResult> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (creds.via === 'basic') headers.Authorization = `Basic ${Buffer.from(`${creds.id}:${creds.secret}`).toString('base64')}`;
  else form.set('client_id', creds.id), form.set('client_secret', creds.secret);
  return request(`http://127.0.0.1:${new URL(base).port}/oauth2/token`, { wire: true, method: 'POST', headers, body: form.toString(), localAddress: '127.0.0.2' });
}

describeEachDatabase('Token endpoint throttling', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  let listingKey: string;
  const clock = new ManualClock();
  const clients: Record<string, { id: string; secret: string }> = {};

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: 3 }, { clock });
    await seedDemoData(server.service, { listings: 4 });
    base = server.url;
    listingKey = (await request(`${base}/Property?$top=1&$select=ListingKey`, { token: TEST_TOKEN })).json.value[0].ListingKey;
    for (const id of ['victim', 'bystander', 'busy', 'crowd']) {
      const { secret } = await server.service.clients.add({ id, name: id });
      clients[id] = { id, secret };
    }
  });
  after(async function () {
    this.timeout(60_000);
    await server?.close();
    await db?.drop();
  });
  // Each test starts with every window empty.
  beforeEach(() => clock.advance(MINUTE));

  describe('per client id', function () {
    this.timeout(60_000);
    it(`after ${DEFAULT_THROTTLE.perClient} failed attempts in a minute: 429 slow_down with Retry-After, even with the right secret, from any address; a minute later it works`, async () => {
      const victim = clients.victim;
      for (let i = 0; i < DEFAULT_THROTTLE.perClient; i++) {
        const r = await requestToken(base, { id: victim.id, secret: `wrong-${i}`, via: i % 2 ? 'form' : 'basic' });
        expect(r.status, `failure ${i + 1}`).to.equal(401);
        expect(r.json.error).to.equal('invalid_client');
      }
      expectSlowDown(await requestToken(base, { ...victim, via: 'basic' }), 'right secret, throttled id');
      expectSlowDown(await tokenFromElsewhere(base, { id: victim.id, secret: 'wrong', via: 'form' }), 'the same id from another address');
      // Other clients from the same address are not held up.
      const other = await requestToken(base, { ...clients.bystander, via: 'basic' });
      expect(other.status, other.text).to.equal(200);
      clock.advance(MINUTE - 1);
      expect(expectSlowDown(await requestToken(base, { ...victim, via: 'basic' }), 'just before the window ends')).to.equal(1);
      clock.advance(1);
      const back = await requestToken(base, { ...victim, via: 'basic' });
      expect(back.status, back.text).to.equal(200);
      const data = await request(`${base}/Property('${listingKey}')`, { token: back.json.access_token });
      expect(data.status).to.equal(200);
    });
    it('successful attempts count nothing: a client authenticating many times a minute is never throttled', async () => {
      for (let i = 0; i < DEFAULT_THROTTLE.perClient * 3; i++) {
        const r = await requestToken(base, { ...clients.busy, via: i % 2 ? 'form' : 'basic' });
        expect(r.status, `attempt ${i + 1}: ${r.text}`).to.equal(200);
      }
    });
  });

  describe('per remote address', function () {
    this.timeout(60_000);
    it(`after ${DEFAULT_THROTTLE.perAddress} failed attempts from one address (any ids): that address gets 429, others are served`, async () => {
      for (let i = 0; i < DEFAULT_THROTTLE.perAddress; i++) {
        const r = await tokenFromElsewhere(base, { id: `guess-${i}`, secret: 'x', via: 'basic' });
        expect(r.status, `failure ${i + 1}: ${r.text}`).to.equal(401);
      }
      expectSlowDown(await tokenFromElsewhere(base, { ...clients.crowd, via: 'basic' }), 'a good client from the throttled address');
      expectSlowDown(await tokenFromElsewhere(base, { id: 'guess-new', secret: 'x', via: 'form' }), 'a new guess from the throttled address');
      const here = await requestToken(base, { ...clients.crowd, via: 'basic' });
      expect(here.status, `the same client from another address: ${here.text}`).to.equal(200);
    });
  });

  describe('throttled attempts are refused before the secret is checked', function () {
    this.timeout(60_000);
    let app: Server;
    let origin: string;
    let checks = 0;
    before(async () => {
      // The real endpoint and registry, counting the secret checks (each one a scrypt hash).
      const registry = server.service.clients;
      const counting: TokenIssuer = {
        authenticate: (id, secret) => { checks++; return registry.authenticate(id, secret); },
        issueToken: (id, lifetime) => registry.issueToken(id, lifetime),
      };
      const e = express();
      e.use(tokenEndpoint(counting, new TokenThrottle(clock)));
      app = createServer(e);
      await new Promise<void>((resolve) => app.listen(0, resolve));
      origin = `http://localhost:${(app.address() as AddressInfo).port}/odata`;
    });
    after(() => new Promise<void>((resolve) => app.close(() => resolve())));

    it('300 wrong secrets sent 50 at a time: at most the limit are checked, the rest get 429', async () => {
      const answers: HttpResult[] = [];
      for (let round = 0; round < 6; round++) {
        answers.push(...await Promise.all(Array.from({ length: 50 }, (_, i) =>
          requestToken(origin, { id: clients.victim.id, secret: `guess-${round}-${i}`, via: 'form' }))));
      }
      expect(checks, 'secret checks').to.equal(DEFAULT_THROTTLE.perClient);
      const statuses = answers.reduce<Record<number, number>>((m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }), {});
      expect(statuses).to.deep.equal({ 401: DEFAULT_THROTTLE.perClient, 429: 300 - DEFAULT_THROTTLE.perClient });
    });
  });

  describe('hostile and malformed input: never a 5xx', function () {
    this.timeout(120_000);
    it('malformed forms, wrong content types, huge bodies, bad Basic headers, unknown clients, wrong secrets', async () => {
      const token = `${originOf(base)}/oauth2/token`;
      const form = 'application/x-www-form-urlencoded';
      const basic = (s: string) => `Basic ${Buffer.from(s, 'latin1').toString('base64')}`;
      const good = `grant_type=client_credentials&client_id=bystander&client_secret=${encodeURIComponent(clients.bystander.secret)}`;
      const cases: [string, Ask][] = [
        ['no body', { method: 'POST' }],
        ['empty form', { method: 'POST', headers: { 'Content-Type': form }, body: '' }],
        ['JSON body', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials' }) }],
        ['broken JSON', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"grant_type":' }],
        ['text/plain form', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: good }],
        ['multipart', { method: 'POST', headers: { 'Content-Type': 'multipart/form-data; boundary=x' }, body: '--x\r\n\r\n--x--' }],
        ['form in UTF-16', { method: 'POST', headers: { 'Content-Type': `${form}; charset=utf-16` }, body: good }],
        ['gzip-encoded form', { method: 'POST', headers: { 'Content-Type': form, 'Content-Encoding': 'gzip' }, body: good }],
        ['bad percent-encoding', { method: 'POST', headers: { 'Content-Type': form }, body: 'grant_type=%E0%A4%A&client_id=%&client_secret=%zz' }],
        ['a 1 MB form', { method: 'POST', headers: { 'Content-Type': form }, body: `grant_type=client_credentials&client_id=${'a'.repeat(1 << 20)}` }],
        ['a 100 KB secret', { method: 'POST', headers: { 'Content-Type': form }, body: `grant_type=client_credentials&client_id=bystander&client_secret=${'s'.repeat(100_000)}` }],
        ['10,000 parameters', { method: 'POST', headers: { 'Content-Type': form }, body: Array.from({ length: 10_000 }, (_, i) => `p${i}=1`).join('&') }],
        ['nested brackets', { method: 'POST', headers: { 'Content-Type': form }, body: 'grant_type[a][b]=client_credentials&client_id[]=x&client_secret[x]=y' }],
        ['__proto__ parameter', { method: 'POST', headers: { 'Content-Type': form }, body: '__proto__=x&constructor=y&grant_type=client_credentials&client_id=a&client_secret=b' }],
        ['Basic without base64', { method: 'POST', headers: { 'Content-Type': form, Authorization: 'Basic ***' }, body: 'grant_type=client_credentials' }],
        ['Basic empty', { method: 'POST', headers: { 'Content-Type': form, Authorization: 'Basic ' }, body: 'grant_type=client_credentials' }],
        ['Basic ":"', { method: 'POST', headers: { 'Content-Type': form, Authorization: basic(':') }, body: 'grant_type=client_credentials' }],
        ['Basic with binary', { method: 'POST', headers: { 'Content-Type': form, Authorization: basic('\u00ff\u0000:\u00fe') }, body: 'grant_type=client_credentials' }],
        ['Basic with bad percent-encoding', { method: 'POST', headers: { 'Content-Type': form, Authorization: basic('%zz:%') }, body: 'grant_type=client_credentials' }],
        ['Basic and form credentials', { method: 'POST', headers: { 'Content-Type': form, Authorization: basic('a:b') }, body: good }],
        ['Bearer instead of Basic', { method: 'POST', headers: { 'Content-Type': form, Authorization: `Bearer ${TEST_TOKEN}` }, body: 'grant_type=client_credentials' }],
        ['GET', { method: 'GET' }],
        ['PUT', { method: 'PUT', headers: { 'Content-Type': form }, body: good }],
      ];
      for (let i = 0; i < 40; i++) cases.push([`unknown client ${i}`, { method: 'POST', headers: { 'Content-Type': form }, body: `grant_type=client_credentials&client_id=nobody-${i}&client_secret=x` }]);
      for (let i = 0; i < 40; i++) cases.push([`wrong secret ${i}`, { method: 'POST', headers: { 'Content-Type': form, Authorization: basic(`bystander:wrong-${i}`) }, body: 'grant_type=client_credentials' }]);
      const wrong: string[] = [];
      for (const [label, init] of cases) {
        const res = await request(token, init);
        if (res.status >= 500) wrong.push(`${label}: ${res.status} ${res.text.slice(0, 200)}`);
        else if (res.status !== 404 && !/^application\/json/.test(res.headers.get('content-type') ?? '')) wrong.push(`${label}: ${res.status} without a JSON body`);
      }
      expect(wrong).to.deep.equal([]);
      // The good client was never throttled by its own id's failures beyond the window (a minute later it works).
      clock.advance(MINUTE);
      const r = await requestToken(base, { ...clients.bystander, via: 'basic' });
      expect(r.status, r.text).to.equal(200);
    });
  });

  describe('a brute-force run does not hold up other clients', function () {
    this.timeout(120_000);
    it('300 wrong secrets at once from one address: other clients keep fetching by key (all 200)', async () => {
      const attack = Promise.all(Array.from({ length: 300 }, (_, i) => requestToken(base, { id: clients.victim.id, secret: `x${i}`, via: 'form' })));
      const fetches: HttpResult[] = [];
      for (let i = 0; i < 30; i++) fetches.push(await request(`${base}/Property('${listingKey}')`, { token: TEST_TOKEN }));
      const attempts = await attack;
      expect(fetches.map((r) => r.status).every((s) => s === 200)).to.equal(true);
      expect(attempts.filter((r) => r.status === 429).length, 'throttled attempts').to.be.at.least(300 - DEFAULT_THROTTLE.perClient);
      expect(attempts.every((r) => r.status === 401 || r.status === 429)).to.equal(true);
    });
  });
});
