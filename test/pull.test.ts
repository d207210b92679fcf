/**
 * Issue 41 §1, `reso-server pull`: the operator's upstreams managed by CLI (secrets never printed back, bad input
 * one line and its exit code), and an upstream reso-server replicated exactly while writers change, remove and
 * re-add listings and their related records, with the puller killed (SIGKILL) and restarted mid-run; a consumer
 * replicating from the pulling server ends exact too (two hops).
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { PullProgress } from '../src/storage/tables/pull-progress';
import type { RunningServer } from '../src/process/server';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer, TEST_TOKEN } from './support/http';
import { parsePrometheus, sample } from './support/prometheus';
import { runCli } from './support/licence-http';
import { until } from './support/poll';
import { addUpstream, upstreamToken, withoutServiceKept } from './support/pull-setup';
import { allDifferences, consumerSets, count, servedOverHttp, withoutDeleted } from './support/replication-compare';
import { ReplicationConsumer, SETS } from './support/replication-consumer';
import { RandomWriter, storedRecords } from './support/replication-writer';
import { ServerProcess, spawnServer } from './support/server-process';
import { seedDemoData } from '../src/demo/demo-data';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';

const BEARER = 'upstream-bearer-token-0123456789abcdef';
const CLIENT_SECRET = 'upstream-client-secret-0123456789abcdef';
const SEED = 20261207;
const OPERATIONS = Number(process.env.PULL_OPS ?? 300);

describeEachDatabase('reso-server pull: the operator\'s upstreams (issue 41 §1)', (target) => {
  let db: TestDatabase;
  const pull = (...args: string[]) => runCli(db.url, ['pull', ...args]);

  before(async () => { db = await target.create(); });
  after(async () => { await db?.drop(); });

  it('add takes a bearer token or OAuth2 client credentials; list and show never print a secret back', async () => {
    const bearer = await pull('add', 'feed', '--url', 'http://127.0.0.1:9/odata', '--token', BEARER, '--set', 'Property,Media', '--filter', "Property=OriginatingSystemName eq 'X'");
    expect(bearer.code, bearer.stderr).to.equal(0);
    const oauth = await pull('add', 'mls', '--url', 'https://mls.example/odata', '--token-url', 'https://mls.example/token', '--client-id', 'me',
      '--client-secret', CLIENT_SECRET, '--scope', 'api', '--set', 'Property:Property', '--page-size', '500', '--rate', '0.5');
    expect(oauth.code, oauth.stderr).to.equal(0);
    const outputs = [bearer, oauth, await pull('list'), await pull('list', '--json'), await pull('show', 'feed'), await pull('show', 'mls')];
    for (const r of outputs) expect(r.stdout + r.stderr).not.to.include(BEARER).and.not.to.include(CLIENT_SECRET);
    const [feed, mls] = JSON.parse(outputs[3].stdout) as Record<string, any>[];
    expect(feed).to.include({ name: 'feed', state: 'active', url: 'http://127.0.0.1:9/odata', pageSize: 1000, requestsPerSecond: 2, strategy: 'timestamp' });
    expect(feed.auth).to.deep.equal({ kind: 'bearer', token: `****${BEARER.slice(-4)}` });
    expect(feed.sets).to.deep.equal([{ upstream: 'Property', local: 'Property', filter: "OriginatingSystemName eq 'X'" }, { upstream: 'Media', local: 'Media' }]);
    expect(mls.auth).to.deep.equal({ kind: 'client-credentials', tokenUrl: 'https://mls.example/token', clientId: 'me', clientSecret: `****${CLIENT_SECRET.slice(-4)}`, scope: 'api' });
    expect(mls).to.include({ pageSize: 500, requestsPerSecond: 0.5 });
    expect(outputs[2].stdout).to.match(/^feed +active +- +0 +- +Property,Media +bearer/m);
  });

  it('a base URL carrying credentials or a key in its query is shown with them masked', async () => {
    const added = await pull('add', 'keyed', '--url', 'https://user:url-password-42@feed.example/odata?api_key=url-key-42', '--token', BEARER, '--set', 'Property');
    expect(added.code, added.stderr).to.equal(0);
    const outputs = [added, await pull('list'), await pull('list', '--json'), await pull('show', 'keyed')];
    for (const r of outputs) expect(r.stdout + r.stderr).not.to.include('url-password-42').and.not.to.include('url-key-42');
    expect(await pull('remove', 'keyed')).to.include({ code: 0 });
  });

  it('pause and resume change the state list shows; a paused upstream is not pulled (one line, exit 1); remove forgets it', async () => {
    expect((await pull('pause', 'feed')).stdout).to.equal('upstream feed paused\n');
    expect((await pull('list')).stdout).to.match(/^feed +paused /m);
    const run = await pull('run', 'feed');
    expect(run.code).to.equal(1);
    expect(run.stderr.trim().split('\n')).to.deep.equal(['reso-server: pull: upstream feed is paused; pull resume feed to go on']);
    expect((await pull('resume', 'feed')).stdout).to.equal('upstream feed active\n');
    expect((await pull('list')).stdout).to.match(/^feed +active /m);
    expect((await pull('remove', 'mls')).code).to.equal(0);
    expect(JSON.parse((await pull('list', '--json')).stdout).map((u: { name: string }) => u.name)).to.deep.equal(['feed']);
  });

  for (const [what, args, line] of [
    ['a set the local dictionary lacks', ['add', 'x', '--url', 'http://h/odata', '--set', 'Nope'], /^reso-server: pull: no local set Nope; sets: Property, /],
    ['a URL that is not http', ['add', 'x', '--url', 'ftp://h', '--set', 'Property'], /^reso-server: pull: --url "ftp:\/\/h" is not an http or https URL$/],
    ['a token and client credentials together', ['add', 'x', '--url', 'http://h/odata', '--set', 'Property', '--token', 't', '--client-id', 'c'], /not both$/],
    ['client credentials without their secret', ['add', 'x', '--url', 'http://h/odata', '--set', 'Property', '--token-url', 'http://h/t', '--client-id', 'c'], /need --token-url, --client-id and --client-secret$/],
    ['a name taken', ['add', 'feed', '--url', 'http://h/odata', '--set', 'Property'], /^reso-server: pull: an upstream named feed exists \(see pull list\)$/],
    ['an upstream that is not there', ['show', 'nothing'], /^reso-server: pull: no upstream named nothing \(see pull list\)$/],
    ['a rate of nothing', ['add', 'x', '--url', 'http://h/odata', '--set', 'Property', '--rate', '0'], /--rate/],
  ] as const) {
    it(`refuses ${what} in one line, exit code 2`, async () => {
      const r = await pull(...args);
      expect(r.code, r.stdout).to.equal(2);
      expect(r.stderr.trim().split('\n')).to.have.length(1);
      expect(r.stderr.trim()).to.match(line);
    });
  }
});

for (const strategy of ['timestamp', 'events'] as const) describeEachDatabase(`reso-server pull --strategy ${strategy}: another reso-server replicated exactly, two hops (issue 41 §1)`, (target) => {
  let upDb: TestDatabase;
  let downDb: TestDatabase;
  let upstream: RunningServer;
  let downstream: RunningServer;
  let token: string;
  const pullers: ServerProcess[] = [];

  before(async function () {
    this.timeout(180_000);
    [upDb, downDb] = [await target.create(), await target.create()];
    upstream = await startTestServer(serviceModel, upDb.url, { pageSize: 50, maxPageSize: 200 });
    await seedDemoData(upstream.service, { listings: 60 });
    token = await upstreamToken(upDb.url);
    downstream = await startTestServer(serviceModel, downDb.url, { pageSize: 50, maxPageSize: 200 });
  });
  after(async () => {
    for (const p of pullers) await p.kill();
    await upstream?.close();
    await downstream?.close();
    await upDb?.drop();
    await downDb?.drop();
  });

  const follow = async () => {
    const p = await spawnServer(downDb.url, {}, /pull up: following/, // By events, removals come from the log alone; by timestamp, from reconciliation every pass.
      ['pull', 'run', 'up', '--follow', '--interval', '0.2', '--reconcile-every', strategy === 'events' ? '3600' : '0', '--lease-seconds', '10']);
    pullers.push(p);
    return p;
  };
  const served = async (server: RunningServer) => servedOverHttp(server.url, { Authorization: `Bearer ${TEST_TOKEN}` }, 200);
  const metrics = async () => parsePrometheus((await get(`${downstream.url.replace(/\/odata$/, '')}/metrics`)).text);
  const pulledDifferences = async () => allDifferences(withoutServiceKept(await served(downstream)), withoutServiceKept(await served(upstream)));

  it('a refused credential stops the upstream: one line, exit 1, state stopped, not retried', async function () {
    this.timeout(60_000);
    await addUpstream(downDb.url, 'refused', upstream, 'not-a-token-of-the-upstream', ['--set', 'Property']);
    const r = await runCli(downDb.url, ['pull', 'run', 'refused']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^reso-server: pull: upstream refused refused the credentials; stopped$/m);
    expect(r.stderr.trim().split('\n'), 'the log line and the exit line, once each').to.have.length(2);
    const [row] = JSON.parse((await runCli(downDb.url, ['pull', 'list', '--json'])).stdout);
    expect(row).to.include({ name: 'refused', state: 'stopped' });
    expect(row.lastError).to.match(/^credentials-refused: /);
    expect(sample(await metrics(), 'reso_pull_upstream_errors', { upstream: 'refused', kind: 'credentials-refused' }), 'metrics: one fault, not retried').to.equal(1);
    expect((await runCli(downDb.url, ['pull', 'remove', 'refused'])).code).to.equal(0);
  });

  it('one pass copies every set exactly, keeps each record\'s upstream timestamp, and a second pass writes nothing', async function () {
    this.timeout(120_000);
    await addUpstream(downDb.url, 'up', upstream, token, ['--set', SETS.join(','), '--page-size', '100', '--rate', '1000', '--overlap-seconds', '0', '--strategy', strategy]);
    const first = await runCli(downDb.url, ['pull', 'run', 'up'], 120_000);
    expect(first.code, first.stderr).to.equal(0);
    expect(await pulledDifferences()).to.deep.equal([]);
    const again = await runCli(downDb.url, ['pull', 'run', 'up'], 120_000);
    expect(again.stdout).to.match(/^pull up: 0 record\(s\) written, 0 removed$/m);
    const written = Number(/(\d+) record\(s\) written/.exec(first.stdout)?.[1]);
    const scraped = await metrics();
    expect(sample(scraped, 'reso_pull_records_written', { upstream: 'up' }), 'metrics: records written').to.equal(written).and.to.be.greaterThan(0);
    expect(sample(scraped, 'reso_pull_lag_seconds', { upstream: 'up', state: 'active' }), 'metrics: caught up moments ago').to.be.within(0, 60);
    const progress = new PullProgress(downstream.service.db);
    const strategies = (await progress.checkpoints('up')).map((c) => c.strategy);
    expect(strategies.includes('events'), 'the event log followed').to.equal(strategy === 'events');
    for (const r of (await served(upstream)).Media.values()) {
      expect(await progress.upstreamTimestamp('Media', JSON.stringify(r.MediaKey))).to.deep.equal({ upstream: 'up', timestamp: r.ModificationTimestamp });
    }
  });

  it('while writers change, remove and re-add records upstream, and the puller is killed and restarted, the copy and a consumer of it end exact', async function () {
    this.timeout(600_000);
    const consumer = new ReplicationConsumer(downstream.url, { headers: { Authorization: `Bearer ${TEST_TOKEN}` } });
    await consumer.initialPull();
    let puller = await follow();
    const writers = [await RandomWriter.create(upstream.service, SEED), await RandomWriter.create(upstream.service, SEED + 1)];
    let kills = 0;
    let writing = true;
    const pace = async () => {
      await consumer.nextRead();
      // Half way, the puller dies the hard way and another takes over once its lease has expired.
      if (kills === 0 && writers.every((w) => w.stats.operations >= OPERATIONS / 2)) {
        kills++;
        await puller.kill();
        puller = await follow();
      }
    };
    const consuming = (async () => {
      let round = 0;
      while (writing) {
        await consumer.incrementalPull();
        if (++round % 3 === 0) await consumer.removedRecordsCheck();
      }
    })();
    const stats = await Promise.all(writers.map((w) => w.run({ operations: OPERATIONS, maxBatch: 30, pace }))).finally(() => { writing = false; });
    await consuming;
    expect(kills).to.equal(1);
    for (const s of stats) expect(s.deleted, 'the writers removed records').to.be.greaterThan(0);
    let left: string[] = [];
    // While the puller still writes, a walk of the pulling server may meet a record twice: not yet, as a difference is.
    const caughtUp = async () => (left = await pulledDifferences().catch((e: Error) => [e.message])).length === 0;
    await until(() => `the pulled copy still differs: ${left.join('; ')}`, caughtUp, 120_000, 500)
      .catch(async (e: Error) => { throw new Error(`${e.message}\npuller output:\n${puller.output().slice(-3000)}`); });
    expect(puller.output(), 'the second puller waited for the dead one\'s lease').to.match(/waiting for its lease/);
    // Removals found by the upstream's digest (a reso-server declares one), ranges compared with the provenance.
    if (strategy === 'timestamp') expect(puller.output()).to.match(/Media: reconciled by digest in \d+ request\(s\): [1-9]\d* gone/);
    await puller.stop();
    expect(puller.child.exitCode, puller.output()).to.equal(0);
    await consumer.incrementalPull();
    await consumer.removedRecordsCheck();
    const expected = withoutDeleted(await served(downstream));
    console.log(`      two hops: compared ${count(expected)}; ${consumer.stats.requests} consumer requests`);
    expect(allDifferences(consumerSets(consumer), expected)).to.deep.equal([]);
  });
});

describeEachDatabase('reso-server pull: records sharing one timestamp across a page boundary, the puller killed between them (issue 41 §1)', (target) => {
  let upDb: TestDatabase;
  let downDb: TestDatabase;
  let upstream: RunningServer;
  let downstream: RunningServer;
  const TIED = 40;

  before(async function () {
    this.timeout(120_000);
    [upDb, downDb] = [await target.create(), await target.create()];
    upstream = await startTestServer(serviceModel, upDb.url);
    await seedDemoData(upstream.service, { listings: 1 });
    // One ingest batch: one transaction, one ModificationTimestamp for all of them.
    const template = (await storedRecords(upstream.service, 'Media'))[0];
    const report = emptyReport();
    await ingestBatch(upstream.service, 'Media', Array.from({ length: TIED }, (_, i) => ({ line: i + 1, input: { ...template, MediaKey: `TIE-${String(i).padStart(3, '0')}` } })), report);
    expect(report.created).to.equal(TIED);
    downstream = await startTestServer(serviceModel, downDb.url);
    await addUpstream(downDb.url, 'ties', upstream, await upstreamToken(upDb.url), ['--set', 'Media', '--page-size', '10', '--rate', '4', '--overlap-seconds', '0', '--strategy', 'timestamp']);
  });
  after(async () => {
    await upstream?.close();
    await downstream?.close();
    await upDb?.drop();
    await downDb?.drop();
  });

  it('a puller killed after the first page of a tie resumes at the tie\'s timestamp, not past it: every record arrives, each once', async function () {
    this.timeout(120_000);
    const upstreamMedia = (await storedRecords(upstream.service, 'Media')).length;
    const progress = new PullProgress(downstream.service.db);
    const pulled = async () => (await progress.keys('ties', 'Media', undefined, 10_000)).length;
    const before = upstreamMedia - TIED;
    const puller = await spawnServer(downDb.url, {}, /pull ties: one pass/, ['pull', 'run', 'ties', '--lease-seconds', '2']);
    // Paced at 4 requests a second, the walk is caught between two pages of the tie.
    await until('the first page of the tie written', async () => (await pulled()) > before, 60_000, 20);
    await puller.kill();
    const cut = await pulled();
    expect(cut, 'killed inside the tie').to.be.greaterThan(before).and.lessThan(upstreamMedia);
    const checkpoint = await progress.checkpoint('ties', 'Media', 'timestamp');
    const tieStamp = (await storedRecords(upstream.service, 'Media')).find((r) => r.MediaKey === 'TIE-000')!.ModificationTimestamp;
    expect(checkpoint, 'the checkpoint is the tie\'s timestamp').to.equal(tieStamp);
    const rest = await runCli(downDb.url, ['pull', 'run', 'ties'], 60_000);
    expect(rest.code, rest.stderr).to.equal(0);
    expect(await pulled()).to.equal(upstreamMedia);
    const written = Number(/(\d+) record\(s\) written/.exec(rest.stdout)?.[1]);
    expect(written, 'the records read again were found unchanged').to.equal(upstreamMedia - cut);
  });
});
