/**
 * docs/scaling-out.md "Every core": `serve --workers 2` as real processes. Distinct workers answer; a killed worker is replaced;
 * SIGHUP replaces every worker while requests keep coming and loses none; SIGTERM stops the cluster with exit 0; and
 * usage counts stay exact across the workers, a killed one and a reload (each worker journals its own counts).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { request, TEST_TOKEN } from './support/http';
import { parseCredentials, runCli } from './support/licence-http';
import { fetchAlone, serving, stopCluster as stop } from './support/cluster-process';
import { until } from './support/poll';
import { childPids, ServerProcess, spawnServer } from './support/server-process';

const WORKERS = 2;

describeEachDatabase('Every core: serve --workers 2', (target) => {
  let db: TestDatabase;
  let journals: string;
  let keys: string[];

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    journals = mkdtempSync(join(tmpdir(), 'reso-cluster-journal-'));
    const seeded = await runCli(db.url, ['seed', '--listings', '20'], 110_000);
    expect(seeded.code, seeded.stderr).to.equal(0);
  });
  after(async () => {
    await db?.drop();
    rmSync(journals, { recursive: true, force: true });
  });

  async function startCluster(): Promise<ServerProcess> {
    const server = await spawnServer(db.url, {
      DEMO_TOKEN: TEST_TOKEN, WORKERS: String(WORKERS), USAGE_JOURNAL_DIR: journals, USAGE_APPLY_MS: '100', MAX_CONCURRENT_REQUESTS: '64',
    });
    await until('both workers serving', () => serving(server) >= WORKERS);
    keys ??= (await request(`${server.url}/Property?$select=ListingKey&$top=20`, { token: TEST_TOKEN })).json.value.map((r: { ListingKey: string }) => r.ListingKey);
    return server;
  }

  /** Class A fetches by key on connections of their own; resolves with how many answered 200 (all must). */
  async function fetchKeys(server: ServerProcess, token: string, n: number): Promise<number> {
    const statuses = await Promise.all(Array.from({ length: n }, async (_, i) => (await fetchAlone(`${server.url}/Property('${keys[i % keys.length]}')`, token)).status));
    expect(statuses.filter((s) => s !== 200), 'statuses other than 200').to.deep.equal([]);
    return n;
  }

  async function stopCluster(server: ServerProcess): Promise<void> {
    expect(await stop(server), server.output()).to.equal(0);
  }

  it('two worker processes answer, each counting in a journal of its own', async function () {
    this.timeout(60_000);
    const server = await startCluster();
    try {
      const workers = childPids(server.child.pid!);
      expect(workers).to.have.length(WORKERS);
      await fetchKeys(server, TEST_TOKEN, 20);
      // Each journal names its process; both workers have entries: both answered.
      const counted = new Set<number>();
      for (const file of readdirSync(journals)) {
        const [header, ...entries] = readFileSync(join(journals, file), 'utf8').trim().split('\n');
        if (entries.length > 0) counted.add(Number(header.split('\t')[4]));
      }
      expect([...counted].filter((pid) => workers.includes(pid)).sort()).to.deep.equal([...workers].sort());
    } finally {
      await stopCluster(server);
    }
  });

  it('a killed worker is replaced by a new one, and the port keeps answering', async function () {
    this.timeout(60_000);
    const server = await startCluster();
    try {
      const [victim, other] = childPids(server.child.pid!);
      process.kill(victim, 'SIGKILL');
      await server.waitFor(new RegExp(`worker ${victim} was killed \\(SIGKILL\\); starting another`));
      await until('a replacement serving', () => serving(server) >= WORKERS + 1);
      const now = childPids(server.child.pid!);
      expect(now).to.have.length(WORKERS).and.include(other).and.not.include(victim);
      await fetchKeys(server, TEST_TOKEN, 10);
    } finally {
      await stopCluster(server);
    }
  });

  it('SIGHUP replaces every worker one at a time while requests keep coming: none fails, and usage is exact after a kill too', async function () {
    this.timeout(90_000);
    const added = await runCli(db.url, ['clients', 'add', '--name', 'Cluster counter', '--static-token']);
    const { id, token } = parseCredentials(added.stdout);
    const server = await startCluster();
    let sent = 0;
    try {
      sent += await fetchKeys(server, token!, 30);
      process.kill(childPids(server.child.pid!)[0], 'SIGKILL');
      await until('a replacement serving', () => serving(server) >= WORKERS + 1);
      sent += await fetchKeys(server, token!, 30);
      const before = childPids(server.child.pid!);
      let loading = true;
      const failures: string[] = [];
      const load = Array.from({ length: 3 }, async () => {
        while (loading) {
          const status = await fetchAlone(`${server.url}/Property('${keys[sent % keys.length]}')`, token!).then((r) => r.status, (e: Error) => e.message);
          if (status === 200) sent++;
          else failures.push(String(status));
        }
      });
      server.child.kill('SIGHUP');
      await server.waitFor(/reload done in/, 60_000);
      loading = false;
      await Promise.all(load);
      expect(failures, `requests lost during the reload; the cluster said:\n${server.output().slice(-3000)}`).to.deep.equal([]);
      const after = childPids(server.child.pid!);
      expect(after).to.have.length(WORKERS);
      expect(after.filter((pid) => before.includes(pid)), 'workers left from before the reload').to.deep.equal([]);
    } finally {
      await stopCluster(server);
    }
    const usage = await runCli(db.url, ['usage', '--json', '--client', id]);
    const rows = JSON.parse(usage.stdout.trim().split('\n').pop()!) as { class: string; count: number }[];
    expect(rows.filter((r) => r.class === 'A').reduce((n, r) => n + r.count, 0), `class A transactions counted; usage said ${usage.stdout}${usage.stderr}`).to.equal(sent);
    expect(rows.filter((r) => r.class === 'B')).to.deep.equal([]);
  });
});
