/**
 * Starting: any number of instances at once on one database, and a server started whatever state its database
 * is in. Instances are real `reso-server serve` processes (support/server-process.ts) on a real database.
 * Of instances starting together, one does the start-up work (schema, settings, demo client, demo data) under
 * the start-up lock while the others answer 503 with Retry-After and then find it done; a server whose SQLite
 * file is locked or damaged stays up answering 503 and starts once it can.
 *
 * CONCURRENT_START_ROUNDS sets how many rounds the first test runs per database (default 2; the bar is
 * 20: `CONCURRENT_START_ROUNDS=20 npx mocha --no-config --require dist/test/support/hooks.js --timeout 0
 * dist/test/concurrent-start.test.js`).
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { ListingService } from '../src/process/service';
import { seedDemoData } from '../src/demo/demo-data';
import { DEMO_CLIENT } from '../src/process/startup';
import { ClientTable } from '../src/storage/tables/client-table';
import { Database } from '../src/storage/db/database';
import { openDatabase, sqliteFile } from '../src/storage/db/open-database';
import { dictionaryRows } from '../src/storage/records/reference-data';
import { ensureSettingsTable } from '../src/storage/tables/settings-table';
import { Settings } from '../src/storage/tables/settings';
import { StartupInProgress, StartupLock } from '../src/storage/tables/startup-lock';
import { describeEachDatabase, sqliteTarget, TestDatabase } from './support/databases';
import { get, odataError, startTestServer, TEST_TOKEN } from './support/http';
import { ManualClock } from './support/manual-clock';
import { ServerProcess, spawnServer } from './support/server-process';

const ROUNDS = Number(process.env.CONCURRENT_START_ROUNDS ?? 2);
const INSTANCES = 4;
const SEED_LISTINGS = 8;
const ENV = { DEMO_TOKEN: TEST_TOKEN, SEED_LISTINGS: String(SEED_LISTINGS), PAGE_SIZE: '50' };
/** What a server prints once its start-up work is done (src/readiness.ts). */
const READY = /start-up done in [\d.]+ s; ready/;
const SEEDING = /seeding \d+ demo listings/g;

/** Starts `n` server processes at once; every one must come up and reach readiness. */
async function startTogether(url: string, n: number): Promise<ServerProcess[]> {
  const starts = await Promise.allSettled(Array.from({ length: n }, () => spawnServer(url, ENV)));
  const started = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = starts.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error)?.message ?? s.reason).slice(0, 800)] : []));
  const unready = await Promise.allSettled(started.map((p) => p.waitFor(READY, 60_000)));
  const notReady = unready.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message).slice(0, 800)] : []));
  if (failed.length || notReady.length) {
    await Promise.all(started.map((p) => p.kill()));
    expect({ failed, notReady }, 'every instance starts and becomes ready').to.deep.equal({ failed: [], notReady: [] });
  }
  return started;
}

/** What every instance must serve alike: the listings with their timestamps, and Lookup's second page through another's nextLink. */
async function sameEverywhere(instances: ServerProcess[]): Promise<unknown> {
  const listings = await Promise.all(instances.map((p) => get(`${p.url}/Property?$select=ListingKey,ModificationTimestamp&$orderby=ListingKey`)));
  for (const [i, r] of listings.entries()) {
    expect(r.status, `instance ${i + 1}, with DEMO_TOKEN: ${r.text.slice(0, 300)}`).to.equal(200);
    expect(r.json.value, `instance ${i + 1}: the demo listings`).to.have.length(SEED_LISTINGS);
    expect(r.json.value, `instance ${i + 1} serves what instance 1 serves`).to.deep.equal(listings[0].json.value);
  }
  // One paging secret: a nextLink of one instance goes on at every other.
  const next: string = (await get(`${instances[0].url}/Lookup`)).json['@odata.nextLink'];
  expect(next, 'a nextLink').to.be.a('string');
  const lookups = dictionaryRows(serviceModel, serviceModel.entitySets.find((s) => s.dictionaryRows?.kind === 'lookups')!.dictionaryRows!).length;
  for (const [i, other] of instances.entries()) {
    const page = await get(next.replace(instances[0].url, other.url));
    expect(page.status, `instance ${i + 1} follows instance 1's nextLink: ${page.text.slice(0, 200)}`).to.equal(200);
    expect(page.json.value, 'the second page').to.have.length(50);
    expect(Number((await get(`${other.url}/Lookup/$count`)).text), `instance ${i + 1}: the reference data once`).to.equal(lookups);
  }
  return listings[0].json.value;
}

