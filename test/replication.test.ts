/**
 * The spec's recommended practice for replication (§3 States, §4 Paging, Removed-listings check,
 * Recommended practice, Expansion rule 4), proven end to end for every resource: consumers that follow it
 * over HTTP only (test/support/replication-consumer.ts) replicate Property, Media, OpenHouse and
 * HistoryTransactional, each from its own endpoint by ModificationTimestamp, with key-only walks to drop
 * what vanished and no re-reads by foreign key, while several writers change them through ingest,
 * concurrently, in random batches (many records share one timestamp), moving listings in and out of the
 * feed scope and of one consumer's client scope; the consumers are killed mid-walk now and then and go on
 * from their last mark. At the end each store must equal what its client is served, record for record.
 *
 * The expected state is computed independently of the HTTP layer: the stored records read straight from
 * the tables, with the feed scope (MlsStatus ne 'Withdrawn') and the client's scope applied here by hand.
 * The consumer deletes listings it sees in status Delete (§3) with their related records.
 *
 * A second phase (MariaDB and Galera) has two server instances over the same database ingest at once, each with
 * its own writer, while the consumers read from both in turn (a walk's pages too); on the Galera cluster the two
 * sit on different nodes. A third phase (Galera only) adds an instance on the third node and kills that node
 * (SIGKILL) mid-run: its instance answers 503 with Retry-After, the consumers move on as behind a balancer, the
 * node rejoins and its instance serves again, and the replicas still end exact.
 *
 * The same clients also replicate by the change log alone (support/replication-events.ts): a walk of each set,
 * then `EntityEvent?$filter=EntityEventSequence gt <mark>` increments, each named record fetched by key (404:
 * dropped), killed mid-walk now and then, through both instances in the second phase; they must end exact too.
 *
 * Knobs (environment): REPLICATION_SEED (writers' random seed), REPLICATION_OPS (writer operations per phase).
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { CLUSTER_TIMEOUTS, galeraCluster } from './support/galera';
import { get, odataError, startTestServer } from './support/http';
import { until, whileUnavailable } from './support/poll';
import { allDifferences, consumerSets, count, servedOverHttp, Sets, withoutDeleted } from './support/replication-compare';
import { keyOf, RELATED, ReplicatedSet, ReplicationConsumer, SETS } from './support/replication-consumer';
import { changeLogOf, rowsOnEachNode } from './support/replication-forensics';
import { EventConsumer } from './support/replication-events';
import { Random, RandomWriter, storedRecords, WriterStats } from './support/replication-writer';
import { Rec, walkPages } from './support/replication-paging';

const FEED_SCOPE = "MlsStatus ne 'Withdrawn'";
/** The scoped client's licence: listings move in and out of it as writers change their status. */
const CLIENT_SCOPE = "MlsStatus ne 'Pending' and MlsStatus ne 'Hold'";
const inClientScope = (r: Rec) => r.MlsStatus !== 'Pending' && r.MlsStatus !== 'Hold';
const SCOPED_TOKEN = 'replication-scoped-token';
const PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;
const SEED_LISTINGS = 120;
const OPERATIONS = Number(process.env.REPLICATION_OPS ?? 1000);
/** Write batches per consumer round (the writers wait for a round's end after this many). */
const ROUND_EVERY = 20;
const SEED = Number(process.env.REPLICATION_SEED ?? 20260601);
const INTERRUPT_CHANCE = 0.05;

/** One replicating client: who it is, what it may see, and its consumer. */
interface Subscriber {
  readonly name: string;
  readonly headers: Record<string, string>;
  /** The client's scope, applied by hand (the feed scope comes on top). */
  readonly inScope: (r: Rec) => boolean;
  consumer?: ReplicationConsumer;
  /** The same client replicating by the change log alone (EntityEvent, RCP-027). */
  events?: EventConsumer;
}

/**
 * What the service distributes to a client now, from the tables, with the scopes applied by hand: listings in
 * scope; related records unless their listing exists and is out of scope (src/query/visibility.ts: records whose
 * listing does not exist yet stay visible).
 */
