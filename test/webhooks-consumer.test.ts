/**
 * What a webhook consumer can rely on. Hidden means hidden: a client is never pushed an event its own
 * EntityEvent query would not show (a listing outside its scope, a history record naming a field hidden from
 * it), while an admin's subscription gets them. And replication by push alone is exact: a consumer driven
 * only by pushed events (each event: fetch the record by key with its client's token; 200 upserts, 404
 * deletes) ends with exactly what its client is served, against two concurrent writers (support/replication-
 * writer.ts) moving listings in and out of the feed scope and of a client's scope.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { Config } from '../src/config/config';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import type { RunningServer } from '../src/process/server';
import { subscriptions } from '../src/webhooks/webhooks';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer, TEST_TOKEN } from './support/http';
import { ManualClock } from './support/manual-clock';
import { keyOf, SETS } from './support/replication-consumer';
import { odataString, Rec, walkPages } from './support/replication-paging';
import { RandomWriter } from './support/replication-writer';
import { WebhookReceiver } from './support/webhook-receiver';
import { pulled, writeListings } from './support/webhook-events';

const WEBHOOKS: Config['webhooks'] = { batchSize: 25, maxFailures: 3, timeoutMs: 5000, pollMs: 1000 };
const SCOPED_TOKEN = 'webhook-scoped-client-token';
/** Writer operations per writer (WEBHOOK_REPLICATION_OPS). */
const OPERATIONS = Number(process.env.WEBHOOK_REPLICATION_OPS ?? 60);

/** Replicates by pushed events only: each event's record is fetched by key; 200 upserts, 404 deletes. */
class PushConsumer {
  readonly records = new Map<string, Map<string, Rec>>();
  /** Events whose record answered 404: the record left the client's view, and the consumer dropped it. */
  dropped = 0;
  private done = 0;

  constructor(private readonly serviceRoot: string, private readonly token: string, private readonly receiver: WebhookReceiver, private readonly path: string) {}

  /** Takes the events acknowledged since the last call, in order (the queue RCP-028 advises consumers to keep). */
  async catchUp(): Promise<void> {
    const events = this.receiver.posts.filter((p) => p.path === this.path && p.status === 200).flatMap((p) => p.body.value);
    for (const e of events.slice(this.done)) await this.apply(e.ResourceName, e.ResourceRecordKey);
    this.done = events.length;
  }

  private async apply(set: string, key: string): Promise<void> {
    const r = await get(`${this.serviceRoot}/${set}(${odataString(key)})`, { Authorization: `Bearer ${this.token}` });
    const records = this.records.get(set) ?? this.records.set(set, new Map()).get(set)!;
    if (r.status === 200) records.set(key, stripContext(r.json));
    else if (r.status === 404) {
      records.delete(key);
      this.dropped++;
    }
    else throw new Error(`fetching ${set}('${key}') answered ${r.status}: ${r.text.slice(0, 200)}`);
  }
}

const stripContext = (r: Rec) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('@')));

async function served(running: RunningServer, token: string, set: string): Promise<Map<string, Rec>> {
  const walk = await walkPages(`${running.url}/${set}`, { headers: { Authorization: `Bearer ${token}`, Prefer: 'odata.maxpagesize=1000' } });
  return new Map(walk.records.map((r) => [String(r[keyOf(set as never)]), r]));
}