/** The rows start-up leaves in the database: one demo client, and neither the lock nor an unfinished-seeding mark. */
async function expectStartupRows(url: string): Promise<void> {
  const db = openDatabase(url);
  try {
    const clients = await new ClientTable(db).clients();
    expect(clients.map((c) => c.client_id), 'clients').to.deep.equal([DEMO_CLIENT]);
    const settings = new Settings(db);
    expect(await settings.get('startup-lock'), 'the start-up lock, released').to.equal(undefined);
    expect(await settings.get('demo-seeding'), 'no unfinished seeding').to.equal(undefined);
    expect(await settings.get('paging-secret'), 'the paging secret').to.be.a('string');
    expect(await settings.get('prepared-for'), 'the fingerprint of the work done').to.be.a('string');
  } finally {
    await db.close();
  }
}

describeEachDatabase('Start-up: instances starting together on one database', (target) => {
  it(`${INSTANCES} instances started at once on an empty database, then again on the database they seeded (${ROUNDS} rounds): all ready, one seeding, the same data, secret and DEMO_TOKEN everywhere`, async function () {
    this.timeout(ROUNDS * 120_000);
    for (let round = 1; round <= ROUNDS; round++) {
      const db = await target.create();
      let instances: ServerProcess[] = [];
      try {
        instances = await startTogether(db.url, INSTANCES);
        const seeders = instances.map((p) => p.output().match(SEEDING)?.length ?? 0);
        expect(seeders.reduce((a, b) => a + b), `round ${round}, empty database: instances that seeded (${seeders})`).to.equal(1);
        const served = await sameEverywhere(instances);
        await Promise.all(instances.map((p) => p.stop()));
        await expectStartupRows(db.url);

        instances = await startTogether(db.url, INSTANCES);
        const again = instances.map((p) => p.output().match(SEEDING)?.length ?? 0);
        expect(again.reduce((a, b) => a + b), `round ${round}, seeded database: instances that seeded`).to.equal(0);
        expect(await sameEverywhere(instances), 'the listings as they were, timestamps too: nothing written again').to.deep.equal(served);
        await Promise.all(instances.map((p) => p.stop()));
        await expectStartupRows(db.url);
      } finally {
        await Promise.all(instances.map((p) => p.kill()));
        await db.drop();
      }
    }
  });

  describe('the start-up lock (a row in the settings table, kept by a heartbeat)', () => {
    let db: TestDatabase;
    let database: Database;
    let settings: Settings;
    const clock = new ManualClock();
    const timings = { leaseMs: 15_000, renewMs: 60_000 };
    before(async () => {
      db = await target.create();
      database = openDatabase(db.url);
      settings = new Settings(database);
      await ensureSettingsTable(database);
    });
    after(async () => {
      await database?.close();
      await db?.drop();
    });
    const plant = (value: string) => database.transaction((tx) => settings.set(tx, 'startup-lock', value));
    const attempt = (lock: StartupLock) => lock.holding(async () => settings.get('startup-lock'));

    it('is held by one instance at a time: a second waits (StartupInProgress) without running its work, then gets it', async () => {
      const [a, b] = [new StartupLock(database, clock, timings), new StartupLock(database, clock, timings)];
      let release!: () => void;
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => { entered = resolve; });
      const holding = a.holding(() => new Promise<void>((resolve) => { release = resolve; entered(); }));
      await inside;
      let ran = false;
      const err = await b.holding(async () => { ran = true; }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(StartupInProgress);
      expect(ran, 'the waiting instance ran its work').to.equal(false);
      release();
      await holding;
      expect(await settings.get('startup-lock'), 'released').to.equal(undefined);
      expect(await attempt(b), 'the second, once free').to.match(/ pid \d+ /);
    });

    it('a holder that died (its row unchanged for the lease) is taken over; one whose heartbeat moves the row is not', async () => {
      const lock = new StartupLock(database, clock, timings);
      await plant('ghost pid 1 beat 3');
      const waiting = async () => expect(await attempt(lock).catch((e: unknown) => e)).to.be.instanceOf(StartupInProgress);
      await waiting();
      clock.advance(10_000);
      await waiting();
      await plant('ghost pid 1 beat 4'); // the holder is alive after all: seen moving 10 s after it was first seen
      await waiting();
      clock.advance(10_000);
      await waiting();
      clock.advance(5_000); // 15 s without a sign of life
      const heldAs = await attempt(lock);
      expect(heldAs, 'held by this process during the work').to.match(/ pid \d+ .* beat \d+$/).and.not.match(/^ghost/);
      expect(await settings.get('startup-lock'), 'released after the work').to.equal(undefined);
    });
  });

  it('an instance killed while it holds the lock, mid-seeding: another takes the lock over once it has not moved for 15 s, finishes the seeding and serves', async function () {
    this.timeout(120_000);
    const db = await target.create();
    const env = { ...ENV, SEED_LISTINGS: '1000' };
    const processes: ServerProcess[] = [];
    try {
      // The first is killed as soon as it starts seeding; the second has found the lock held by then.
      const first = await spawnServer(db.url, env, /empty database: seeding/);
      processes.push(first);
      const second = await spawnServer(db.url, env);
      processes.push(second);
      expect(second.output()).to.match(/another instance .* is doing the start-up work/);
      await first.kill();
      await second.waitFor(/without a sign of life for 1\d s; taken over/, 60_000);
      await second.waitFor(READY, 60_000);
      expect(second.output()).to.match(/demo data left unfinished by an earlier start: seeding 1000 demo listings/);
      expect((await get(`${second.url}/Property/$count`)).text).to.equal('1000');
      await second.stop();
      await expectStartupRows(db.url);
    } finally {
      await Promise.all(processes.map((p) => p.kill()));
      await db.drop();
    }
  });

  it('a start that died while seeding is finished by the next start (the demo data is written by key)', async function () {
    this.timeout(60_000);
    const db = await target.create();
    try {
      const service = new ListingService(serviceModel, openDatabase(db.url));
      await service.prepare();
      await seedDemoData(service, { listings: 3 });
      await service.db.transaction((tx) => service.settings.set(tx, 'demo-seeding', String(SEED_LISTINGS)));
      await service.close();
      const server = await startTestServer(serviceModel, db.url, { seedListings: SEED_LISTINGS });
      try {
        expect(Number((await get(`${server.url}/Property/$count`)).text)).to.equal(SEED_LISTINGS);
        expect(await server.service.settings.get('demo-seeding')).to.equal(undefined);
      } finally {
        await server.close();
      }
    } finally {
      await db.drop();
    }
  });
});

