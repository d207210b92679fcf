/**
 * Issue 41, `reso-server pull` against real upstreams: another reso-server behind a proxy that injects an upstream's
 * faults (429 with Retry-After, 503, slow bodies, dropped connections, an expiring nextLink, a page cut mid-JSON),
 * and SAP CAP (a generic OData v4 server: `$skip` paging, no RESO extensions). Each `pull run` either ends with the
 * upstream copied or fails with the fault's line; after every run the checkpoint is never past what the local
 * store holds, and the copy ends exact (every key, every field the upstream serves).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { serviceKeptFields } from '../src/model/service-model';
import type { UpstreamAuth } from '../src/pull/upstream';
import { CAP_FIELDS, CapUpstream, requireCap, startCapUpstream } from './support/cap-upstream';
import { DatabaseTarget, describeEachDatabase, sqliteTarget, TestDatabase } from './support/databases';
import { Fault, FaultProxy } from './support/fault-proxy';
import { CliResult, parseCredentials, runCli } from './support/licence-http';
import { ServerProcess, spawnServer } from './support/server-process';
import { recordsAt } from './support/upstream-walk';

const LISTINGS = 150;
const ALL = 'Property?$orderby=ListingKey';

/**
 * Fields each service sets itself (the change timestamp, timestamps that related records move: PhotosChangeTimestamp
 * follows Media, which these pulls do not copy), so that a copy is compared on what the upstream gives.
 */
const SERVICE_KEPT = serviceKeptFields(serviceModel.entitySets.find((s) => s.name === 'Property')!);

/** A record without the fields the service that holds it keeps itself, and without annotations. */
function comparable(record: Readonly<Record<string, unknown>>, fields?: readonly string[]): Record<string, unknown> {
  const kept = Object.entries(record).filter(([k]) => !k.startsWith('@') && !SERVICE_KEPT.includes(k) && (!fields || fields.includes(k)));
  return Object.fromEntries(kept);
}

/** A store of its own with a server reading it and a client token, that `pull` writes into. */
async function localStore(target: DatabaseTarget): Promise<{ db: TestDatabase; server: ServerProcess; auth: UpstreamAuth }> {
  const db = await target.create();
  const server = await spawnServer(db.url);
  const added = await runCli(db.url, ['clients', 'add', '--name', 'Reader', '--static-token']);
  expect(added.code, added.stderr).to.equal(0);
  return { db, server, auth: { kind: 'bearer', token: parseCredentials(added.stdout).token! } };
}

async function pullRun(db: TestDatabase, name: string): Promise<CliResult> {
  return runCli(db.url, ['pull', 'run', name, '--reconcile-every', '0'], 120_000);
}

async function checkpointOf(db: TestDatabase, name: string): Promise<string | undefined> {
  const shown = await runCli(db.url, ['pull', 'show', name]);
  expect(shown.code, shown.stderr).to.equal(0);
  const { checkpoints } = JSON.parse(shown.stdout) as { checkpoints: { strategy: string; position: string }[] };
  return checkpoints.find((c) => c.strategy === 'timestamp')?.position;
}