async function visibleFromDatabase(server: RunningServer, inScope: (r: Rec) => boolean): Promise<Sets> {
  const listings = await storedRecords(server.service, 'Property');
  const missingStatus = listings.filter((r) => typeof r.MlsStatus !== 'string');
  if (missingStatus.length) throw new Error(`oracle: listings without MlsStatus make the scope ambiguous: ${missingStatus.map((r) => r.ListingKey)}`);
  const visible = (r: Rec) => r.MlsStatus !== 'Withdrawn' && inScope(r);
  const out = { Property: new Map<string, Rec>(listings.filter(visible).map((r) => [r.ListingKey, r])) } as Sets;
  const hidden = new Set(listings.filter((r) => !visible(r)).map((r) => r.ListingKey as string));
  for (const spec of RELATED) {
    const records = await storedRecords(server.service, spec.set as string);
    // Every related record here is a listing's (the seed and the writers make no others).
    const foreign = records.filter((r) => r.ResourceName !== undefined && r.ResourceName !== 'Property');
    if (foreign.length) throw new Error(`oracle: ${spec.set} of other resources: ${foreign.slice(0, 3).map((r) => r[spec.key])}`);
    out[spec.set] = new Map(records.filter((r) => !hidden.has(r[spec.parent])).map((r) => [r[spec.key] as string, r]));
  }
  return out;
}

