/**
 * EntityEvent's limits (RESO RCP-027 and this service's retention): old events are pruned in bounded batches,
 * the oldest kept is what `$orderby=EntityEventSequence&$top=1` answers, and a mark older than that answers
 * 400 EventSequenceExpired; a mark from before the client's scope changed answers 400 ScopeChanged; reading
 * the log is billed like any query (class B a page, A a key fetch).
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { ChangeLogRetention } from '../src/storage/records/change-log-retention';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';
import type { Rec } from './support/replication-paging';
import { storedRecords } from './support/replication-writer';

const CLIENT_TOKEN = 'events-retention-token';
const DAY_MS = 86_400_000;

describeEachDatabase('EntityEvent retention, scope epochs and metering', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let template: Rec;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { changeLogRetention: { days: 30, count: 1_000_000 }, changeLogPruneMs: 86_400_000 });
    await seedDemoData(server.service, { listings: 2 });
    template = (await storedRecords(server.service, 'Property')).find((r) => r.MlsStatus === 'Active')!;
    const { client } = await server.service.clients.add({ id: 'events-retention', name: 'Retention', scope: "MlsStatus ne 'Withdrawn'" });
    await server.service.clients.issueToken(client.id, undefined, CLIENT_TOKEN);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  const asClient = (path: string) => get(`${server.url}/${path}`, { Authorization: `Bearer ${CLIENT_TOKEN}` });
  const since = (n: number) => `EntityEvent?$filter=${encodeURIComponent(`EntityEventSequence gt ${n}`)}`;
  async function ingestListings(prefix: string, n: number): Promise<void> {
    const report = emptyReport();
    const items = Array.from({ length: n }, (_, i) => ({ line: i + 1, input: { ...template, ListingKey: `${prefix}${i}`, ListingId: `${prefix}${i}` } }));
    await ingestBatch(server.service, 'Property', items, report);
    expect(report.errors).to.deep.equal([]);
  }
  async function bounds(): Promise<[number, number]> {
    const first = await get(`${server.url}/EntityEvent?$orderby=EntityEventSequence&$top=1`);
    const last = await get(`${server.url}/EntityEvent?$orderby=EntityEventSequence desc&$top=1`);
    return [first.json.value[0].EntityEventSequence, last.json.value[0].EntityEventSequence];
  }

  it('pruning by count goes in bounded batches, keeps the newest, and older marks answer 400 EventSequenceExpired', async () => {
    await ingestListings('RC', 30);
    const [, newest] = await bounds();
    const retention = new ChangeLogRetention(server.service.db, server.service.changeLog!.log, { count: 10 });
    expect(await retention.pruneBatch(new Date(), 7)).to.equal(7);
    const [afterOne] = await bounds();
    await retention.prune(new Date(), 7);
    const [oldest, newestNow] = await bounds();
    expect([oldest, newestNow]).to.deep.equal([newest - 9, newest]);
    expect(afterOne).to.be.lessThan(oldest);
    const refused = await asClient(since(oldest - 2));
    expect([refused.status, refused.json.error.code, refused.json.error.target]).to.deep.equal([400, 'EventSequenceExpired', '$filter']);
    expect(refused.json.error.message).to.include(`the oldest kept is ${oldest}`);
    expect((await asClient(`EntityEvent?$filter=${encodeURIComponent(`EntityEventSequence ge ${oldest - 1}`)}`)).status).to.equal(400);
    const fine = await asClient(since(oldest - 1));
    expect(fine.status, fine.text).to.equal(200);
    expect(fine.json.value[0].EntityEventSequence).to.equal(oldest);
  });

  it('pruning by age keeps what was committed within the window, and never the newest', async () => {
    await ingestListings('RA', 3);
    const [, newest] = await bounds();
    expect(await server.service.changeLog!.prune(new Date())).to.equal(0);
    expect(await server.service.changeLog!.prune(new Date(Date.now() + 31 * DAY_MS))).to.be.greaterThan(0);
    expect(await bounds()).to.deep.equal([newest, newest]);
    expect((await asClient(since(newest - 1))).status).to.equal(200);
  });

  it('a mark at an event from before the client\'s scope changed answers 400 ScopeChanged; one after, 200', async () => {
    await ingestListings('RS', 2);
    const [, mark] = await bounds();
    expect((await asClient(since(mark))).status).to.equal(200);
    await server.service.clients.setScope('events-retention', "MlsStatus ne 'Pending'");
    const refused = await asClient(since(mark));
    expect([refused.status, refused.json.error.code]).to.deep.equal([400, 'ScopeChanged']);
    expect(refused.json.error.message).to.include('walk every resource again');
    await ingestListings('RT', 1);
    const [, after] = await bounds();
    expect((await asClient(since(after))).status).to.equal(200);
    expect((await get(`${server.url}/${since(mark)}`)).status, 'another client is not affected').to.equal(200);
  });

  it('each page of EntityEvent is one class B transaction, a key fetch class A', async () => {
    const usage = async () => {
      const rows = await server.service.db.all('SELECT `class`, `count` FROM `reso_usage` WHERE `client_id` = ?', ['events-retention']);
      const c = { A: 0, B: 0 } as Record<string, number>;
      for (const r of rows) c[r.class as string] += Number(r.count);
      return c;
    };
    const [, mark] = await bounds();
    await ingestListings('RM', 3);
    const [, newest] = await bounds();
    await server.service.meter.flush();
    const before = await usage();
    const first = await get(`${server.url}/${since(mark)}`, { Authorization: `Bearer ${CLIENT_TOKEN}`, Prefer: 'odata.maxpagesize=2' });
    expect(first.json['@odata.nextLink'], first.text).to.be.a('string');
    const second = await get(first.json['@odata.nextLink'], { Authorization: `Bearer ${CLIENT_TOKEN}` });
    expect(second.json['@odata.nextLink']).to.equal(undefined);
    expect((await asClient(`EntityEvent(${newest})`)).status).to.equal(200);
    await server.service.meter.flush();
    const after = await usage();
    expect([after.A - before.A, after.B - before.B]).to.deep.equal([1, 2]);
  });
});
