/**
 * docs/operating.md "Production run" and "Exit codes": the server stops like a service. SIGTERM lets a response in progress
 * finish (or cuts it at SHUTDOWN_TIMEOUT_MS), refuses new connections meanwhile, and the process exits 0; `npm start`
 * serves the built code and passes SIGTERM on, so that no server process outlives it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { TEST_TOKEN } from './support/http';
import { runCli } from './support/licence-http';
import { until } from './support/poll';
import { alive, childPids, spawnServer } from './support/server-process';
import { stalledReader } from './support/stalled-reader';

const LISTINGS = 400;
/** Every listing with every expansion: several megabytes, more than the sockets' buffers hold for a reader that waits. */
const LARGE_PAGE = `/Property?$top=${LISTINGS}&$expand=Media,OpenHouse,historyTransactional,PropertyRooms,PropertyUnits`;
const CHUNKED_END = '\r\n0\r\n\r\n';

describeEachDatabase('Stopping like a service: SIGTERM drains requests in progress, then exit 0', (target) => {
  let db: TestDatabase;
  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    const seeded = await runCli(db.url, ['seed', '--listings', String(LISTINGS)], 170_000);
    expect(seeded.code, seeded.stderr).to.equal(0);
  });
  after(async () => db?.drop());

  const start = (env: Record<string, string>) => spawnServer(db.url, { DEMO_TOKEN: TEST_TOKEN, MAX_PAGE_SIZE: String(LISTINGS), ...env });

  it('a large page being read when SIGTERM comes is written to its end; new connections are refused; exit 0', async function () {
    this.timeout(60_000);
    const server = await start({ SHUTDOWN_TIMEOUT_MS: '30000' });
    const reader = stalledReader(`${server.url}${LARGE_PAGE}`, TEST_TOKEN, { Prefer: `odata.maxpagesize=${LISTINGS}` });
    try {
      expect(await reader.statusLine).to.equal('HTTP/1.1 200 OK');
      server.child.kill('SIGTERM');
      await server.waitFor(/shutting down \(SIGTERM/);
      let refused = false;
      await fetch(`${server.url}/`).catch(() => { refused = true; });
      expect(refused, 'a new connection while draining').to.equal(true);
      expect(alive(server.child.pid!), 'still draining while the reader waits').to.equal(true);
      const body = (await reader.drain()).toString('latin1');
      expect(body.length, `${body.length} bytes`).to.be.above(2 << 20);
      expect(body.endsWith(CHUNKED_END), 'the chunked body ends properly').to.equal(true);
      await server.waitFor(/stopped in/);
      await new Promise((done) => (server.child.exitCode === null ? server.child.once('exit', done) : done(undefined)));
      expect(server.child.exitCode).to.equal(0);
    } finally {
      reader.close();
      await server.kill();
    }
  });

  it('a reader that takes nothing is cut at SHUTDOWN_TIMEOUT_MS, and the process still exits 0', async function () {
    this.timeout(60_000);
    const server = await start({ SHUTDOWN_TIMEOUT_MS: '1000' });
    const reader = stalledReader(`${server.url}${LARGE_PAGE}`, TEST_TOKEN, { Prefer: `odata.maxpagesize=${LISTINGS}` });
    try {
      expect(await reader.statusLine).to.equal('HTTP/1.1 200 OK');
      const signalled = Date.now();
      const exited = new Promise<number | null>((done) => server.child.once('exit', (code) => done(code)));
      server.child.kill('SIGTERM');
      expect(await exited).to.equal(0);
      const took = Date.now() - signalled;
      expect(took, 'the drain bound, then closing').to.be.within(900, 6000);
      const body = (await reader.drain()).toString('latin1');
      expect(body.endsWith(CHUNKED_END), 'the response was cut').to.equal(false);
    } finally {
      reader.close();
      await server.kill();
    }
  });
});

describe('npm start', () => {
  const root = resolve(__dirname, '../..');

  it('serves the built code, and SIGTERM to npm stops every server process (primary and workers) with exit 0', async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'reso-npm-'));
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', WORKERS: '2', SEED_LISTINGS: '0', DATABASE_URL: `sqlite:${join(dir, 'npm.sqlite')}` };
    delete env.DEMO_TOKEN;
    const npm = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    npm.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    const exited = new Promise<number | null>((done) => npm.once('exit', (code) => done(code)));
    const tree = new Set<number>();
    const walk = (pid: number): void => { for (const c of childPids(pid)) { tree.add(c); walk(c); } };
    try {
      await until(() => `two workers serving:\n${out}`, () => {
        if (npm.exitCode !== null) throw new Error(`npm exited (${npm.exitCode}) before two workers served:\n${out}`);
        return (out.match(/serving http/g) ?? []).length >= 2;
      }, 30_000);
      walk(npm.pid!);
      expect(out, 'npm start on a current build').not.to.match(/building/);
      expect(tree.size, `npm's processes: ${[...tree].join(' ')}`).to.be.at.least(3);
      npm.kill('SIGTERM');
      expect(await exited, out).to.equal(0);
      await until(() => `npm's processes gone (left: ${[...tree].filter(alive).join(' ')})`, () => ![...tree].some(alive), 10_000);
      expect([...tree].filter(alive), 'processes left running').to.deep.equal([]);
    } finally {
      // Whatever failed, nothing outlives the test (an orphan would hold npm's output open, and mocha with it).
      walk(npm.pid!);
      for (const pid of [npm.pid!, ...tree]) if (alive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