describeEachDatabase('Replication of every resource by the recommended practice (§3, §4)', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  const subscribers: Subscriber[] = [
    { name: 'feed client', headers: {}, inScope: () => true },
    { name: `client scoped to ${CLIENT_SCOPE}`, headers: { Authorization: `Bearer ${SCOPED_TOKEN}` }, inScope: inClientScope },
  ];

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    // On the cluster, statements may outlast a lost node's eviction (the last phase kills one).
    const timeouts = target.label === 'Galera' ? { databaseTimeouts: CLUSTER_TIMEOUTS } : {};
    server = await startTestServer(serviceModel, db.url, { feedScope: FEED_SCOPE, pageSize: PAGE_SIZE, maxPageSize: MAX_PAGE_SIZE, ...timeouts });
    await seedDemoData(server.service, { listings: SEED_LISTINGS });
    const { client } = await server.service.clients.add({ id: 'replication-scoped', name: 'Scoped', scope: CLIENT_SCOPE });
    await server.service.clients.issueToken(client.id, undefined, SCOPED_TOKEN);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  it('each client is served exactly its in-scope listings and their related records (the oracle agrees with HTTP)', async function () {
    this.timeout(120_000);
    const all = await storedRecords(server.service, 'Property');
    expect(all.some((r) => r.MlsStatus === 'Withdrawn'), 'the seed has withdrawn listings').to.equal(true);
    expect(all.some((r) => r.MlsStatus === 'Delete'), 'the seed has deleted listings').to.equal(true);
    expect(all.some(inClientScope) && all.some((r) => !inClientScope(r)), 'the client scope splits the listings').to.equal(true);
    for (const s of subscribers) {
      expect(allDifferences(await servedOverHttp(server.url, s.headers, MAX_PAGE_SIZE), await visibleFromDatabase(server, s.inScope)), s.name).to.deep.equal([]);
    }
  });

  it('an initial pull of each set (killed mid-walk now and then) copies what each client is served, less listings in status Delete', async function () {
    this.timeout(120_000);
    for (const [i, s] of subscribers.entries()) {
      const random = new Random(SEED + 100 + i);
      s.consumer = new ReplicationConsumer(server.url, { headers: s.headers, interruptChance: INTERRUPT_CHANCE, random: () => random.next() });
      await s.consumer.initialPull();
      expect(s.consumer.deleted.size, 'Delete-status listings were seen').to.be.greaterThan(0);
      expect(allDifferences(consumerSets(s.consumer), withoutDeleted(await visibleFromDatabase(server, s.inScope))), s.name).to.deep.equal([]);
      expect(s.consumer.marks.Media).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const events = new Random(SEED + 300 + i);
      s.events = new EventConsumer(server.url, s.headers, INTERRUPT_CHANCE, () => events.next());
      await s.events.initialWalk();
      expect(s.events.mark, 'the seed was logged').to.be.greaterThan(0);
      expect(allDifferences(s.events.replica(), withoutDeleted(await visibleFromDatabase(server, s.inScope))), `${s.name} by EntityEvent`).to.deep.equal([]);
    }
  });

  it(`two writers making ${OPERATIONS} random changes each: increments and key-only walks of every set end exact`, async function () {
    this.timeout(300_000);
    const writers = [await RandomWriter.create(server.service, SEED), await RandomWriter.create(server.service, SEED + 7)];
    await concurrentPhase({ server, db, target }, subscribers, writers, OPERATIONS);
  });

  it('two server instances ingesting at once (each its own writer), read in turn: still exact', async function () {
    // Two ListingService instances in one process over one SQLite file would wait for the file's write lock
    // synchronously (better-sqlite3), on the thread the other needs to commit: a deployment only MariaDB supports.
    if (target.label === 'SQLite') this.skip();
    this.timeout(300_000);
    const other = await startTestServer(serviceModel, db.instanceUrl(1), { feedScope: FEED_SCOPE, pageSize: PAGE_SIZE, maxPageSize: MAX_PAGE_SIZE });
    try {
      for (const [i, s] of subscribers.entries()) {
        const random = new Random(SEED + 200 + i);
        s.consumer = new ReplicationConsumer(server.url, { headers: s.headers, bases: [server.url, other.url], interruptChance: INTERRUPT_CHANCE, random: () => random.next() }).continueFrom(s.consumer!);
        s.events!.bases = [server.url, other.url];
      }
      const writers = [await RandomWriter.create(server.service, SEED + 1), await RandomWriter.create(other.service, SEED + 2)];
      await concurrentPhase({ server, db, target }, subscribers, writers, OPERATIONS / 2);
    } finally {
      for (const s of subscribers) s.events!.bases = [server.url];
      await other.close();
    }
  });

  it('three instances, one per node; node 3 killed (SIGKILL) and restarted mid-run: no answer but 200 or 503 with Retry-After meanwhile, and still exact', async function () {
    if (target.label !== 'Galera') this.skip();
    this.timeout(600_000);
    const cluster = await galeraCluster();
    const config = { feedScope: FEED_SCOPE, pageSize: PAGE_SIZE, maxPageSize: MAX_PAGE_SIZE, databaseTimeouts: CLUSTER_TIMEOUTS };
    const [second, third] = [await startTestServer(serviceModel, db.instanceUrl(1), config), await startTestServer(serviceModel, db.instanceUrl(2), config)];
    const bases = [server.url, second.url, third.url];
    try {
      for (const [i, s] of subscribers.entries()) {
        const random = new Random(SEED + 400 + i);
        s.consumer = new ReplicationConsumer(server.url, { headers: s.headers, bases, interruptChance: INTERRUPT_CHANCE, random: () => random.next(), toleratesUnavailable: true }).continueFrom(s.consumer!);
        s.events!.bases = [server.url, second.url];
        s.events!.toleratesUnavailable = true;
      }
      const timeline: string[] = [];
      const began = Date.now();
      const at = (what: string) => timeline.push(`${((Date.now() - began) / 1000).toFixed(1)} s ${what}`);
      const midRun = async (rounds: () => number) => {
        await until('two consumer rounds before the kill', () => rounds() >= 2, 120_000);
        at('node 3 killed');
        await cluster.kill(3);
        const down = await get(`${third.url}/Property?$top=1`);
        expect(down.status, `instance on the killed node: ${down.text.slice(0, 200)}`).to.equal(503);
        expect(down.headers.get('retry-after'), 'Retry-After while its node is down').to.match(/^\d+$/);
        odataError(down);
        expect((await get(`${third.url.replace(/\/odata$/, '')}/ready`, { Authorization: '' })).status, '/ready while its node is down').to.equal(503);
        const downRounds = rounds();
        await until('two consumer rounds while node 3 is down', () => rounds() >= downRounds + 2, 120_000);
        at('node 3 restarting');
        await cluster.restart(3);
        at('node 3 synced');
      };
      const writers = [await RandomWriter.create(server.service, SEED + 3), await RandomWriter.create(second.service, SEED + 4)];
      await concurrentPhase({ server, db, target, clusterChanges: true }, subscribers, writers, OPERATIONS / 2, midRun);
      console.log(`      ${timeline.join('; ')}`);
      expect((await get(`${third.url}/Property?$top=1`)).status, 'the instance on the rejoined node serves again, not restarted').to.equal(200);
      let onKilledNode = 0;
      for (const s of subscribers) {
        const answers = [...s.consumer!.unavailable].map(([root, n]) => `${bases.indexOf(root) + 1}: ${n}`);
        console.log(`      ${s.name}: walks abandoned on a 503 with Retry-After, by instance: ${answers.join(', ') || 'none'}; `
          + `by EntityEvent, increments ended so: ${s.events!.unavailable}`);
        onKilledNode += s.consumer!.unavailable.get(third.url) ?? 0;
      }
      // The other nodes may refuse for a few seconds while node 3 rejoins (test/galera.test.ts bounds that).
      expect(onKilledNode, 'walks the killed node\'s instance refused').to.be.greaterThan(0);
    } finally {
      for (const s of subscribers) {
        s.events!.bases = [server.url];
        s.events!.toleratesUnavailable = false;
      }
      if (!cluster.running(3)) await cluster.restart(3);
      await second.close();
      await third.close();
    }
  });
}, { cluster: true });