describeEachDatabase('Webhooks: what consumers are pushed', (target) => {
  let db: TestDatabase;
  let receiver: WebhookReceiver;
  let running: RunningServer;
  let second: RunningServer | undefined;
  const clock = new ManualClock(Date.UTC(2026, 10, 1));

  const subscribe = async (client: string, token: string, path: string) => {
    const from = (await pulled(running, token)).at(-1)?.EntityEventSequence ?? 0;
    await subscriptions(running.service, undefined).add({ client, url: `${receiver.url}/${path}`, token: 'consumer', from });
    return from;
  };
  const drain = async () => { while ((await running.webhooks!.runOnce()) > 0); };
  const eventsAt = (path: string) => receiver.posts.filter((p) => p.path === `/hooks/${path}` && p.status === 200).flatMap((p) => p.body.value);

  async function startWith(overrides: Partial<Config>, scope: string, hide: string[] = []) {
    db = await target.create();
    receiver = await WebhookReceiver.start();
    running = await startTestServer(serviceModel, db.url, { webhooks: WEBHOOKS, ...overrides }, { clock, webhooks: { manual: true, random: () => 0.5 } });
    await running.service.prepare();
    await running.service.clients.register({ id: 'scoped', name: 'Scoped', scope, hiddenFields: hide });
    await running.service.clients.issueToken('scoped', undefined, SCOPED_TOKEN);
  }

  afterEach(async () => {
    await second?.close();
    second = undefined;
    await running?.close();
    await receiver?.close();
    await db?.drop();
  });

  it('a client is pushed only the events its own query shows: no listing outside its scope, no record naming a hidden field', async () => {
    await startWith({}, "MlsStatus eq 'Active'", ['ListPrice']);
    const fromScoped = await subscribe('scoped', SCOPED_TOKEN, 'scoped');
    const fromDemo = await subscribe('demo', TEST_TOKEN, 'demo');
    const [active] = await writeListings(running, 1);
    const [pending] = await writeListings(running, 1, 'Pending');
    await writeListings(running, 1, 'Pending').then(() => undefined);
    const history = (field: string, key: string) => ({ HistoryTransactionalKey: key, ResourceName: 'Property', ResourceRecordKey: active, FieldName: field, PreviousValue: '1', NewValue: '2' });
    const report = emptyReport();
    await ingestBatch(running.service, 'HistoryTransactional', [{ line: 1, input: history('ListPrice', 'H-PRICE') }, { line: 2, input: history('MlsStatus', 'H-STATUS') }], report);
    expect(report.errors).to.deep.equal([]);
    await drain();
    const scoped = eventsAt('scoped');
    expect(scoped).to.deep.equal(await pulled(running, SCOPED_TOKEN, fromScoped));
    const named = scoped.map((e) => `${e.ResourceName}:${e.ResourceRecordKey}`);
    expect(named).to.include(`Property:${active}`).and.include('HistoryTransactional:H-STATUS');
    expect(named).not.to.include(`Property:${pending}`);
    expect(named).not.to.include('HistoryTransactional:H-PRICE');
    const all = eventsAt('demo').map((e) => `${e.ResourceName}:${e.ResourceRecordKey}`);
    expect(all).to.include(`Property:${pending}`).and.include('HistoryTransactional:H-PRICE');
    expect(eventsAt('demo')).to.deep.equal(await pulled(running, TEST_TOKEN, fromDemo));
  });

  it('a consumer driven only by pushed events ends exact against two concurrent writers, for every resource', async function () {
    this.timeout(300_000);
    const t0 = Date.now();
    const clientScope = "MlsStatus ne 'Pending' and MlsStatus ne 'Hold'";
    await startWith({ seedListings: 40, feedScope: "MlsStatus ne 'Withdrawn'" }, clientScope);
    const consumers = [new PushConsumer(running.url, TEST_TOKEN, receiver, '/hooks/demo'), new PushConsumer(running.url, SCOPED_TOKEN, receiver, '/hooks/scoped')];
    await subscribe('demo', TEST_TOKEN, 'demo');
    await subscribe('scoped', SCOPED_TOKEN, 'scoped');
    // The consumers start from a walk of each set, taken after their subscriptions' starting points.
    for (const [i, token] of [TEST_TOKEN, SCOPED_TOKEN].entries()) {
      for (const set of SETS) consumers[i].records.set(set, await served(running, token, set));
    }
    // On a database server of its own, the second writer writes through a second instance (on a cluster: another node).
    second = target.label === 'SQLite' ? undefined : await startTestServer(serviceModel, db.instanceUrl(1), { webhooks: WEBHOOKS }, { clock, webhooks: { manual: true } });
    const writers = [await RandomWriter.create(running.service, 11), await RandomWriter.create((second ?? running).service, 12)];
    const pace = async () => {
      await running.webhooks!.runOnce();
      for (const c of consumers) await c.catchUp();
    };
    await Promise.all(writers.map((w) => w.run({ operations: OPERATIONS, maxBatch: 12, pace })));
    await drain();
    for (const c of consumers) await c.catchUp();
    console.log(`      ${Date.now() - t0} ms; events pushed ${receiver.acknowledged().length}; dropped on 404: ${consumers.map((c) => c.dropped)}`);
    // Listings left the feed scope and the client's scope during the run: the consumers saw that as 404s.
    for (const c of consumers) expect(c.dropped).to.be.greaterThan(0);
    for (const [i, token] of [TEST_TOKEN, SCOPED_TOKEN].entries()) {
      for (const set of SETS) {
        const expected = await served(running, token, set);
        const got = consumers[i].records.get(set) ?? new Map();
        const missing = [...expected.keys()].filter((k) => !got.has(k));
        const extra = [...got.keys()].filter((k) => !expected.has(k));
        const stale = [...expected.keys()].filter((k) => got.has(k) && JSON.stringify(got.get(k)) !== JSON.stringify(expected.get(k)));
        expect({ missing, extra, stale }, `${i ? 'scoped' : 'demo'} ${set}`).to.deep.equal({ missing: [], extra: [], stale: [] });
      }
    }
  });
}, { cluster: true });
