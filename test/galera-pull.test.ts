/**
 * Issue 41 §1 on a real 3-node Galera cluster (support/galera.ts, GALERA=1): two `reso-server pull run --follow`
 * processes for one upstream, through nodes 1 and 2. The lease in the upstream's row lets exactly one pull at a
 * time while writers change the upstream; the active one killed (SIGKILL), the other takes over once its lease
 * has expired, and the copy still ends exact.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { seedDemoData } from '../src/demo/demo-data';
import type { RunningServer } from '../src/process/server';
import { PullTable } from '../src/storage/tables/pull-table';
import { sqliteTarget, TestDatabase } from './support/databases';
import { CLUSTER_TIMEOUTS, GALERA, galeraCluster, galeraDatabase } from './support/galera';
import { startTestServer, TEST_TOKEN } from './support/http';
import { until } from './support/poll';
import { addUpstream, upstreamToken, withoutServiceKept } from './support/pull-setup';
import { allDifferences, servedOverHttp } from './support/replication-compare';
import { SETS } from './support/replication-consumer';
import { RandomWriter } from './support/replication-writer';
import { ServerProcess, spawnServer } from './support/server-process';

const LEASE_SECONDS = 5;
const OPERATIONS = Number(process.env.PULL_OPS ?? 200);
const SEED = 20261241;
/** Beyond the lease: the waiting puller's next look (it looks as the lease expires) and a commit on the cluster. */
const TAKEOVER_SLACK_MS = 3000;

(GALERA ? describe : describe.skip)('reso-server pull: two pullers on the Galera cluster, one active (issue 41 §1)', function () {
  this.timeout(600_000);
  let upDb: TestDatabase;
  let downDb: Awaited<ReturnType<typeof galeraDatabase>>;
  let upstream: RunningServer;
  let reader: RunningServer;
  const pullers: ServerProcess[] = [];

  before(async () => {
    upDb = await sqliteTarget.create();
    upstream = await startTestServer(serviceModel, upDb.url, { pageSize: 50, maxPageSize: 200 });
    await seedDemoData(upstream.service, { listings: 60 });
    downDb = await galeraDatabase(await galeraCluster());
    // Node 3 serves the copy, and is where the lease is watched from.
    reader = await startTestServer(serviceModel, downDb.urls[2], { pageSize: 50, maxPageSize: 200, databaseTimeouts: CLUSTER_TIMEOUTS });
    await addUpstream(downDb.urls[0], 'up', upstream, await upstreamToken(upDb.url),
      ['--set', SETS.join(','), '--page-size', '100', '--rate', '1000', '--overlap-seconds', '0']);
  });
  after(async () => {
    for (const p of pullers) await p.kill();
    await reader?.close();
    await upstream?.close();
    await upDb?.drop();
    await downDb?.drop();
  });

  const follow = async (node: number) => {
    const p = await spawnServer(downDb.urls[node - 1], {}, /pull up: following, as puller .+\n/,
      ['pull', 'run', 'up', '--follow', '--interval', '0.2', '--reconcile-every', '0', '--lease-seconds', String(LEASE_SECONDS)]);
    pullers.push(p);
    return { process: p, owner: /as puller (.+)\n/.exec(p.output())![1] };
  };
  const served = (server: RunningServer) => servedOverHttp(server.url, { Authorization: `Bearer ${TEST_TOKEN}` }, 200);
  const differences = async () => allDifferences(withoutServiceKept(await served(reader)), withoutServiceKept(await served(upstream)));

  it('exactly one pulls at a time; the active one killed, the other takes over within the lease, and the copy ends exact', async () => {
    const lease = new PullTable(reader.service.db);
    /** Each holder of the lease seen from node 3, in order (null: free; a holder seen again is not repeated). */
    const holders: (string | null)[] = [];
    const look = async () => {
      const row = await lease.get('up');
      const holder = row?.lease_owner ?? null;
      if (holders[holders.length - 1] !== holder) holders.push(holder);
      return holder;
    };
    const first = await follow(1);
    await until('the first puller holds the lease', async () => (await look()) === first.owner, 30_000);
    const second = await follow(2);
    await second.process.waitFor(new RegExp(`pull up: upstream up is pulled by ${escape(first.owner)}; waiting for its lease`));

    const writers = [await RandomWriter.create(upstream.service, SEED), await RandomWriter.create(upstream.service, SEED + 1)];
    let killedAt: number | undefined;
    let writtenAtKill = 0;
    let tookOverMs: number | undefined;
    const pace = async () => {
      const holder = await look();
      if (killedAt !== undefined && tookOverMs === undefined && holder === second.owner) tookOverMs = Date.now() - killedAt;
      // Half way, the active puller dies the hard way; its lease is left to expire.
      if (killedAt === undefined && writers.every((w) => w.stats.operations >= OPERATIONS / 2)) {
        await until('the first puller has written records', async () => Number((await lease.get('up'))?.records_pulled) > 0, 60_000);
        const waited = second.process.output().trim().split('\n');
        expect(waited.filter((l) => !/following, as puller|waiting for its lease/.test(l)), 'the second puller only waited while the first pulled').to.deep.equal([]);
        await first.process.kill();
        killedAt = Date.now();
        writtenAtKill = Number((await lease.get('up'))?.records_pulled);
      }
    };
    const stats = await Promise.all(writers.map((w) => w.run({ operations: OPERATIONS, maxBatch: 30, pace })));
    for (const s of stats) expect(s.deleted, 'the writers removed records').to.be.greaterThan(0);
    expect(killedAt, 'the active puller was killed').to.be.a('number');
    await until('the second puller holds the lease', async () => (await look()) === second.owner, LEASE_SECONDS * 1000 + TAKEOVER_SLACK_MS);
    tookOverMs ??= Date.now() - killedAt!;
    expect(tookOverMs, 'taken over within the lease').to.be.at.most(LEASE_SECONDS * 1000 + TAKEOVER_SLACK_MS);

    let left: string[] = [];
    const exact = async () => { await look(); return (left = await differences().catch((e: Error) => [e.message])).length === 0; };
    await until(() => `the pulled copy still differs: ${left.join('; ')}`, exact, 180_000, 500)
      .catch((e: Error) => { throw new Error(`${e.message}\nsecond puller:\n${second.process.output().slice(-3000)}`); });
    expect(Number((await lease.get('up'))?.records_pulled), 'the second puller wrote the changes made after the kill').to.be.greaterThan(writtenAtKill);
    expect(holders, 'the lease free, then held by the first puller, then by the second, by no one else').to.deep.equal([null, first.owner, second.owner]);
    console.log(`      taken over ${(tookOverMs / 1000).toFixed(1)} s after the kill (lease ${LEASE_SECONDS} s)`);
    expect(first.process.output(), 'the active puller never waited').not.to.match(/waiting for its lease/);
    await second.process.stop();
    expect(second.process.child.exitCode, second.process.output()).to.equal(0);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