/**
 * What a phase runs against: the first instance, its database, and which kind of database that is. `clusterChanges`:
 * the cluster loses and regains a node meanwhile, when every node may refuse for a few seconds (galera.test.ts bounds
 * that): the writers and the test's own reads of the tables wait it out, as an operator's loader would.
 */
interface PhaseContext {
  readonly server: RunningServer;
  readonly db: TestDatabase;
  readonly target: { readonly label: string };
  readonly clusterChanges?: boolean;
}

/**
 * Writers run (not waiting for anyone) while each consumer pulls increments round after round, with a
 * key-only walk of every set every third round; then a last increment and check, and the comparison.
 */
async function concurrentPhase(
  phase: PhaseContext, subscribers: Subscriber[], writers: RandomWriter[], operationsEach: number,
  midRun?: (rounds: () => number) => Promise<void>,
): Promise<void> {
  const { server } = phase;
  const read = <T>(work: () => Promise<T>): Promise<T> => (phase.clusterChanges ? whileUnavailable(work) : work());
  const started = Date.now();
  const consumers = subscribers.map((s) => s.consumer!);
  let writing = true;
  let consumerFailed = false;
  let stopConsumerWait!: () => void;
  const consumerStopped = new Promise<void>((resolve) => { stopConsumerWait = resolve; });
  const falseRemovals: string[] = [];
  let rounds = 0;

  // Each writer's batch waits for the first consumer's next read, and every ROUND_EVERY-th batch for the end of
  // its current round (or for its failure): reads and writes interleave, over many rounds, whatever the machine's speed.
  const roundEnded: (() => void)[] = [];
  const nextRound = () => new Promise<void>((resolve) => roundEnded.push(resolve));
  let batches = 0;
  const pace = () => Promise.race([++batches % ROUND_EVERY === 0 ? nextRound() : consumers[0].nextRead(), consumerStopped]);
  const writersDone = Promise.all(writers.map((w) => w.run({ operations: operationsEach, maxBatch: 60, pace, stop: () => consumerFailed, retryUnavailable: phase.clusterChanges })))
    .finally(() => { writing = false; });
  const consumerDone = (async () => {
    try {
      while (writing) {
        for (const [i, consumer] of consumers.entries()) {
          await consumer.incrementalPull();
          await subscribers[i].events!.increment();
          if (rounds % 3 === 1) {
            // Anything committed after this instant has a later timestamp (the service's clock).
            const clockAtStart = Number(await read(() => server.service.settings.get('modification-clock')));
            const removed = await consumer.removedRecordsCheck();
            // A removed listing must have left the client's view, or changed, at some point during the check.
            const now = new Map((await read(() => storedRecords(server.service, 'Property'))).map((r) => [r.ListingKey as string, r]));
            for (const key of removed) {
              const r = now.get(key);
              if (r && r.MlsStatus !== 'Withdrawn' && subscribers[i].inScope(r) && Date.parse(r.ModificationTimestamp) < clockAtStart) {
                falseRemovals.push(`${key} (in view, unchanged since ${r.ModificationTimestamp}, removed by ${subscribers[i].name}'s check of round ${rounds})`);
              }
            }
          }
        }
        rounds++;
        for (const resolve of roundEnded.splice(0)) resolve();
      }
    } catch (e) {
      consumerFailed = true;
      throw e;
    } finally {
      stopConsumerWait();
    }
  })();
  const [allStats] = await Promise.all([writersDone, consumerDone, midRun?.(() => rounds)]) as [WriterStats[], void, void];
  const writeSeconds = (Date.now() - started) / 1000;
  report(writers, allStats, writeSeconds, rounds);

  expect(rounds, 'consumer rounds while the writers ran').to.be.at.least(3);
  for (const stats of allStats) expect(stats.operations).to.be.at.least(operationsEach);
  expect(falseRemovals, 'listings removed by a check although they stayed in view, unchanged').to.deep.equal([]);
  for (const [i, s] of subscribers.entries()) {
    const consumer = consumers[i];
    // The writers have stopped: a last incremental pull (taken up again if killed) and a last check of every set.
    consumer.interruptChance = 0;
    await consumer.incrementalPull();
    await consumer.removedRecordsCheck();
    const visible = await visibleFromDatabase(server, s.inScope);
    const expected = withoutDeleted(visible);
    const increments = Object.entries(consumer.stats.incrementRecords).map(([k, n]) => `${k} ${n}`).join(', ');
    const removed = Object.entries(consumer.stats.removedByCheck).map(([k, n]) => `${k} ${n}`).join(', ');
    console.log(`      ${s.name}: ${consumer.stats.requests} requests, ${consumer.stats.interruptions} walks killed mid-way; increments returned ${increments}; `
      + `removed by key-only walks ${removed}; ${consumer.stats.deletedByStatus} deleted by status\n        compared ${count(expected)}`);
    for (const [set, n] of Object.entries(consumer.stats.incrementRecords)) expect(n, `records from ${set}'s increments`).to.be.greaterThan(0);
    expect(allDifferences(await servedOverHttp(server.url, s.headers, MAX_PAGE_SIZE), visible), `${s.name}: what HTTP serves after the writes against the tables`).to.deep.equal([]);
    const replica = consumerSets(consumer);
    const missingKeys = SETS.flatMap((set) => [...expected[set].keys()].filter((k) => !replica[set].has(k)).map((k) => [set, k] as const));
    const missing = await Promise.all(missingKeys.slice(0, 3).map(([set, k]) => explainMissing(phase, writers, consumer, expected, set, k)));
    expect(allDifferences(replica, expected), `${s.name}: the replica (missing, kept although removed, stale)\n${missing.join('\n')}`).to.deep.equal([]);
    const events = s.events!;
    events.interruptChance = 0;
    await events.increment();
    const e = events.stats;
    console.log(`      ${s.name} by EntityEvent: ${e.requests} requests, ${e.events} events, ${e.fetched} fetches, ${e.dropped} dropped on 404, ${e.interruptions} walks killed mid-way`);
    expect(e.events, 'events read while the writers ran').to.be.greaterThan(0);
    expect(allDifferences(events.replica(), expected), `${s.name} by EntityEvent: the replica (missing, kept although removed, stale)`).to.deep.equal([]);
  }
}