describe('Start-up on a SQLite file it cannot use yet (SQLite)', () => {
  let db: TestDatabase;
  let file: string;
  beforeEach(async () => {
    db = await sqliteTarget.create();
    file = sqliteFile(db.url)!;
  });
  afterEach(async () => { await db.drop(); });

  const expect503 = async (server: ServerProcess) => {
    const r = await get(`${server.url}/Property`);
    expect(r.status, r.text.slice(0, 300)).to.equal(503);
    expect(r.headers.get('retry-after')).to.match(/^\d+$/);
    expect(odataError(r).code).to.equal('ServiceUnavailable');
  };

  /** Another process's lock on the file, taken by this test process (the server is a process of its own). */
  const holdLock = (mode: 'IMMEDIATE' | 'EXCLUSIVE', journal?: 'delete') => {
    const other = new BetterSqlite3(file);
    if (journal) other.pragma(`journal_mode = ${journal}`);
    other.exec(`BEGIN ${mode}`);
    other.exec('CREATE TABLE IF NOT EXISTS other_tool (x)');
    return () => { other.exec('COMMIT'); other.close(); };
  };

  for (const [mode, journal, what] of [
    ['EXCLUSIVE', undefined, 'a database this service made (WAL)'],
    ['IMMEDIATE', undefined, 'a database this service made (WAL)'],
    ['EXCLUSIVE', 'delete', 'a file another tool made (rollback journal): the open itself fails'],
  ] as const) {
    it(`another process holds BEGIN ${mode} on ${what}: the server starts, answers 503 with Retry-After while it does, and is ready once it lets go`, async function () {
      this.timeout(90_000);
      if (!journal) {
        const first = await spawnServer(db.url, ENV);
        await first.waitFor(READY);
        await first.stop();
      }
      const release = holdLock(mode, journal);
      let server: ServerProcess | undefined;
      try {
        server = await spawnServer(db.url, ENV);
        expect(server.output()).to.match(/locked by another process \(SQLITE_BUSY\)/);
        await expect503(server);
        await expect503(server);
        release();
        await server.waitFor(READY, 60_000);
        const r = await get(`${server.url}/Property/$count`);
        expect(r.status, r.text).to.equal(200);
        expect(Number(r.text)).to.equal(SEED_LISTINGS);
      } finally {
        try { release(); } catch { /* released already */ }
        await server?.stop();
      }
    });
  }

  it('a file that is not a SQLite database: 503 with a clear log line, the process stays up, and starts once the file is replaced', async function () {
    this.timeout(60_000);
    writeFileSync(file, randomBytes(16_384));
    const server = await spawnServer(db.url, ENV);
    try {
      expect(server.output()).to.match(/not a SQLite database or is damaged \(SQLITE_NOTADB\)/);
      await expect503(server);
      await expect503(server);
      expect(server.child.exitCode, 'the process is alive').to.equal(null);
      // The operator moves the damaged file away: the next try makes a new database.
      rmSync(file);
      await server.waitFor(READY, 30_000);
      expect((await get(`${server.url}/Property/$count`)).text).to.equal(String(SEED_LISTINGS));
    } finally {
      await server.stop();
    }
  });
});
