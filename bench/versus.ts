/**
 * This build's product against another build's (a checkout of an earlier commit, built), in the same run: each
 * `reso-server serve` in a process of its own pinned to CPU 1, the load generator on CPU 0, rounds interleaved
 * (this, other; other, this; …) as bench/run.ts does, each on its own database holding the same demo data (a
 * build may not run on a database an other build migrated). Scenarios: key (rotating over real keys), page (the
 * first 100 in the default order), filtered (ModificationTimestamp gt the middle listing's) and walk (every
 * listing by nextLink, pages of 1000). Both must answer the same records first. The figure is this/other: 1.00
 * means the change between the builds costs the hot path nothing (the same build against itself gives the noise).
 *
 *   node dist/bench/versus.js --other ../wt-before --database sqlite:.bench/listings-20000.sqlite \
 *     --other-database sqlite:../wt-before/.bench/listings-20000.sqlite [--duration 8] [--rounds 3] [--scenarios key,page,filtered,walk]
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { listingFacts } from './listing-facts';
import { cpuSeconds } from './process-cpu';
import { servingAt } from './product-process';
import { walk } from './walk';

interface Side {
  readonly name: string;
  readonly child: ChildProcess;
  readonly base: string;
}
interface Round {
  readonly perSecond: number;
  readonly cpuSeconds: number;
  readonly units: number;
}

const TOKEN = randomBytes(24).toString('base64url');
const HEADERS = { Authorization: `Bearer ${TOKEN}` };
const WALK_PAGE = 1000;

function argOf(name: string, fallback?: string): string {
  const i = process.argv.indexOf(name);
  const v = i < 0 ? fallback : process.argv[i + 1];
  if (v === undefined) throw new Error(`${name} is needed`);
  return v;
}

function start(name: string, checkout: string, databaseUrl: string): Promise<Side> {
  const env = {
    ...process.env, DATABASE_URL: databaseUrl, PORT: '0', WORKERS: '1', SEED_LISTINGS: '0', DEMO_TOKEN: TOKEN, NODE_ENV: 'production',
    PAGE_SIZE: '100', MAX_PAGE_SIZE: String(WALK_PAGE), MAX_CONCURRENT_REQUESTS: '64', BENCH_PARENT_PID: String(process.pid),
  };
  const child = spawn('taskset', ['-c', '1', process.execPath, join(checkout, 'dist/bench/product-server.js')], { cwd: checkout, env, stdio: ['ignore', 'pipe', 'inherit'] });
  return servingAt(child, name).then((base) => ({ name, child, base }));
}

/** The server's process: `taskset` execs node, so the child's pid is the server's. */
const pidOf = (s: Side) => s.child.pid;

function load(side: Side, path: (i: number) => string, seconds: number): Promise<autocannon.Result> {
  let n = 0;
  const url = new URL(side.base);
  return new Promise((done, fail) => autocannon({
    url: url.origin, connections: 16, duration: seconds, timeout: 30, headers: HEADERS,
    requests: [{ setupRequest: (req) => ({ ...req, path: path(n++) }) }],
  }, (err, r) => (err ? fail(err) : r.non2xx || r.errors ? fail(new Error(`${side.name}: ${r.non2xx} non-2xx, ${r.errors} errors`)) : done(r))));
}

async function requestsRound(side: Side, path: (i: number) => string, duration: number): Promise<Round> {
  await load(side, path, 2);
  const before = cpuSeconds(pidOf(side));
  const r = await load(side, path, duration);
  return { perSecond: r.requests.total / r.duration, cpuSeconds: cpuSeconds(pidOf(side)) - before, units: r.requests.total };
}

async function walkRound(side: Side): Promise<Round> {
  const before = cpuSeconds(pidOf(side));
  const w = await walk(`${side.base}/Property`, { headers: { ...HEADERS, Prefer: `odata.maxpagesize=${WALK_PAGE}` }, keyField: 'ListingKey' });
  return { perSecond: w.records / w.seconds, cpuSeconds: cpuSeconds(pidOf(side)) - before, units: w.records };
}

/** The same records from both (control information aside: a context URL names its port, a nextLink its secret). */
async function sameAnswers(a: Side, b: Side, paths: readonly string[]): Promise<void> {
  const records = (body: Record<string, unknown>) => JSON.stringify(body.value ?? Object.fromEntries(Object.entries(body).filter(([k]) => !k.startsWith('@'))));
  for (const p of paths) {
    const [x, y] = await Promise.all([a, b].map(async (s) => records(await (await fetch(`${new URL(s.base).origin}${p}`, { headers: HEADERS })).json() as Record<string, unknown>)));
    if (x !== y || x.length < 100) throw new Error(`${p}: the two builds answer differently\n${x.slice(0, 300)}\n${y.slice(0, 300)}`);
  }
}

async function main(): Promise<void> {
  const other = resolve(argOf('--other'));
  const duration = Number(argOf('--duration', '8'));
  const rounds = Number(argOf('--rounds', '3'));
  const data = await listingFacts(argOf('--database'));
  execFileSync('taskset', ['-a', '-pc', '0', String(process.pid)], { stdio: 'ignore' });
  const sides = [await start('this', resolve(__dirname, '../..'), argOf('--database')), await start('other', other, argOf('--other-database'))];
  try {
    const key = (i: number) => `/odata/Property('${encodeURIComponent(data.keys[i % data.keys.length])}')`;
    const filtered = `/odata/Property?$filter=${encodeURIComponent(`ModificationTimestamp gt '${data.middle}'`)}`;
    await sameAnswers(sides[0], sides[1], [key(0), key(500), '/odata/Property', filtered]);
    const scenarios: [string, (s: Side) => Promise<Round>][] = [
      ['key', (s) => requestsRound(s, key, duration)],
      ['page', (s) => requestsRound(s, () => '/odata/Property', duration)],
      ['filtered', (s) => requestsRound(s, () => filtered, duration)],
      ['walk (records/s)', walkRound],
    ];
    console.log(`| scenario | this | other | this/other (best) | this/other per server CPU-s | rounds, this; other |\n|---|---:|---:|---:|---:|---|`);
    const only = argOf('--scenarios', 'key,page,filtered,walk').split(',');
    for (const [name, run] of scenarios.filter(([n]) => only.includes(n.split(' ')[0]))) {
      const got: Record<string, Round[]> = { this: [], other: [] };
      if (name.startsWith('walk')) for (const s of sides) await walkRound(s); // untimed: the first walk reads the file into the page cache
      for (let r = 0; r < rounds; r++) for (const s of r % 2 ? [...sides].reverse() : sides) got[s.name].push(await run(s));
      const best = (rs: Round[]) => Math.max(...rs.map((x) => x.perSecond));
      const perCpu = (rs: Round[]) => rs.reduce((a, x) => a + x.units, 0) / rs.reduce((a, x) => a + x.cpuSeconds, 0);
      const list = (rs: Round[]) => rs.map((x) => x.perSecond.toFixed(0)).join(', ');
      console.log(`| ${name} | ${best(got.this).toFixed(0)} | ${best(got.other).toFixed(0)} | **${(best(got.this) / best(got.other)).toFixed(2)}** `
        + `| ${(perCpu(got.this) / perCpu(got.other)).toFixed(2)} | ${list(got.this)}; ${list(got.other)} |`);
    }
  } finally {
    for (const s of sides) s.child.kill();
  }
}

main().catch((e: Error) => { console.error(`[versus] ${e.stack ?? e.message}`); process.exit(1); });