/**
 * What happened to a record the replica lacks: its story and its listing's in the consumer, the pulls that passed its
 * timestamp, what each writer did to its listing, its change-log events, and its rows as the database holds them.
 */
async function explainMissing(
  { server, db, target }: PhaseContext, writers: RandomWriter[], consumer: ReplicationConsumer, expected: Record<ReplicatedSet, Map<string, Rec>>, set: ReplicatedSet, key: string,
): Promise<string> {
  const r = expected[set].get(key)!;
  const spec = RELATED.find((x) => x.set === set);
  const parent = spec ? r[spec.parent] as string : key;
  const listing = expected.Property.get(parent);
  const rows = await rowsOnEachNode(db, target.label === 'Galera' ? 3 : 1, parent, set, keyOf(set), key);
  return [
    `${set} ${key} (now ${r.ModificationTimestamp}): ${consumer.story(set, key)}`,
    ...(spec ? [`  its listing ${parent} (now ${listing?.ModificationTimestamp} ${listing?.MlsStatus}): ${consumer.story('Property', parent)}`] : []),
    ...consumer.pullsPassing(set, r.ModificationTimestamp as string).map((p) => `  ${p}`),
    ...writers.map((w, i) => `  writer ${i + 1} on ${parent}: ${(w.history.get(parent) ?? []).join('; ')}`),
    `  change log: ${await changeLogOf(server.service, parent, key)}`,
    ...rows.map((line) => `  ${line}`),
  ].join('\n');
}

