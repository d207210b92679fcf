/**
 * docs/scaling-out.md "Scaling out": a MariaDB primary with asynchronous read replicas (DATABASE_REPLICA_URLS). Reads go to a
 * replica once it has applied what the primary had committed when the read began; a replica that lags past
 * REPLICA_WAIT_MS leaves the read to the primary, so no read ever sees an older state than the primary's. Real
 * servers (support/replica-pair.ts), when GALERA=1 (the tests that start database servers of their own).
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import type { ReplicatedDatabase } from '../src/storage/db/replicated-database';
import { GALERA } from './support/galera';
import { get, startTestServer } from './support/http';
import { until } from './support/poll';
import { ReplicaPair } from './support/replica-pair';
import { allDifferences, servedOverHttp, withoutDeleted } from './support/replication-compare';
import { ReplicationConsumer } from './support/replication-consumer';
import { HEADERS } from './support/live-database';
import { RandomWriter } from './support/replication-writer';

(GALERA ? describe : describe.skip)('Read replicas: reads as fresh as the primary\'s (MariaDB, GTID)', function () {
  this.timeout(300_000);
  let pair: ReplicaPair;
  let db: Awaited<ReturnType<ReplicaPair['database']>>;
  let server: RunningServer;
  const counts = () => (server.service.db as ReplicatedDatabase).replicaCounts();

  before(async () => {
    pair = await ReplicaPair.start();
    db = await pair.database();
    server = await startTestServer(serviceModel, db.primary, { topology: { replicas: { urls: [db.replica], waitMs: 500 } } });
    await seedDemoData(server.service, { listings: 30 });
  });
  after(async () => {
    await server?.close();
    await db?.drop();
    await pair?.stop();
  });

  it('a caught-up replica answers the reads; the primary takes every write', async () => {
    // Seeding may have left the replica behind for a moment, and then passed over for a few seconds: poll, bounded.
    let before = counts();
    await until('a read answered by the replica, not the primary', async () => {
      expect((await get(`${server.url}/Property?$top=5`)).status).to.equal(200);
      const byReplica = counts().byPrimary === before.byPrimary;
      if (!byReplica) before = counts();
      return byReplica;
    }, 15_000, 250);
    expect(counts().byReplica).to.be.greaterThan(before.byReplica);
    const [{ n }] = await pair.query(pair.replicaPort, `SELECT COUNT(*) AS n FROM \`${db.replica.split('/').pop()}\`.Property`) as { n: number }[];
    expect(Number(n)).to.equal(30);
  });

  it('a replica that stopped applying never serves an older state: the read waits, then the primary answers it', async () => {
    await pair.applying(false);
    try {
      const [first] = (await get(`${server.url}/Property?$top=1`)).json.value;
      await server.service.writer.transaction(async (tx) => {
        const store = server.service.store('Property');
        const now = await tx.modificationTime();
        await tx.upsert('Property', [store.encode({ ...first, ListingKey: 'REPLICA-NEW', ModificationTimestamp: now })]);
      });
      const started = performance.now();
      const fetched = await get(`${server.url}/Property('REPLICA-NEW')`);
      expect(fetched.status).to.equal(200);
      expect(performance.now() - started).to.be.below(5000);
      expect(counts().byPrimary).to.be.greaterThan(0);
      // Passed over for a while: the next reads do not each wait for a replica that is behind.
      const quick = performance.now();
      expect((await get(`${server.url}/Property('REPLICA-NEW')`)).status).to.equal(200);
      expect(performance.now() - quick).to.be.below(400);
    } finally {
      await pair.applying(true);
    }
  });

  it('a consumer replicating while the replica lags on and off ends exact', async () => {
    const consumer = new ReplicationConsumer(server.url, { headers: HEADERS });
    await consumer.initialPull();
    const writer = await RandomWriter.create(server.service, 7);
    for (let round = 0; round < 6; round++) {
      await pair.applying(round % 2 === 1);
      for (let i = 0; i < 5; i++) await writer.batch(8);
      await consumer.incrementalPull();
      await consumer.removedRecordsCheck();
    }
    await pair.applying(true);
    await consumer.incrementalPull();
    await consumer.removedRecordsCheck();
    expect(allDifferences(consumer.replica(), withoutDeleted(await servedOverHttp(server.url, HEADERS)))).to.deep.equal([]);
  });
});
