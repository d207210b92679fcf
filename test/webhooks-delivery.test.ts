/**
 * Webhook push (RCP-028) against a real HTTP receiver (support/webhook-receiver.ts): each subscription's
 * events go out in sequence order, in batches, as RESO Common Format with the consumer's bearer token and the
 * EntityEventSource header; the pushed events are exactly what the client's own `EntityEvent?$filter=
 * EntityEventSequence gt N` returns; the cursor is durable (a server stopped mid-batch delivers that batch
 * again after a restart, and nothing before it); two instances on one database deliver each batch once; a 429
 * waits its Retry-After; failures back off and pause the subscription after WEBHOOK_MAX_FAILURES until it is
 * resumed. The worker's turns are run by hand (runOnce) against a clock the test moves: nothing sleeps.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { Config } from '../src/config/config';
import type { RunningServer } from '../src/process/server';
import { subscriptions } from '../src/webhooks/webhooks';
import { ENTITY_EVENT_CONTEXT } from '../src/webhooks/post-batch';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer, TEST_TOKEN } from './support/http';
import { ManualClock } from './support/manual-clock';
import { pulled, writeListings } from './support/webhook-events';
import { WebhookReceiver } from './support/webhook-receiver';

const CONSUMER_TOKEN = 'consumer-token-for-the-tests-8f2d';
const BATCH = 5;
const WEBHOOKS: Config['webhooks'] = { batchSize: BATCH, maxFailures: 3, timeoutMs: 1000, pollMs: 1000 };
describeEachDatabase('Webhooks: delivery', (target) => {
  let db: TestDatabase;
  let receiver: WebhookReceiver;
  const clock = new ManualClock(Date.UTC(2026, 10, 1));
  const servers: RunningServer[] = [];

  const start = async (webhooks: Partial<Config['webhooks']> = {}, config: Partial<Config> = {}) => {
    const s = await startTestServer(serviceModel, db.instanceUrl(servers.length), { ...config, webhooks: { ...WEBHOOKS, ...webhooks } }, { clock, webhooks: { manual: true, random: () => 0.5 } });
    await s.service.prepare();
    servers.push(s);
    return s;
  };
  const subscribe = async (running: RunningServer, client = 'demo') => {
    const from = (await pulled(running, TEST_TOKEN)).at(-1)?.EntityEventSequence ?? 0;
    return (await subscriptions(running.service, undefined).add({ client, url: receiver.url, token: CONSUMER_TOKEN, source: 'IDX Feed 123', from })).id;
  };
  /** Worker turns until one delivers nothing. */
  const drain = async (running: RunningServer) => { while ((await running.webhooks!.runOnce()) > 0); };

  beforeEach(async () => {
    db = await target.create();
    receiver = await WebhookReceiver.start();
  });

  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    await receiver.close();
    await db.drop();
  });

  it('delivers the client\'s events in sequence order, in batches, with RCP-028\'s body, the consumer\'s token and EntityEventSource', async () => {
    const running = await start();
    const id = await subscribe(running);
    const before = (await pulled(running, TEST_TOKEN)).at(-1)?.EntityEventSequence ?? 0;
    await writeListings(running, 7);
    await writeListings(running, 6);
    await drain(running);
    const expected = await pulled(running, TEST_TOKEN, before);
    expect(expected.length).to.be.at.least(13);
    expect(receiver.acknowledged()).to.deep.equal(expected);
    for (const post of receiver.posts) {
      expect(post.headers.authorization).to.equal(`Bearer ${CONSUMER_TOKEN}`);
      expect(post.headers.entityeventsource).to.equal('IDX Feed 123');
      expect(post.headers['content-type']).to.match(/^application\/json/);
      expect(post.body['@reso.context']).to.equal(ENTITY_EVENT_CONTEXT);
      expect(post.body.value.length).to.be.within(1, BATCH);
    }
    const sequences = receiver.acknowledged().map((e) => Number(e.EntityEventSequence));
    expect(sequences).to.deep.equal([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).to.equal(sequences.length);
    const row = (await running.service.webhooks.get(id))!;
    expect(row).to.include({ cursor: sequences.at(-1), failures: 0, state: 'active', waiting_since: null });
    // Nothing new: a turn sends nothing (and claims nothing).
    expect(await running.webhooks!.runOnce()).to.equal(0);
    expect(receiver.posts).to.have.length(Math.ceil(expected.length / BATCH));
  });

  it('at least once across a restart: a batch in flight when the server stops is delivered again, nothing before it', async () => {
    let running = await start({ timeoutMs: 60_000 });
    const id = await subscribe(running);
    await writeListings(running, 3 * BATCH);
    let posted: () => void;
    const second = new Promise<void>((resolve) => { posted = resolve; });
    receiver.answer = () => (receiver.posts.length === 2 ? (posted(), { hang: true }) : {});
    const turn = running.webhooks!.runOnce();
    await second;
    const firstBatch = receiver.posts[0].body.value;
    const cursor = (await running.service.webhooks.get(id))!.cursor;
    expect(cursor).to.equal(firstBatch.at(-1).EntityEventSequence);
    const lost = receiver.posts[1].body.value;
    // Stopped with the second batch unanswered: the POST is given up (no failure counted) and the cursor stays.
    await running.close();
    await turn;
    servers.splice(servers.indexOf(running), 1);
    running = await start();
    receiver.answer = () => ({});
    expect((await running.service.webhooks.get(id))!).to.include({ cursor, failures: 0, lease_owner: null });
    await drain(running);
    // The batch that was not acknowledged comes again, first; the acknowledged one does not.
    expect(receiver.posts[2].body.value).to.deep.equal(lost);
    expect(receiver.acknowledged()).to.deep.equal(await pulled(running, TEST_TOKEN, firstBatch[0].EntityEventSequence - 1));
  });

  it('two instances on one database deliver each batch once, never two at a time, while writers add events', async () => {
    const [a, b] = [await start(), await start()];
    const id = await subscribe(a);
    const from = (await a.service.webhooks.get(id))!.cursor;
    receiver.answer = () => ({ delayMs: 15 });
    for (let round = 0; round < 8; round++) {
      await Promise.all([writeListings(round % 2 ? a : b, 1 + (round % 4) * 3), a.webhooks!.runOnce(), b.webhooks!.runOnce()]);
    }
    while ((await Promise.all([a.webhooks!.runOnce(), b.webhooks!.runOnce()])).some((n) => n > 0));
    expect(receiver.maxInFlight, 'POSTs of one subscription in flight at once').to.equal(1);
    const sequences = receiver.acknowledged().map((e) => e.EntityEventSequence);
    expect(new Set(sequences).size, 'each event once').to.equal(sequences.length);
    expect(receiver.acknowledged()).to.deep.equal(await pulled(a, TEST_TOKEN, from));
  });

  it('a 429 with Retry-After (seconds or a date) waits that long and counts as no failure', async () => {
    const running = await start();
    const id = await subscribe(running);
    await writeListings(running, 2);
    receiver.answer = () => ({ status: 429, headers: { 'Retry-After': '120' } });
    await running.webhooks!.runOnce();
    expect((await running.service.webhooks.get(id))!).to.include({ failures: 0, next_attempt: clock.now() + 120_000 });
    clock.advance(119_000);
    await running.webhooks!.runOnce();
    expect(receiver.posts).to.have.length(1);
    clock.advance(1000);
    const until = new Date(clock.now() + 30_000).toUTCString();
    receiver.answer = () => ({ status: 429, headers: { 'Retry-After': until } });
    await running.webhooks!.runOnce();
    expect(receiver.posts).to.have.length(2);
    expect((await running.service.webhooks.get(id))!.next_attempt).to.equal(clock.now() + 30_000);
    receiver.answer = () => ({});
    clock.advance(30_000);
    await drain(running);
    expect(receiver.acknowledged().length).to.be.at.least(2);
    expect((await running.service.webhooks.get(id))!).to.include({ failures: 0, last_error: null });
  });

  it('failures back off exponentially and pause the subscription after WEBHOOK_MAX_FAILURES; resume delivers again', async () => {
    const running = await start({ timeoutMs: 300 });
    const id = await subscribe(running);
    await writeListings(running, 2);
    const answers = [{ status: 500 }, { hang: true }, { status: 503 }];
    receiver.answer = () => answers[receiver.posts.length - 1] ?? {};
    const waits: number[] = [];
    for (let failure = 1; failure <= 3; failure++) {
      await running.webhooks!.runOnce();
      expect(receiver.posts, `attempt ${failure}`).to.have.length(failure);
      const row = (await running.service.webhooks.get(id))!;
      expect(row.failures).to.equal(failure);
      waits.push(row.next_attempt - clock.now());
      // Not before the backoff is over.
      clock.advance(row.next_attempt - clock.now() - 1);
      await running.webhooks!.runOnce();
      expect(receiver.posts).to.have.length(failure);
      clock.advance(1);
    }
    // random() is 0.5 here: three quarters of 1 s, 2 s, 4 s.
    expect(waits).to.deep.equal([750, 1500, 3000]);
    const listed = (await subscriptions(running.service, undefined).get(id))!;
    expect(listed).to.include({ state: 'paused', failures: 3 });
    expect(listed.lastError).to.match(/^HTTP 503 Service Unavailable; paused after 3 failures in a row \(reso-server webhooks resume wh-/);
    expect((await running.service.webhooks.get(id))!.last_error).to.equal(listed.lastError);
    clock.advance(3_600_000);
    await running.webhooks!.runOnce();
    expect(receiver.posts, 'paused: nothing sent').to.have.length(3);
    await subscriptions(running.service, undefined).resume(id);
    await drain(running);
    expect(receiver.posts.at(-1)!.status).to.equal(200);
    expect((await running.service.webhooks.get(id))!).to.include({ state: 'active', failures: 0, last_error: null });
  });

  it('a timeout counts as a failure, named in last_error', async () => {
    const running = await start({ timeoutMs: 200 });
    const id = await subscribe(running);
    await writeListings(running, 1);
    receiver.answer = () => ({ hang: true });
    await running.webhooks!.runOnce();
    expect((await running.service.webhooks.get(id))!).to.include({ failures: 1, last_error: 'no answer within 200 ms' });
  });

  it('a cursor the client\'s own query would refuse (its scope changed, retention passed it) pauses the subscription, saying why; resume --from goes on', async () => {
    const running = await start({}, { changeLogRetention: { days: 30, count: 4 } });
    await running.service.clients.register({ id: 'scoped', name: 'Scoped', scope: "MlsStatus eq 'Active'" });
    const token = await running.service.clients.issueToken('scoped', undefined);
    const id = await subscribe(running, 'scoped');
    await writeListings(running, 2);
    await drain(running);
    const cursor = (await running.service.webhooks.get(id))!.cursor;
    expect(cursor).to.be.greaterThan(0);
    await running.service.clients.setScope('scoped', "MlsStatus ne 'Closed'");
    await writeListings(running, 1);
    await running.webhooks!.runOnce();
    const refused = await get(`${running.url}/EntityEvent?$filter=EntityEventSequence gt ${cursor}`, { Authorization: `Bearer ${token}` });
    expect(refused.json.error.code).to.equal('ScopeChanged');
    const paused = (await subscriptions(running.service, undefined).get(id))!;
    expect(paused.state).to.equal('paused');
    expect(paused.lastError).to.equal(`${refused.json.error.message}; then: reso-server webhooks resume ${id} --from <that sequence>`);
    const posts = receiver.posts.length;
    // Retention passes the cursor meanwhile: resuming from it is refused the same way.
    await writeListings(running, 6);
    await running.service.changeLog!.prune(new Date(clock.now()));
    await subscriptions(running.service, undefined).resume(id);
    await running.webhooks!.runOnce();
    expect((await running.service.webhooks.get(id))!.last_error).to.match(/^events after EntityEventSequence \d+ are no longer all kept/);
    expect(receiver.posts).to.have.length(posts);
    const latest = (await get(`${running.url}/EntityEvent?$orderby=EntityEventSequence desc&$top=1`, { Authorization: `Bearer ${token}` })).json.value[0].EntityEventSequence;
    await subscriptions(running.service, undefined).resume(id, latest);
    await writeListings(running, 1);
    await drain(running);
    expect(receiver.posts.at(-1)!.body.value).to.deep.equal(await pulled(running, token, latest));
    expect((await running.service.webhooks.get(id))!).to.include({ state: 'active', failures: 0, last_error: null });
  });

  it('GET /admin/webhooks lists subscriptions with state, cursor, lag and failures, to admin clients only', async () => {
    const running = await start();
    const id = await subscribe(running);
    await writeListings(running, 3);
    const r = await get(running.url.replace(/\/odata$/, '/admin/webhooks'));
    expect(r.status).to.equal(200);
    const [s] = r.json.value;
    expect(s).to.include({ id, client: 'demo', state: 'active', failures: 0, token: '…8f2d' });
    expect(s.lag.events).to.equal((await pulled(running, TEST_TOKEN, s.cursor)).length).and.be.at.least(3);
    expect(r.text).not.to.include(CONSUMER_TOKEN);
    // For metrics: events behind, and how long the oldest has waited since a worker first found it.
    const lags = subscriptions(running.service, undefined);
    expect(await lags.lags()).to.deep.equal([{ id, client: 'demo', state: 'active', events: s.lag.events, oldestWaitingMs: undefined }]);
    receiver.answer = () => ({ status: 500 });
    await running.webhooks!.runOnce();
    clock.advance(5000);
    expect((await lags.lags())[0]).to.include({ events: s.lag.events, oldestWaitingMs: 5000 });
    await running.service.clients.register({ id: 'reader', name: 'Reader' });
    const token = await running.service.clients.issueToken('reader', undefined);
    const refused = await get(running.url.replace(/\/odata$/, '/admin/webhooks'), { Authorization: `Bearer ${token}` });
    expect(refused.status).to.equal(403);
    expect(refused.json.error.code).to.equal('AdminRequired');
  });
}, { cluster: true });