describeEachDatabase('reso-server pull from upstreams (issue 41)', (target) => {
  let local: Awaited<ReturnType<typeof localStore>>;

  before(async function () {
    this.timeout(60_000);
    local = await localStore(target);
  });
  after(async () => {
    await local?.server.stop();
    await local?.db.drop();
  });

  describe('from a reso-server behind a fault-injecting proxy', () => {
    let upstreamDb: TestDatabase;
    let upstream: ServerProcess;
    let upstreamAuth: UpstreamAuth;
    let proxy: FaultProxy;
    const upstreamRecords = () => recordsAt(upstream.url, upstreamAuth, ALL);
    const localRecords = () => recordsAt(local.server.url, local.auth, ALL);

    /** Every upstream record older than the checkpoint is held locally as the upstream serves it now. */
    async function checkpointHeld(): Promise<void> {
      const position = await checkpointOf(local.db, 'feed');
      if (position === undefined) return;
      const held = new Map((await localRecords()).map((r) => [r.ListingKey, comparable(r)]));
      const behind = (await upstreamRecords()).filter((r) => Date.parse(String(r.ModificationTimestamp)) < Date.parse(position));
      expect(behind.length, 'records behind the checkpoint').to.be.above(0);
      for (const r of behind) expect(held.get(r.ListingKey), `${String(r.ListingKey)}, behind the checkpoint ${position}`).to.deep.equal(comparable(r));
    }

    async function expectExact(): Promise<void> {
      const [theirs, ours] = await Promise.all([upstreamRecords(), localRecords()]);
      expect(ours.map((r) => comparable(r))).to.deep.equal(theirs.map((r) => comparable(r)));
    }

    /** Changes `count` upstream listings' prices through its own ingest (its service keeps their new timestamps). */
    async function changeUpstream(count: number, by: number): Promise<void> {
      const changed = (await upstreamRecords()).slice(0, count).map((r) => ({ ...comparable(r), ListPrice: Number(r.ListPrice ?? 0) + by }));
      const file = join(upstreamDb.url.replace(/^sqlite:/, '').replace(/[^/]+$/, ''), `changes-${by}.ndjson`);
      writeFileSync(file, changed.map((r) => JSON.stringify(r)).join('\n'));
      const ingested = await runCli(upstreamDb.url, ['ingest', 'Property', file]);
      expect(ingested.code, ingested.stderr).to.equal(0);
    }

    const run = async (faults: { first?: Fault[]; onNextLinks?: Fault }, exitCode: number, said?: RegExp) => {
      if (faults.first) proxy.queue(...faults.first);
      if (faults.onNextLinks) proxy.when(/orderby=ModificationTimestamp.*skiptoken=/, faults.onNextLinks, 1);
      const r = await pullRun(local.db, 'feed');
      proxy.clear();
      expect(r.code, `${r.stdout}${r.stderr}`).to.equal(exitCode);
      if (said) expect(`${r.stdout}${r.stderr}`).to.match(said);
      await checkpointHeld();
      return r;
    };

    before(async function () {
      this.timeout(60_000);
      upstreamDb = await sqliteTarget.create();
      upstream = await spawnServer(upstreamDb.url, { SEED_LISTINGS: String(LISTINGS) });
      const added = await runCli(upstreamDb.url, ['clients', 'add', '--name', 'Downstream', '--static-token']);
      expect(added.code, added.stderr).to.equal(0);
      const token = parseCredentials(added.stdout).token!;
      upstreamAuth = { kind: 'bearer', token };
      proxy = new FaultProxy(upstream.url);
      await proxy.start();
      const pull = await runCli(local.db.url, ['pull', 'add', 'feed', '--url', proxy.url, '--set', 'Property', '--token', token, '--page-size', '20', '--rate', '1000']);
      expect(pull.code, pull.stderr).to.equal(0);
    });
    after(async () => {
      await proxy?.stop();
      await upstream?.stop();
      await upstreamDb?.drop();
    });

    it('a page cut mid-JSON fails the run (malformed), the pages before it written and the checkpoint at them', async function () {
      this.timeout(120_000);
      await run({ onNextLinks: { kind: 'cut' } }, 1, /malformed/);
      expect(await checkpointOf(local.db, 'feed')).to.be.a('string');
      expect(proxy.count('cut')).to.equal(1);
    });

    it('429 with Retry-After and a connection dropped mid-body are retried: the run ends with the copy exact', async function () {
      this.timeout(120_000);
      await run({ first: [{ kind: 'status', status: 429, retryAfter: '1' }], onNextLinks: { kind: 'drop' } }, 0);
      await expectExact();
    });

    it('upstream changes come through 503s and slow bodies', async function () {
      this.timeout(120_000);
      await changeUpstream(30, 1000);
      await run({ first: [{ kind: 'slow', chunkBytes: 512, everyMs: 5 }], onNextLinks: { kind: 'status', status: 503 } }, 0);
      await expectExact();
    });

    it('an expiring nextLink (410) restarts the walk from the checkpoint: nothing lost', async function () {
      this.timeout(120_000);
      await changeUpstream(60, 2000);
      await run({ onNextLinks: { kind: 'status', status: 410 } }, 0, /nextLink expired/);
      await expectExact();
    });

    it('an HTML error page fails the run (not-odata); the next run finishes the copy', async function () {
      this.timeout(120_000);
      await changeUpstream(45, 3000);
      await run({ onNextLinks: { kind: 'html' } }, 1, /not-odata/);
      await run({}, 0);
      await expectExact();
    });
    it('a record without its key is skipped with one line; every other record of its page is written, and reconciliation fetches it by key', async function () {
      this.timeout(120_000);
      await changeUpstream(45, 4000);
      const r = await run({ onNextLinks: { kind: 'keyless', key: 'ListingKey' } }, 0);
      expect(`${r.stdout}${r.stderr}`.match(/record skipped/g)).to.have.length(1);
      const [theirs, ours] = await Promise.all([upstreamRecords(), localRecords()]);
      const held = new Map(ours.map((o) => [o.ListingKey, comparable(o)]));
      const differing = theirs.filter((t) => JSON.stringify(held.get(t.ListingKey)) !== JSON.stringify(comparable(t)));
      // The run's reconciliation (by the upstream's digest: its upstream timestamp moved) fetched it again by key.
      expect(`${r.stdout}${r.stderr}`).to.match(/Property: reconciled by digest in \d+ request\(s\): 0 gone, 1 changed or missing/);
      expect(differing, 'records the local copy holds otherwise').to.deep.equal([]);
    });

    it('OAuth2 client credentials from the upstream\'s token endpoint; a refused client stops the upstream with one line, after one token request, its secret printed nowhere', async function () {
      this.timeout(120_000);
      const added = await runCli(upstreamDb.url, ['clients', 'add', '--name', 'Puller']);
      const { id, secret } = parseCredentials(added.stdout);
      const tokenRequests = () => proxy.served.filter((r) => r.method === 'POST' && r.url === '/oauth2/token').length;
      const oauth = (name: string, clientSecret: string) => runCli(local.db.url, ['pull', 'add', name, '--url', proxy.url, '--set', 'Property',
        '--filter', `Property=ListingKey eq '${name}'`, '--token-url', `${proxy.origin}/oauth2/token`, '--client-id', id, '--client-secret', clientSecret]);
      expect((await oauth('granted', secret)).code).to.equal(0);
      let before = tokenRequests();
      const granted = await pullRun(local.db, 'granted');
      expect(granted.code, granted.stderr).to.equal(0);
      expect(tokenRequests() - before).to.equal(1);

      const wrong = `${secret.slice(0, -4)}zzzz`;
      const add = await oauth('refused', wrong);
      expect(add.code, add.stderr).to.equal(0);
      before = tokenRequests();
      const refused = await pullRun(local.db, 'refused');
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.match(/refused the credentials/);
      expect(tokenRequests() - before).to.equal(1);
      const listed = await runCli(local.db.url, ['pull', 'list', '--json']);
      expect((JSON.parse(listed.stdout) as { name: string; state: string }[]).find((u) => u.name === 'refused')?.state).to.equal('stopped');
      for (const out of [add, refused, listed, await runCli(local.db.url, ['pull', 'show', 'refused'])]) expect(`${out.stdout}${out.stderr}`).to.not.include(wrong);
      const again = await pullRun(local.db, 'refused');
      expect(again.code).to.equal(1);
      expect(tokenRequests() - before, 'a stopped upstream is not asked again').to.equal(1);
    });
  });

  describe('from SAP CAP ($skip paging, no RESO extensions)', () => {
    const fields = CAP_FIELDS.map(([name]) => name);
    const records = Array.from({ length: 73 }, (_, i) => ({
      ListingKey: `CAP-${String(i).padStart(4, '0')}`,
      ModificationTimestamp: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 3) * 1000).toISOString(),
      ListingId: `L${i}`,
      StandardStatus: 'Active',
      ListPrice: 200_000 + i * 100,
      City: 'Capton',
      PostalCode: '12345',
      BedroomsTotal: 1 + (i % 5),
    }));
    let cap: CapUpstream;
    const capKeys = (rs: readonly Record<string, unknown>[]) => rs.filter((r) => String(r.ListingKey).startsWith('CAP-'));

    before(async function () {
      this.timeout(120_000);
      requireCap(this);
      cap = await startCapUpstream(records, 10);
      const added = await runCli(local.db.url, ['pull', 'add', 'cap', '--url', cap.url, '--set', 'Property', '--page-size', '25', '--rate', '1000']);
      expect(added.code, added.stderr).to.equal(0);
    });
    after(async () => {
      await cap?.stop();
    });

    const expectExact = async () => {
      const [theirs, ours] = await Promise.all([recordsAt(cap.url, { kind: 'none' }, ALL), recordsAt(local.server.url, local.auth, ALL)]);
      const present = capKeys(ours).filter((r) => r.MlsStatus !== 'Delete');
      expect(present.map((r) => comparable(r, fields))).to.deep.equal(theirs.map((r) => comparable(r, fields)));
    };

    it('copies every record, following CAP\'s $skip nextLinks (timestamps shared by three records each)', async function () {
      this.timeout(120_000);
      const r = await pullRun(local.db, 'cap');
      expect(r.code, r.stderr).to.equal(0);
      await expectExact();
    });

    it('changes and removals upstream come through on the next run', async function () {
      this.timeout(120_000);
      const later = new Date(Date.UTC(2026, 2, 1)).toISOString();
      cap.upsert([{ ...records[5], ListPrice: 1, ModificationTimestamp: later }, { ...records[6], City: 'Elsewhere', ModificationTimestamp: later },
        { ...records[0], ListingKey: 'CAP-9999', ModificationTimestamp: later }]);
      cap.remove([records[7].ListingKey, records[8].ListingKey]);
      const r = await pullRun(local.db, 'cap');
      expect(r.code, r.stderr).to.equal(0);
      await expectExact();
    });
  });
});