function report(writers: RandomWriter[], allStats: WriterStats[], writeSeconds: number, rounds: number): void {
  for (const [i, stats] of allStats.entries()) {
    const kinds = Object.entries(stats.byKind).sort().map(([k, n]) => `${k} ${n}`).join(', ');
    console.log(`      writer ${i + 1}/${allStats.length} (seed ${writers[i].rng.seed}): ${stats.operations} operations in ${stats.batches} batches `
      + `(largest ${stats.largestBatch}; ingest: ${stats.created} created, ${stats.updated} updated, ${stats.unchanged} unchanged, `
      + `${stats.deleted} deleted, ${stats.listingsTouched} listing touches) `
      + `in ${writeSeconds.toFixed(1)} s, ${rounds} consumer rounds\n        operations: ${kinds}`);
    const c = writers[i].service.db.conflicts?.();
    if (c) console.log(`        its instance's write transactions so far: ${c.conflicts} conflicts lost and run again (${c.unannounced} rolled back without an error), ${c.recovered} recovered, ${c.exhausted} gave up`);
  }
}

describeEachDatabase('Feed scope and related records of other resources', (target) => {
  let db: TestDatabase;
  let server: RunningServer;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { feedScope: FEED_SCOPE, pageSize: PAGE_SIZE, maxPageSize: MAX_PAGE_SIZE });
    await seedDemoData(server.service, { listings: 20 });
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  // The scope decides which listings are distributed, and a listing's related records go with it (src/query/visibility.ts).
  // Media and HistoryTransactional also describe other resources (ResourceName 'Member', 'Office', …): ingest does not
  // treat those as a listing's (they do not move any listing's timestamps), so the listing scope must not hide them.
  for (const [set, keyField, extra] of [
    ['Media', 'MediaKey', {}],
    ['HistoryTransactional', 'HistoryTransactionalKey', { FieldName: 'MemberStatus', NewValue: 'Active' }],
  ] as const) {
    it(`${set} of a Member (ResourceName 'Member') stays in /${set} under FEED_SCOPE`, async () => {
      const member = (await storedRecords(server.service, 'Member'))[0];
      const template = (await storedRecords(server.service, set))[0];
      const key = `MEMBER-${set}-1`;
      const { emptyReport, ingestBatch } = await import('../src/ingest/ingest');
      const report = emptyReport();
      await ingestBatch(server.service, set, [{ line: 1, input: { ...template, ...extra, [keyField]: key, ResourceName: 'Member', ResourceRecordKey: member.MemberKey, ResourceRecordID: member.MemberMlsId ?? null } }], report);
      expect(report.errors).to.deep.equal([]);
      expect(report.listingsTouched, 'no listing is touched').to.equal(0);
      const byKey = await get(`${server.url}/${set}('${key}')`);
      const byFilter = await get(`${server.url}/${set}?$filter=ResourceRecordKey eq '${member.MemberKey}'`);
      const all = await walkPages(`${server.url}/${set}`, { headers: { Prefer: `odata.maxpagesize=${MAX_PAGE_SIZE}` } });
      expect({
        byKey: byKey.status,
        byFilter: byFilter.json?.value?.map((r: Rec) => r[keyField]),
        inFullPull: all.records.some((r) => r[keyField] === key),
      }).to.deep.equal({ byKey: 200, byFilter: [key], inFullPull: true });
    });
  }
});
