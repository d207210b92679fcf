/**
 * `npm run bench [-- options]`: the product against a bare Express + driver baseline over the same database.
 *
 * Seeds N demo listings into a benchmark database (reused while it holds the same data), starts the product
 * (`reso-server serve`) and bench/baseline-server as child processes, and measures scenario families, each
 * against the baseline in the same run:
 * - key-and-page: fetch by key (rotating through real ListingKeys) and the first page of 100, under wrk (bench/wrk.ts:
 *   every request rate and latency here is wrk's, which does not parse bodies);
 * - filtered: the first page of `$filter=ModificationTimestamp gt '<T>'` (half the listings match);
 * - replication: a full walk of every listing through @odata.nextLink at the maximum page size, by a Node client
 *   (bench/walk.ts: it must read each page's nextLink, so its records/s include the client);
 * - deep: the latency of the first page against a page 90% of the way through the walk;
 * - expand: the first page with `$expand=Media` against a baseline doing the page and one media query by hand, and the
 *   number of SQL statements per page (bench/counting-server.ts) for several page sizes and navigations;
 * - auth-cost: fetch by key on the product against the same product without authentication, licensing and
 *   metering (bench/anonymous-server.ts); that ratio's target is AUTH_TARGET_RATIO.
 * Rounds alternate (BP PB BP …) so drift on a shared machine hits both; the best round of each counts.
 * The figure that matters is the ratio product/baseline (target: at least 0.60).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import * as mysql from 'mysql2/promise';
import { serviceModel } from '../generated';
import { seedDemoData } from '../src/demo/demo-data';
import { ListingService } from '../src/process/service';
import { openDatabase } from '../src/storage/db/open-database';
import { CLIENTS_TABLE, SETTINGS_TABLE, TOKENS_TABLE, USAGE_TABLE, WEBHOOKS_TABLE } from '../src/storage/tables/internal-schema';
import { REVISION_COLUMN } from '../src/model/service-model';
import { walk, WalkResult } from './walk';
import { captureWalk } from './static-walk';
import { cpuSeconds } from './process-cpu';
import { peakRssBytes, RssSpan, sampleRss } from './process-memory';
import { exitUnlessWrk, wrk, WrkResult } from './wrk';

const ROOT = resolve(__dirname, '../..');
const BENCH_DIR = join(ROOT, '.bench');
const DOC = join(ROOT, 'docs/benchmarks.md');
const TARGET_RATIO = 0.6;
/** auth-cost: the product with authentication and metering against itself without them. */
const AUTH_TARGET_RATIO = 0.8;
const KEY_SAMPLE = 1000;
const MYSQL_DB = 'reso_bench';
/** expand: the navigations of the statements-per-page table, and its page sizes. */
const ALL_NAVIGATIONS = ['Media', 'OpenHouse', 'historyTransactional', 'PropertyRooms', 'PropertyUnits'];
const COUNT_PAGE_SIZES = [10, 50, 100];
/** Where the deep page starts, as a fraction of the walk. */
const DEEP_AT = 0.9;
/** Page size of the filtered and deep-page scenarios: the product's default (PAGE_SIZE). */
const PAGE = 100;

const SCENARIOS = ['key', 'page', 'filtered', 'replication', 'deep', 'expand', 'auth-cost'] as const;
type ScenarioName = typeof SCENARIOS[number];

const USAGE = `Usage: node dist/bench/run.js [options]   (npm run bench -- [options])

  Needs wrk, the load generator (apt-get install -y wrk), and taskset to pin it and the servers.

  --scenarios LIST  comma-separated, from ${SCENARIOS.join(',')} (default: all).
                    Families: key-and-page (key, page), filtered, replication, deep, expand, auth-cost
  --listings N      demo listings in the benchmark database (default 20000)
  --duration S      seconds per wrk measurement (default 10)
  --connections C   concurrent connections under wrk (default 16)
  --rounds R        wrk measurements per server and scenario, in the order BP PB BP … (default 3)
  --walk-rounds W   replication: timed walks per server, after one untimed warm-up walk each (default 5)
  --walk-page-size P  replication: the product runs with MAX_PAGE_SIZE=P and the walk sends
                    Prefer: odata.maxpagesize=P; the baseline walks with limit=P; the deep-page
                    capture walk uses it too (default 1000)
  --warmup S        seconds of discarded load before each measurement (default 2)
  --settle S        seconds of discarded load before a server's first measurement of a scenario, in place of
                    --warmup: V8 goes on compiling a server's hot code for about 15 s of load, longer the more
                    code the path runs (default 20)
  --db sqlite|mysql database (default sqlite: .bench/listings-N.sqlite; mysql: database ${MYSQL_DB} on
                    MYSQL_URL, default mysql://root@127.0.0.1:3306/test)
  --mysql-database NAME  mysql: the benchmark database's name (default ${MYSQL_DB}); one per data size
                    spares reseeding when runs of different sizes alternate
  --without-children  seed the listings (with offices and members) but not their media, rooms, open houses…:
                    the same Property records in a fraction of the disk (about 6 KB a listing instead of
                    70 KB), for walks of a million listings; its own database (listings-N-without-children)
  --reseed          rebuild the benchmark database even if it holds the same data
  --drop            mysql: drop the benchmark database at the end (default: keep it for the next run)
  --no-pin          do not pin the servers to CPU 1 and the load generator (wrk) to CPU 0
  --write           record the results in docs/benchmarks.md`;

interface Options {
  scenarios: Set<ScenarioName>;
  walkPageSize: number;
  walkRounds: number;
  listings: number;
  duration: number;
  connections: number;
  rounds: number;
  warmup: number;
  settle: number;
  db: 'sqlite' | 'mysql';
  mysqlDatabase: string;
  withoutChildren: boolean;
  reseed: boolean;
  drop: boolean;
  pin: boolean;
  write: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    scenarios: new Set(SCENARIOS), walkPageSize: 1000, walkRounds: 5,
    listings: 20000, duration: 10, connections: 16, rounds: 3, warmup: 2, settle: 20,
    db: 'sqlite', mysqlDatabase: MYSQL_DB, withoutChildren: false, reseed: false, drop: false, pin: true, write: false,
  };
  const num = (i: number, name: string, min: number): number => {
    const n = Number(argv[i]);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name} needs an integer of at least ${min}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--scenarios': {
        const names = String(argv[++i] ?? '').split(',').map((n) => n.trim()).filter(Boolean);
        const bad = names.filter((n) => !(SCENARIOS as readonly string[]).includes(n));
        if (!names.length || bad.length) throw new Error(`--scenarios takes a list from ${SCENARIOS.join(',')}${bad.length ? ` (not ${bad.join(', ')})` : ''}`);
        o.scenarios = new Set(names as ScenarioName[]);
        break;
      }
      case '--walk-page-size': o.walkPageSize = num(++i, a, 1); if (o.walkPageSize > 10_000) throw new Error('--walk-page-size is at most 10000 (the product\'s MAX_PAGE_SIZE limit)'); break;
      case '--walk-rounds': o.walkRounds = num(++i, a, 2); break;
      case '--listings': o.listings = num(++i, a, 100); break;
      case '--duration': o.duration = num(++i, a, 1); break;
      case '--connections': o.connections = num(++i, a, 1); break;
      case '--rounds': o.rounds = num(++i, a, 1); break;
      case '--warmup': o.warmup = num(++i, a, 0); break;
      case '--settle': o.settle = num(++i, a, 0); break;
      case '--db': {
        const v = argv[++i];
        if (v !== 'sqlite' && v !== 'mysql') throw new Error('--db is sqlite or mysql');
        o.db = v;
        break;
      }
      case '--mysql-database': {
        const v = String(argv[++i] ?? '');
        if (!/^[A-Za-z0-9_]{1,64}$/.test(v)) throw new Error('--mysql-database takes a name of letters, digits and _');
        o.mysqlDatabase = v;
        break;
      }
      case '--without-children': o.withoutChildren = true; break;
      case '--reseed': o.reseed = true; break;
      case '--drop': o.drop = true; break;
      case '--no-pin': o.pin = false; break;
      case '--write': o.write = true; break;
      case '--help': case '-h': console.log(USAGE); process.exit(0); // eslint-disable-line no-fallthrough
      default: throw new Error(`unknown argument ${a}\n\n${USAGE}`);
    }
  }
  return o;
}

const log = (line: string) => console.log(`[bench] ${line}`);
let loadAtStart = NaN;

// ---------------------------------------------------------------------------------------------------------
// The benchmark database

/** What the seeded data depends on: if any of it changes, a kept benchmark database is rebuilt. */
function dataFingerprint(listings: number, withoutChildren: boolean): string {
  const h = createHash('sha256').update(`listings=${listings}\n${withoutChildren ? 'without children\n' : ''}`);
  const files = [
    join(ROOT, 'dist/generated/storage-schema.js'),
    join(ROOT, 'dist/generated/field-tables.js'),
    join(ROOT, 'dist/src/storage/records/record-codec.js'),
  ];
  const seedDir = join(ROOT, 'dist/src/demo');
  if (existsSync(seedDir)) for (const f of readdirSync(seedDir).sort()) if (f.endsWith('.js')) files.push(join(seedDir, f));
  for (const f of files) if (existsSync(f)) h.update(f).update(readFileSync(f));
  return h.digest('hex').slice(0, 16);
}

interface BenchDatabase {
  url: string;
  /** Safe to print: no credentials. */
  description: string;
  cleanup(): Promise<void>;
}

async function prepareDatabase(o: Options): Promise<BenchDatabase> {
  mkdirSync(BENCH_DIR, { recursive: true });
  const fingerprint = dataFingerprint(o.listings, o.withoutChildren);
  let url: string;
  let description: string;
  let wipe: () => Promise<void>;
  let cleanup = async () => undefined;
  let stampFile: string;
  if (o.db === 'sqlite') {
    const file = join(BENCH_DIR, `listings-${o.listings}${o.withoutChildren ? '-without-children' : ''}.sqlite`);
    url = `sqlite:${file}`;
    description = `sqlite:${relative(ROOT, file)}`;
    stampFile = `${file}.stamp`;
    wipe = async () => { for (const s of ['', '-wal', '-shm', '.stamp']) rmSync(`${file}${s}`, { force: true }); };
  } else {
    const admin = new URL(process.env.MYSQL_URL || 'mysql://root@127.0.0.1:3306/test');
    const target = new URL(admin.href);
    target.pathname = `/${o.mysqlDatabase}`;
    url = target.href;
    description = `mysql://${target.host}/${o.mysqlDatabase}`;
    if (o.withoutChildren) throw new Error('--without-children is for SQLite (a MariaDB database of that data: its own --mysql-database and a seed of your own)');
    stampFile = join(BENCH_DIR, `mysql-${o.mysqlDatabase}.stamp`);
    const server = new URL(admin.href);
    server.pathname = '/'; // no default database: MYSQL_URL's may not exist, and ours may not yet
    const sql = async (statement: string) => {
      const c = await mysql.createConnection({ uri: server.href, connectTimeout: 5000 });
      try { await c.query(statement); } finally { await c.end(); }
    };
    await sql(`CREATE DATABASE IF NOT EXISTS ${o.mysqlDatabase} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    wipe = async () => {
      rmSync(stampFile, { force: true });
      await sql(`DROP DATABASE IF EXISTS ${o.mysqlDatabase}`);
      await sql(`CREATE DATABASE ${o.mysqlDatabase} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    };
    if (o.drop) cleanup = async () => { rmSync(stampFile, { force: true }); await sql(`DROP DATABASE IF EXISTS ${o.mysqlDatabase}`); };
  }

  const stamp = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : '';
  let count = -1;
  if (!o.reseed && stamp === fingerprint) {
    const service = new ListingService(serviceModel, openDatabase(url));
    try {
      await service.prepare();
      count = await service.store('Property').count();
    } catch (e) {
      log(`cannot reuse ${description}: ${(e as Error).message}`);
    } finally {
      await service.close();
    }
  }
  if (count === o.listings) {
    log(`reusing ${description} (${count} listings)`);
  } else {
    await wipe();
    log(`seeding ${o.listings} listings into ${description} (once; kept for later runs)…`);
    const started = Date.now();
    const service = new ListingService(serviceModel, openDatabase(url));
    try {
      await service.prepare();
      let last = 0;
      await seedDemoData(service, { listings: o.listings, children: !o.withoutChildren }, (line) => {
        if (Date.now() - last > 5000) { last = Date.now(); log(`  ${line}`); }
      });
      count = await service.store('Property').count();
    } finally {
      await service.close();
    }
    if (count !== o.listings) throw new Error(`seeding wrote ${count} listings, not ${o.listings}`);
    writeFileSync(stampFile, `${fingerprint}\n`);
    log(`seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  return { url, description, cleanup };
}

/** About KEY_SAMPLE real ListingKeys spread over the table, in a fixed shuffled order. */
async function sampleKeys(url: string): Promise<string[]> {
  const db = openDatabase(url);
  try {
    const rows = await db.all('SELECT ListingKey FROM Property ORDER BY ListingKey');
    const all = rows.map((r) => String(r.ListingKey));
    const step = Math.max(1, Math.floor(all.length / KEY_SAMPLE));
    const keys = all.filter((_, i) => i % step === 0).slice(0, KEY_SAMPLE);
    let s = 12345; // deterministic shuffle so consecutive requests do not walk the index in order
    for (let i = keys.length - 1; i > 0; i--) {
      s = (s * 1103515245 + 12345) % 2147483648;
      const j = s % (i + 1);
      [keys[i], keys[j]] = [keys[j], keys[i]];
    }
    return keys;
  } finally {
    await db.close();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Child servers

interface ServerProcess {
  name: string;
  port: number;
  /** Sent with every request to this server (the product's bearer token). */
  headers: Record<string, string>;
  child: ChildProcess;
  output(): string;
}

const children = new Set<ChildProcess>();
/** Children being stopped on purpose: their exit is not an error. */
const stopping = new Set<ChildProcess>();

function killAllNow(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
process.on('exit', killAllNow);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(sig, () => {
    console.error(`[bench] ${sig}: stopping the servers`);
    killAllNow();
    process.exit(130);
  });
}

function startChild(name: string, script: string, args: string[], env: NodeJS.ProcessEnv, pin: boolean, headers: Record<string, string> = {}): Promise<ServerProcess> {
  const command = pin ? 'taskset' : process.execPath;
  const argv = pin ? ['-c', '1', process.execPath, script, ...args] : [script, ...args];
  const child = spawn(command, argv, { cwd: ROOT, env: { ...process.env, ...env, BENCH_PARENT_PID: String(process.pid) }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let tail = '';
  const keep = (chunk: Buffer) => { tail = (tail + chunk.toString()).slice(-4000); };
  return new Promise<ServerProcess>((resolveStart, rejectStart) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
      rejectStart(new Error(`${name} server ${why}\n--- its output ---\n${tail}`));
    };
    // Generous: on a freshly seeded large database the product's first start can take a while.
    const timer = setTimeout(() => fail('did not start within 180 s'), 180_000);
    child.on('error', (e) => fail(`could not be started: ${e.message}`));
    child.on('exit', (code, signal) => {
      children.delete(child);
      if (!settled) fail(`exited during start (${signal ?? `code ${code}`})`);
      else if (!stopping.has(child)) {
        // Code 0 without a signal of ours: the product's SIGTERM/SIGINT handler ran, so something else signalled it.
        console.error(`[bench] ${name} server exited unexpectedly (${signal ?? `code ${code}`}${code === 0 ? ': stopped by a signal from another process?' : ''})\n${tail}`);
      }
    });
    child.stderr!.on('data', keep);
    child.stdout!.on('data', (chunk: Buffer) => {
      keep(chunk);
      if (settled) return;
      if (/is not reachable/.test(tail)) { fail('cannot reach its database'); return; }
      const m = /(?:serving|listening on) http:\/\/[^:/\s]+:(\d+)/.exec(tail);
      if (m) {
        settled = true;
        clearTimeout(timer);
        resolveStart({ name, port: Number(m[1]), headers, child, output: () => tail });
      }
    });
  });
}

/** SIGTERM, then SIGKILL if it has not exited within 5 s. */
function stopChild(s: ServerProcess): Promise<void> {
  const c = s.child;
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  stopping.add(c);
  return new Promise<void>((done) => {
    const timer = setTimeout(() => { c.kill('SIGKILL'); }, 5000);
    c.once('exit', () => { clearTimeout(timer); done(); });
    c.kill('SIGTERM');
  });
}

function assertAlive(s: ServerProcess): void {
  if (s.child.exitCode !== null || s.child.signalCode !== null) {
    throw new Error(`${s.name} server has died\n--- its output ---\n${s.output()}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Scenarios and measurement

interface Target {
  server: ServerProcess;
  /** Asked for in turn, one request each (a Lua script of wrk's cycles through them). */
  paths: readonly string[];
  headers?: Record<string, string>;
}

interface Measurement {
  reqPerSec: number;
  /** Latency, ms: wrk's percentiles and mean. */
  p50: number;
  p99: number;
  latencyMean: number;
  bytesPerReq: number;
  /** The server's CPU use during the measurement, in % of one core (NaN where /proc is missing). */
  serverCpu: number;
  /** wrk's CPU use during the measurement, in % of one core (the load generator's: near 100% it is the limit). */
  loadCpu: number;
  requests: number;
  /** Responses to the warm-up load before it (not measured; a server that meters counts them too). */
  warmupRequests: number;
  serverCpuSeconds: number;
}

/** One wrk run at the target, on CPU 0 when pinned; a failed request fails it, with the server's last output. */
async function load(what: string, target: Target, seconds: number, o: Options): Promise<WrkResult> {
  assertAlive(target.server);
  const headers = { ...target.server.headers, ...target.headers };
  try {
    return await wrk({ origin: `http://127.0.0.1:${target.server.port}`, paths: target.paths, headers, connections: o.connections, seconds, cpu: o.pin ? 0 : undefined });
  } catch (e) {
    throw new Error(`${what}: ${(e as Error).message}\n--- ${target.server.name} server output ---\n${target.server.output()}`);
  }
}

/** `first`: the server's first measurement of this scenario, which is given `o.settle` seconds of warm-up. */
async function measure(what: string, target: Target, o: Options, first = false): Promise<Measurement> {
  let warmupRequests = 0;
  const warmup = first ? Math.max(o.settle, o.warmup) : o.warmup;
  if (warmup > 0) warmupRequests = (await load(`${what} (warm-up)`, target, warmup, o)).requests;
  const cpuBefore = cpuSeconds(target.server.child.pid);
  const r = await load(what, target, o.duration, o);
  const cpu = cpuSeconds(target.server.child.pid) - cpuBefore;
  assertAlive(target.server);
  const m = {
    reqPerSec: r.requestsPerSecond,
    p50: r.latency.p50,
    p99: r.latency.p99,
    latencyMean: r.latency.mean,
    bytesPerReq: r.bytes / r.requests,
    serverCpu: (100 * cpu) / r.seconds,
    loadCpu: (100 * r.cpuSeconds) / r.seconds,
    requests: r.requests,
    warmupRequests,
    serverCpuSeconds: cpu,
  };
  log(`  ${what}: ${m.reqPerSec.toFixed(0)} req/s, p50 ${ms(m.p50)} ms, mean ${ms(m.latencyMean)} ms, p99 ${ms(m.p99)} ms, `
    + `CPU server ${m.serverCpu.toFixed(0)}% wrk ${m.loadCpu.toFixed(0)}%`);
  return m;
}

/** A latency in ms, to three significant figures or so. */
const ms = (x: number) => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));

interface ScenarioResult {
  name: string;
  product: Measurement[];
  baseline: Measurement[];
}

const best = (ms: Measurement[]) => ms.reduce((a, b) => (b.reqPerSec > a.reqPerSec ? b : a));
const mean = (ms: Measurement[]) => ms.reduce((a, b) => a + b.reqPerSec, 0) / ms.length;
/** Requests per second of server CPU over all rounds: what a request costs the server, whatever else ran. */
const perCpuSecond = (ms: Measurement[]) => ms.reduce((a, b) => a + b.requests, 0) / ms.reduce((a, b) => a + b.serverCpuSeconds, 0);
const cpuRatio = (r: ScenarioResult) => perCpuSecond(r.product) / perCpuSecond(r.baseline);

async function get(server: ServerProcess, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { headers: server.headers });
  return { status: res.status, body: await res.text() };
}

async function getValue(server: ServerProcess, path: string): Promise<Record<string, unknown>[]> {
  const r = await get(server, path);
  if (r.status !== 200) throw new Error(`${server.name} GET ${path.slice(0, 200)}: status ${r.status}\n${r.body.slice(0, 500)}`);
  return (JSON.parse(r.body) as { value: Record<string, unknown>[] }).value;
}

/** Both servers must answer 200 with the same records before their speed means anything. */
async function checkKeyAndPage(product: ServerProcess, baseline: ServerProcess, keys: string[]): Promise<void> {
  for (const key of keys.slice(0, 5)) {
    const p = await get(product, productKeyPath(key));
    const b = await get(baseline, baselineKeyPath(key));
    if (p.status !== 200 || b.status !== 200) throw new Error(`key ${key}: product ${p.status}, baseline ${b.status}\n${p.body.slice(0, 500)}`);
    const { '@odata.context': _ctx, ...record } = JSON.parse(p.body) as Record<string, unknown>;
    if (JSON.stringify(record) !== JSON.stringify(JSON.parse(b.body))) throw new Error(`key ${key}: product and baseline serve different records`);
  }
  await checkSamePage('first page', product, '/odata/Property', baseline, '/Property');
}

async function checkSamePage(what: string, product: ServerProcess, productPath: string, baseline: ServerProcess, baselinePath: string): Promise<Record<string, unknown>[]> {
  const pv = await getValue(product, productPath);
  const bv = await getValue(baseline, baselinePath);
  if (pv.length !== PAGE || JSON.stringify(pv) !== JSON.stringify(bv)) {
    throw new Error(`${what}: product has ${pv.length} records, baseline ${bv.length}, or they differ`);
  }
  return pv;
}

const productKeyPath = (key: string) => `/odata/Property(${encodeURIComponent(`'${key.replace(/'/g, "''")}'`)})`;
const baselineKeyPath = (key: string) => `/Property/${encodeURIComponent(key)}`;
const pathOf = (link: string) => { const u = new URL(link); return `${u.pathname}${u.search}`; };

/** Positions in the data that the filtered and deep-page scenarios need, read from the database directly. */
interface DataFacts {
  listings: number;
  /** The filter's timestamp: that of the listing at the middle of the (ModificationTimestamp, ListingKey) order. */
  filterTs: string;
  /** Listings with ModificationTimestamp > filterTs. */
  filterMatches: number;
  /** Records before the deep page, a multiple of the walk page size. */
  deepAfter: number;
  /** Sort values of the last record before the deep page, and the key of its first. */
  deepTs: string;
  deepKey: string;
  deepFirstKey: string;
}

async function dataFacts(url: string, o: Options): Promise<DataFacts> {
  const db = openDatabase(url);
  try {
    const n = Number((await db.all('SELECT COUNT(*) AS n FROM Property'))[0].n);
    // Literal offsets: the runner's own reads, not a measured path.
    const at = async (i: number) => (await db.all(`SELECT ModificationTimestamp AS t, ListingKey AS k FROM Property ORDER BY ModificationTimestamp, ListingKey LIMIT 1 OFFSET ${i}`))[0];
    const mid = await at(Math.floor(n / 2) - 1);
    const filterTs = String(mid.t);
    const filterMatches = Number((await db.all('SELECT COUNT(*) AS n FROM Property WHERE ModificationTimestamp > ?', [filterTs]))[0].n);
    const p = o.walkPageSize;
    const deepAfter = Math.min(Math.max(p, Math.round((DEEP_AT * n) / p) * p), Math.floor((n - PAGE) / p) * p);
    if (deepAfter < p) throw new Error(`${n} listings are too few for a deep page at page size ${p}`);
    const last = await at(deepAfter - 1);
    const first = await at(deepAfter);
    return { listings: n, filterTs, filterMatches, deepAfter, deepTs: String(last.t), deepKey: String(last.k), deepFirstKey: String(first.k) };
  } finally {
    await db.close();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Running rounds

/** Interleaved rounds over named targets: the listed order on odd rounds, reversed on even ones. */
async function interleaved<K extends string>(scenario: string, order: readonly K[], targets: Record<K, Target>, o: Options): Promise<Record<K, Measurement[]>> {
  const out = Object.fromEntries(order.map((k) => [k, [] as Measurement[]])) as Record<K, Measurement[]>;
  const width = Math.max(...order.map((k) => k.length));
  for (let round = 1; round <= o.rounds; round++) {
    for (const k of round % 2 === 1 ? order : [...order].reverse()) {
      out[k].push(await measure(`${scenario} ${k.padEnd(width)} #${round}`, targets[k], o, round === 1));
    }
  }
  return out;
}

async function runPair(name: string, product: Target, baseline: Target, o: Options): Promise<ScenarioResult> {
  // Baseline, product; product, baseline; …: a steady drift in the machine's load favours neither.
  const r = await interleaved(name, ['baseline', 'product'] as const, { baseline, product }, o);
  return { name, product: r.product, baseline: r.baseline };
}

interface WalkMeasurement extends WalkResult {
  serverCpuSeconds: number;
  /** The server's resident memory at the walk's start, sampled peak and end. */
  rss: RssSpan;
}

async function timedWalk(what: string, server: ServerProcess, first: string, headers: Record<string, string>, keyField: string): Promise<WalkMeasurement> {
  assertAlive(server);
  const cpuBefore = cpuSeconds(server.child.pid);
  const stopSampling = sampleRss(server.child.pid);
  const w = await walk(`http://127.0.0.1:${server.port}${first}`, { headers: { ...server.headers, ...headers }, keyField });
  const rss = stopSampling();
  const serverCpuSeconds = cpuSeconds(server.child.pid) - cpuBefore;
  assertAlive(server);
  log(`  ${what}: ${w.records} records in ${w.seconds.toFixed(2)} s (${fmt(w.records / w.seconds)} records/s), `
    + `${w.requests} requests, ${(w.bytes / 1e6).toFixed(0)} MB, server CPU ${(100 * serverCpuSeconds / w.seconds).toFixed(0)}%, `
    + `RSS ${mb(rss.start)} → peak ${mb(rss.peak)} → ${mb(rss.end)} MB`);
  return { ...w, serverCpuSeconds, rss };
}

// ---------------------------------------------------------------------------------------------------------
// Report

interface Family {
  id: string;
  title: string;
  intro: (o: Options) => string;
}

const KEY_AND_PAGE: Family = {
  id: 'key-and-page',
  title: 'Fetch by key and first page',
  intro: () => `Scenarios: **key** is \`GET /odata/Property('<ListingKey>')\`, rotating through about ${KEY_SAMPLE} real keys
spread over the table, against the baseline's \`GET /Property/<key>\`; **page** is \`GET /odata/Property\`
(the first page of 100 listings in the default order) against the baseline's \`GET /Property\`.
The baseline (\`bench/baseline-server.ts\`) is bare Express 4 with the same driver (a better-sqlite3 prepared
statement or a mysql2 \`pool.execute\`) sending the stored record text as it is; no middleware.`,
};

const FILTERED: Family = {
  id: 'filtered',
  title: 'Filtered query (query language)',
  intro: () => `Scenario **filtered** is \`GET /odata/Property?$filter=ModificationTimestamp gt '<T>'\` (the timestamp
as a quoted string, the spec's form), the first page of ${PAGE} in the default order, with T the
ModificationTimestamp of the listing in the middle of the (ModificationTimestamp, ListingKey) order, so
the filter matches half the listings. The baseline does the same SQL by hand with the raw driver,
\`SELECT _record FROM Property WHERE ModificationTimestamp > ? ORDER BY ModificationTimestamp, ListingKey LIMIT ${PAGE}\`,
records joined into \`{"value":[…]}\` (\`GET /filtered?ts=<T>\`). Before measuring, both must return the
same ${PAGE} records. Columns as in the introduction.`,
};

const REPLICATION: Family = {
  id: 'replication',
  title: 'Replication walk (paging)',
  intro: () => `A full walk of every listing the way a replicating client does it: \`GET /odata/Property\` with
\`Prefer: odata.maxpagesize=P\` (the product started with \`MAX_PAGE_SIZE=P\`; P is given with each run),
then every \`@odata.nextLink\` exactly as sent (a signed \`$skiptoken\` holding the keyset position) with the
same header, until a page has none. The baseline's \`GET /walk?limit=P[&ts=…&key=…]\` runs the raw keyset
query with the form that seeks the (ModificationTimestamp, ListingKey) index on both databases,
\`ModificationTimestamp >= ? AND (ModificationTimestamp > ? OR ListingKey > ?) ORDER BY ModificationTimestamp, ListingKey LIMIT P+1\`,
and answers in the same shape with the next position as its nextLink, so both are walked by the same client
code (\`bench/walk.ts\`: one keep-alive connection; it reads the nextLink from the page's last bytes and sends
the next request as soon as a page has ended). The client does not JSON.parse the pages: parsing 5 MB of
listings takes it longer than the server needs to produce them, and the walk would measure the client. It
takes each record's key from its \`"ListingKey":"…"\` member in the bytes as they arrive
(\`bench/key-scan.ts\`), never decoding a page into a string, so it reads a page while the server writes it
(records are flat; the deep-page capture walk parses every page and checks the scan against it). Until
2026-11-28 it decoded and scanned each page after its last byte, 10–14 ms for 6.2 MB, and was itself the
limit of the fastest walks (the static pages of the wire limit were walked no faster than the product's). Every walk hashes the keys it received in order: all
walks of both servers must return the same keys in the same order and count (every listing) or the run
fails. After one untimed warm-up walk per server (the first walk of a large database reads it into the
page cache), walks alternate baseline, product / product, baseline, …; the best of each counts. **ratio** is product/baseline of records per second (wall clock, client included);
**ratio per CPU-s** is product/baseline of records per second of server CPU over all walks. The
\`$select=ListingKey\` walk is the removed-listings check (every key the feed still has), product only.
The **wire limit** is the walk at its fastest on this machine: the product's own pages of one walk, captured
after the timed walks with each nextLink pointing at the next page, served as static bodies by plain node:http
on the servers' core and walked as many times by the same client; the best walk counts.
The memory table gives each server's resident set (VmRSS, read from /proc every 25 ms during each walk): before
its first walk, the highest sample during the timed walks (the product's \`$select\` walks included), at the end
of its last walk, and the kernel's high-water mark (VmHWM) since the server started.`,
};

const DEEP: Family = {
  id: 'deep-page',
  title: 'Deep page against first page',
  intro: () => `Whether page k costs more than page 1: wrk on two fixed URLs per server, the first page and a page
${Math.round(DEEP_AT * 100)}% of the way through the walk, both of ${PAGE} records (the product's default page size). For the
product the deep URL is the \`@odata.nextLink\` captured by walking at the maximum page size up to that
point (its \`$skiptoken\` holds the keyset position, so the page is one index seek away whatever its
depth); for the baseline it is its keyset endpoint \`GET /walk?ts=…&key=…&limit=${PAGE}\` at the same position,
against \`GET /walk?limit=${PAGE}\`. Before measuring, the two servers must return the same records for the first
and for the deep page. Rounds run first/deep of one server back to back, alternating the order.
**deep/first** is the ratio of the deep page's latency to the first page's at the best round of each
(p50 and mean; ≈ 1 means the cost does not grow with depth); with C connections latency is about
C / throughput, so the ratio is that of the cost per request.`,
};

const EXPAND: Family = {
  id: 'expand',
  title: '$expand (batched expansion and metering)',
  intro: () => `Scenario **expand** is \`GET /odata/Property?$expand=Media\`: the first page of ${PAGE} listings in the default
order, each with its media (5–30 a listing in the demo data) in display order as a \`Media\` array. The baseline's
\`GET /expand\` does the least work by hand with the raw driver: the page query and ONE query for all the page's media,
\`\` SELECT ResourceRecordKey, _record FROM Media WHERE ResourceRecordKey IN (…the ${PAGE} keys…) ORDER BY ResourceRecordKey, \`Order\`, MediaKey \`\`,
spliced into the records as \`"Media":[…]\`. Before measuring, both must return the same ${PAGE} records with equal media
arrays. Columns as in the introduction; the product's figures include its usage metering (the expansion of Media
is a second class B transaction of the request, journaled with its first). After the first request the product
reads, from indexes, the page's positions and revisions and one digest of its media's revisions per listing, and
takes the listings and each one's joined media from memory (see the introduction); the baseline reads every media
record every time.

**Statements per page**: the product started in-process by \`bench/counting-server.ts\` (the same \`startServer\`
and configuration, authentication and metering on), whose database object records every SQL statement it is sent.
Each cell is the number of statements that read data for one page of N listings (\`Prefer: odata.maxpagesize=N\`)
with the navigations of its row expanded, counted around that one request; the page after it (through its
\`@odata.nextLink\`) must take the same number. Expected: 1 + the number of navigations (one batched query per
navigation per page), whatever the page size. The other statements seen around a request (token lookups, which
are cached; the meter's background application of its usage journal, once a second, when it falls inside) are
listed under the table.`,
};

const AUTH_COST: Family = {
  id: 'auth-cost',
  title: 'Cost of authentication and metering',
  intro: () => `Scenario **key** is \`GET /odata/Property('<ListingKey>')\`, rotating through the same ${KEY_SAMPLE} keys as the
key-and-page family, on the product as deployed (**normal**: the bearer token checked, the client's licence
applied, the usage count written to the usage journal before the response goes out and applied to the usage table
in the background every second) against the same build and database started by
\`bench/anonymous-server.ts\`, which makes the app with \`createApp(parts, { …, anonymous: true })\` (**anonymous**:
none of the three; an option for benchmarks only, not reachable from configuration). Both serve by the same
query path, so the ratio normal/anonymous is what authentication, licensing and metering cost; target: at least
${AUTH_TARGET_RATIO.toFixed(2)}. Before measuring, both must serve the same records and the normal server must refuse a
request without a token; after the rounds, the usage table must have counted one class A transaction for every
response the normal server sent (so metering was really on).`,
};

const INTRO_BEGIN = '<!-- bench-intro -->';
const INTRO_END = '<!-- /bench-intro -->';
const DOC_INTRO = `# Benchmarks

${INTRO_BEGIN}
What is measured: the product (\`reso-server serve\`) and a baseline doing the least an Express + database
driver handler can do, serving the same rows from the same database, each loaded in turn from a separate
process (\`npm run bench\`, source in \`bench/\`). Request rates and latencies are measured with
[wrk](https://github.com/wg/wrk) (Debian's package \`wrk\`: \`apt-get install -y wrk\`, which the bench needs; one thread,
\`bench/wrk.ts\`), which counts a response's bytes without parsing its body, so its rates are the servers' and the
wire's, not its own; until 2026-12-07 they were autocannon's, which parses every body and capped the figures near
2,500 req/s of a 607 KB page (issue 42): a figure recorded before then near that cap measured autocannon. The
replication walk is the one figure not from wrk: a Node client following nextLinks (\`bench/walk.ts\`), so its
records/s include the client's reading of each page. Every figure that matters is a
**ratio product/baseline measured in the same run**: the runs happen on a shared, noisy 2-core machine
(servers pinned to one core, the load generator to the other), so absolute requests per second drift
between runs and only mean something next to the baseline beside them. The product is measured as it is
deployed: every request to it carries a bearer token (of its \`demo\` client, registered through
\`DEMO_TOKEN\`), so token checks and usage metering are part of its figures; the baseline has neither.
All its load comes from that one client, so the product runs with \`MAX_CONCURRENT_REQUESTS\` raised to
twice the number of connections (otherwise the per-client limit would answer the excess with 429: when a run ends,
wrk drops connections with requests in flight, which on MariaDB hold their slots for a moment while the
next run's connections arrive). The product runs with its record cache as deployed (\`RECORD_CACHE_MB\`, 64 by
default): the key, page, filtered and expand scenarios ask for the same first pages and keys again and again, so
after the first request the product takes their records from memory once their rows' revisions say they are
unchanged (one indexed read of positions and revisions a page; for expand, also one indexed read of the digest of
each listing's media revisions, whose joined run of media is then taken from memory too), and the baseline reads and
decodes every record every time; the replication walk reads each record once, as a walk does, and so measures reads
from the database.
Target: a ratio of at least ${TARGET_RATIO.toFixed(2)} against the baseline in every scenario (the auth-cost family compares
the product with itself and has its own target).

Columns of the request-rate tables (key-and-page, filtered, expand, auth-cost): **ratio** is product/baseline of the best
round's requests per second (the headline figure); **ratio per CPU-s** is product/baseline of requests per
second of server CPU time over all rounds, which holds up better when other work on the machine takes CPU
from the servers (see *server CPU*: a server well below 100% of its core was starved by other processes or
waiting on the database). Latencies are wrk's, in ms, at the best round; *body* is the bytes wrk read per
response of the product, headers included (the auth-cost table names its two sides instead of product and baseline). The
replication and deep-page families explain their own columns.

Each scenario family below has its own section; each run records its date, exact command, data size and
database. \`npm run bench -- --write\` replaces the previous run of the same family and database (only of
the families it ran: \`--scenarios\` picks them).
${INTRO_END}
`;

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

function fmt(n: number): string {
  return n >= 100 ? n.toFixed(0) : n.toFixed(1);
}

/** Names of the two sides of a pair (the product and its baseline, unless a family says otherwise) and their target ratio. */
interface Sides {
  a: string;
  b: string;
  target: number;
}
const PRODUCT_BASELINE: Sides = { a: 'product', b: 'baseline', target: TARGET_RATIO };

function table(results: ScenarioResult[], sides: Sides = PRODUCT_BASELINE): string {
  const lines = [
    `| scenario | ${sides.a} req/s | ${sides.b} req/s | ratio | ratio per CPU-s | ${sides.a} p50 / p99 ms | ${sides.b} p50 / p99 ms | server CPU ${sides.a} / ${sides.b} | body |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    const p = best(r.product);
    const b = best(r.baseline);
    const ratio = p.reqPerSec / b.reqPerSec;
    const perCpu = Number.isFinite(cpuRatio(r)) ? cpuRatio(r).toFixed(2) : 'n/a';
    lines.push(`| ${r.name} | ${fmt(p.reqPerSec)} | ${fmt(b.reqPerSec)} | **${ratio.toFixed(2)}**${ratio < sides.target ? ' ⚠' : ''} | ${perCpu} `
      + `| ${ms(p.p50)} / ${ms(p.p99)} | ${ms(b.p50)} / ${ms(b.p99)} | ${p.serverCpu.toFixed(0)}% / ${b.serverCpu.toFixed(0)}% `
      + `| ${(p.bytesPerReq / 1024).toFixed(1)} KB |`);
  }
  return lines.join('\n');
}

function rounds(results: ScenarioResult[], sides: Sides = PRODUCT_BASELINE): string {
  return results.map((r) => `${r.name}: ${sides.a} ${r.product.map((m) => fmt(m.reqPerSec)).join(', ')}; `
    + `${sides.b} ${r.baseline.map((m) => fmt(m.reqPerSec)).join(', ')}`).join('. ');
}

/** The warm-up before each measurement, as the recorded runs state it. */
function warmupText(o: Options): string {
  return o.settle > o.warmup ? `${o.warmup} s of warm-up (${o.settle} s before a server's first)` : `${o.warmup} s of warm-up`;
}

function loadLine(o: Options, sides: Sides = PRODUCT_BASELINE): string {
  return `- Load: ${o.connections} connections; ${o.duration} s per measurement after ${warmupText(o)}; ${o.rounds} rounds per server
  in the order ${sides.b}-${sides.a}, ${sides.a}-${sides.b}, …; the best round of each counts`;
}

/** One run of a family on one database, in its markers. */
function runSection(family: Family, o: Options, db: BenchDatabase, command: string, details: string[], body: string): string {
  const cpu = cpus()[0]?.model?.trim() ?? 'unknown CPU';
  return `<!-- bench-run ${family.id} ${o.db} -->
### ${o.db === 'sqlite' ? 'SQLite' : 'MariaDB/MySQL'}, ${o.listings} listings: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC

- Command: \`${command}\`
- Data: ${o.listings} demo listings (${o.withoutChildren ? 'without their media, rooms, open houses…: --without-children' : 'with their media, rooms, open houses…'}) in \`${db.description}\`
${details.join('\n')}
- Node ${process.version}, ${cpus().length} × ${cpu}${o.pin ? '; servers pinned to CPU 1, load generator to CPU 0' : ''}; load average ${loadAtStart.toFixed(1)} at the start

${body}
<!-- /bench-run -->`;
}

function writeDoc(family: Family, o: Options, run: string): void {
  let doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : DOC_INTRO;
  // The intro is ours: refresh it so it describes the current columns.
  const a = doc.indexOf(INTRO_BEGIN);
  const b = a < 0 ? -1 : doc.indexOf(INTRO_END, a);
  if (a >= 0 && b > a) {
    const fresh = DOC_INTRO.slice(DOC_INTRO.indexOf(INTRO_BEGIN), DOC_INTRO.indexOf(INTRO_END));
    doc = doc.slice(0, a) + fresh + doc.slice(b);
  }
  const begin = `<!-- bench-family ${family.id} -->`;
  const end = `<!-- /bench-family ${family.id} -->`;
  const i = doc.indexOf(begin);
  const j = i < 0 ? -1 : doc.indexOf(end, i);
  const runs = new Map<string, string>();
  if (i >= 0 && j > i) {
    const re = new RegExp(`<!-- bench-run ${family.id} (\\w+) -->[\\s\\S]*?<!-- /bench-run -->`, 'g');
    for (const m of doc.slice(i, j).matchAll(re)) runs.set(m[1], m[0]);
  }
  runs.set(o.db, run);
  const ordered = ['sqlite', 'mysql'].filter((d) => runs.has(d)).map((d) => runs.get(d)!);
  const section = `${begin}\n## ${family.title}\n\n${family.intro(o)}\n\n${ordered.join('\n\n')}\n${end}`;
  if (i >= 0 && j > i) doc = doc.slice(0, i) + section + doc.slice(j + end.length);
  else {
    // A new family goes after the last one, so hand-written sections at the end (the notes) stay at the end.
    const ends = [...doc.matchAll(/<!-- \/bench-family [\w-]+ -->/g)];
    const last = ends[ends.length - 1];
    if (last?.index !== undefined) {
      const at = last.index + last[0].length;
      doc = `${doc.slice(0, at)}\n\n${section}${doc.slice(at)}`;
    } else {
      doc = `${doc.replace(/\s*$/, '')}\n\n${section}\n`;
    }
  }
  mkdirSync(join(ROOT, 'docs'), { recursive: true });
  writeFileSync(DOC, doc);
  log(`wrote ${relative(ROOT, DOC)} (${family.id}, ${o.db})`);
}

/** What one family's run produced: lines for the console and, with --write, its section. */
interface FamilyRun {
  family: Family;
  console: string;
  details: string[];
  body: string;
  /** Headline ratios below the target, by scenario. */
  low: string[];
}

function pairRun(family: Family, o: Options, results: ScenarioResult[], extra: string[] = [], sides: Sides = PRODUCT_BASELINE, after: string[] = []): FamilyRun {
  const lines = [table(results, sides)];
  for (const r of results) {
    lines.push(`${r.name}: ratio of best ${(best(r.product).reqPerSec / best(r.baseline).reqPerSec).toFixed(2)}, `
      + `ratio of means ${(mean(r.product) / mean(r.baseline)).toFixed(2)}, `
      + `ratio of requests per server CPU-second ${cpuRatio(r).toFixed(2)}`);
  }
  for (const r of results) {
    for (const [side, m] of [[sides.a, best(r.product)], [sides.b, best(r.baseline)]] as const) {
      if (m.loadCpu > 90) lines.push(`${r.name} ${side}: the load generator used ${m.loadCpu.toFixed(0)}% of its core and may be the limit`);
      else if (m.serverCpu < 80) lines.push(`${r.name} ${side}: the server got only ${m.serverCpu.toFixed(0)}% of a core (other load on the machine, or waiting on the database)`);
    }
  }
  const body = [table(results, sides), ...after].join('\n\n');
  return {
    family,
    console: [...lines, ...after].join('\n'),
    details: [...extra, loadLine(o, sides), `- Every round, req/s: ${rounds(results, sides)}`],
    body,
    low: results.filter((r) => best(r.product).reqPerSec / best(r.baseline).reqPerSec < sides.target).map((r) => `${r.name} (target ${sides.target.toFixed(2)})`),
  };
}

// ---------------------------------------------------------------------------------------------------------
// The wire limit

/**
 * The product's body for `path`, served as a static body by plain node:http (bench/static-body.ts) on the same
 * core, measured as the product was (wrk, which does not parse bodies): the most this machine serves at that
 * size, whatever the server does.
 */

async function wireLimit(name: string, product: ServerProcess, path: string, r: ScenarioResult, o: Options): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${product.port}${path}`, { headers: product.headers });
  const body = Buffer.from(await res.arrayBuffer());
  const file = join(BENCH_DIR, `static-body-${name}.json`);
  writeFileSync(file, body);
  const server = await startChild('static body', join(__dirname, 'static-body.js'), [file], {}, o.pin);
  const measured: Measurement[] = [];
  try {
    for (let round = 1; round <= o.rounds; round++) measured.push(await measure(`${name} static body #${round}`, { server, paths: ['/'] }, o, round === 1));
  } finally {
    await stopChild(server);
  }
  const top = best(measured);
  const wire = top.reqPerSec;
  const served = best(r.product).reqPerSec;
  // wrk on one core can be the limit of a static body too: then the figure is a floor of what the wire allows.
  const limit = top.loadCpu > 90 ? ` (wrk used ${top.loadCpu.toFixed(0)}% of its core: the static rate is a floor)` : '';
  return `${name}: the same ${(body.length / 1024).toFixed(1)} KB body, static, from plain node:http: ${fmt(wire)} req/s${limit}; `
    + `the product ${fmt(served)} req/s, ${(wire / served).toFixed(1)}× below it (the bare baseline ${fmt(best(r.baseline).reqPerSec)}, ${(wire / best(r.baseline).reqPerSec).toFixed(1)}× below); wrk, as every rate here`;
}

// ---------------------------------------------------------------------------------------------------------
// Families

interface Servers {
  product: ServerProcess;
  baseline: ServerProcess;
}

async function keyAndPageFamily(s: Servers, keys: string[], o: Options): Promise<FamilyRun> {
  await checkKeyAndPage(s.product, s.baseline, keys);
  const results: ScenarioResult[] = [];
  if (o.scenarios.has('key')) {
    results.push(await runPair('key',
      { server: s.product, paths: keys.map(productKeyPath) },
      { server: s.baseline, paths: keys.map(baselineKeyPath) }, o));
  }
  const wire: string[] = [];
  if (o.scenarios.has('page')) {
    const page = await runPair('page', { server: s.product, paths: ['/odata/Property'] }, { server: s.baseline, paths: ['/Property'] }, o);
    results.push(page);
    wire.push(await wireLimit('page', s.product, '/odata/Property', page, o));
  }
  return pairRun(KEY_AND_PAGE, o, results, [], PRODUCT_BASELINE, wire.length ? [`Wire limit: ${wire.join('; ')}`] : []);
}

async function filteredFamily(s: Servers, facts: DataFacts, o: Options): Promise<FamilyRun> {
  const productPath = `/odata/Property?$filter=${encodeURIComponent(`ModificationTimestamp gt '${facts.filterTs}'`)}`;
  const baselinePath = `/filtered?ts=${encodeURIComponent(facts.filterTs)}`;
  const page = await checkSamePage('filtered page', s.product, productPath, s.baseline, baselinePath);
  if (!page.every((r) => String(r.ModificationTimestamp) > facts.filterTs)) throw new Error('filtered page: a record is not after the filter\'s timestamp');
  log(`filtered: T = ${facts.filterTs}, matching ${facts.filterMatches} of ${facts.listings} listings; same ${PAGE} records from both`);
  const r = await runPair('filtered', { server: s.product, paths: [productPath] }, { server: s.baseline, paths: [baselinePath] }, o);
  return pairRun(FILTERED, o, [r], [
    `- Filter: \`ModificationTimestamp gt '${facts.filterTs}'\`, matching ${facts.filterMatches} of ${facts.listings} listings`,
  ], PRODUCT_BASELINE, [`Wire limit: ${await wireLimit('filtered', s.product, productPath, r, o)}`]);
}

async function replicationFamily(s: Servers, o: Options): Promise<FamilyRun> {
  const P = o.walkPageSize;
  const prefer = { Prefer: `odata.maxpagesize=${P}` };
  const walkRounds = o.walkRounds;
  const runs: Record<'product' | 'baseline' | 'select' | 'static', WalkMeasurement[]> = { product: [], baseline: [], select: [], static: [] };
  const expected = { hash: '', records: o.listings };
  const check = (what: string, w: WalkResult) => {
    if (w.records !== expected.records) throw new Error(`${what}: ${w.records} records, not ${expected.records}`);
    if (!expected.hash) expected.hash = w.keysHash;
    else if (w.keysHash !== expected.hash) throw new Error(`${what}: the keys differ from the first walk's (in content or order)`);
  };
  // Untimed: the first walk over a large database reads it from disk into the page cache, for whichever server
  // comes first. These walks are checked like the others.
  const warmBaseline = await timedWalk('warm-up walk baseline', s.baseline, `/walk?limit=${P}`, {}, 'ListingKey');
  check('warm-up walk baseline', warmBaseline);
  const warmProduct = await timedWalk('warm-up walk product ', s.product, '/odata/Property', prefer, 'ListingKey');
  check('warm-up walk product', warmProduct);
  const warmRss = { product: warmProduct.rss, baseline: warmBaseline.rss };
  check('warm-up $select walk', await timedWalk('warm-up walk $select=ListingKey', s.product, '/odata/Property?$select=ListingKey', prefer, 'ListingKey'));
  for (let round = 1; round <= walkRounds; round++) {
    const order = round % 2 === 1 ? (['baseline', 'product'] as const) : (['product', 'baseline'] as const);
    for (const side of order) {
      const w = side === 'product'
        ? await timedWalk(`walk product  #${round}`, s.product, '/odata/Property', prefer, 'ListingKey')
        : await timedWalk(`walk baseline #${round}`, s.baseline, `/walk?limit=${P}`, {}, 'ListingKey');
      check(`walk ${side} #${round}`, w);
      runs[side].push(w);
    }
    const sel = await timedWalk(`walk $select=ListingKey #${round}`, s.product, '/odata/Property?$select=ListingKey', prefer, 'ListingKey');
    check(`$select=ListingKey walk #${round}`, sel);
    runs.select.push(sel);
  }
  log(`replication: every walk returned the same ${expected.records} keys in the same order (sha256 ${expected.hash.slice(0, 12)}…)`);
  runs.static = await staticWalks(s.product, prefer, o, check);

  const rate = (w: WalkMeasurement) => w.records / w.seconds;
  const bestWalk = (ws: WalkMeasurement[]) => ws.reduce((a, b) => (rate(b) > rate(a) ? b : a));
  const perCpu = (ws: WalkMeasurement[]) => ws.reduce((a, w) => a + w.records, 0) / ws.reduce((a, w) => a + w.serverCpuSeconds, 0);
  const p = bestWalk(runs.product);
  const b = bestWalk(runs.baseline);
  const sel = bestWalk(runs.select);
  const wire = rate(bestWalk(runs.static));
  const ratio = rate(p) / rate(b);
  const cpuR = perCpu(runs.product) / perCpu(runs.baseline);
  const cpuShare = (w: WalkMeasurement) => `${(100 * w.serverCpuSeconds / w.seconds).toFixed(0)}%`;
  const body = [
    '| walk | product records/s | baseline records/s | ratio | ratio per CPU-s | product time | baseline time | requests | product data | server CPU product / baseline |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| all records, maxpagesize=${P} | ${fmt(rate(p))} | ${fmt(rate(b))} | **${ratio.toFixed(2)}**${ratio < TARGET_RATIO ? ' ⚠' : ''} | ${cpuR.toFixed(2)} `
      + `| ${p.seconds.toFixed(1)} s | ${b.seconds.toFixed(1)} s | ${p.requests} | ${(p.bytes / 1e6).toFixed(0)} MB | ${cpuShare(p)} / ${cpuShare(b)} |`,
    `| \`$select=ListingKey\`, maxpagesize=${P} (product only) | ${fmt(rate(sel))} | | | | ${sel.seconds.toFixed(1)} s | | ${sel.requests} | ${(sel.bytes / 1e6).toFixed(1)} MB | ${cpuShare(sel)} / |`,
  ].join('\n');
  const every = (ws: WalkMeasurement[]) => ws.map((w) => `${fmt(rate(w))} (${w.seconds.toFixed(1)} s)`).join(', ');
  const memory = memoryTable({ product: [...runs.product, ...runs.select], baseline: runs.baseline }, s, warmRss);
  const wireLine = `Wire limit: the product's own ${p.requests} pages of the walk (${(p.bytes / 1e6).toFixed(0)} MB), static, from plain node:http, walked by the same Node client (bench/walk.ts, not wrk: client and wire together): `
    + `${fmt(wire)} records/s (best of ${runs.static.length}); the product ${fmt(rate(p))}, ${(wire / rate(p)).toFixed(1)}× below it (the bare baseline ${fmt(rate(b))}, ${(wire / rate(b)).toFixed(1)}× below)`;
  return {
    family: REPLICATION,
    console: `${body}\n\n${wireLine}\n\n${memory}\nreplication: ratio of best ${ratio.toFixed(2)}, ratio of records per server CPU-second ${cpuR.toFixed(2)}`,
    details: [
      `- Walk: page size P = ${P} (product started with MAX_PAGE_SIZE=${P}, every request sends \`Prefer: odata.maxpagesize=${P}\`); `
        + `after one untimed warm-up walk each, ${walkRounds} walks per server, in the order baseline-product, product-baseline, …, `
        + 'each round followed by the `$select` walk; the best of each counts',
      `- Verified: every walk returned the same ${expected.records} keys in the same order (sha256 of the keys ${expected.hash.slice(0, 16)}…)`,
      `- Every walk, records/s (time): product ${every(runs.product)}; baseline ${every(runs.baseline)}; $select=ListingKey ${every(runs.select)}`,
    ],
    body: `${body}\n\n${wireLine}\n\n${memory}`,
    low: ratio < TARGET_RATIO ? ['replication'] : [],
  };
}

/**
 * The walk's wire limit: the product's pages of one walk captured (static-walk.ts), served static by plain
 * node:http on the servers' core, walked by the same client as many times as each server was (after a warm-up).
 */
async function staticWalks(product: ServerProcess, prefer: Record<string, string>, o: Options, check: (what: string, w: WalkResult) => void): Promise<WalkMeasurement[]> {
  const files = await captureWalk(`http://127.0.0.1:${product.port}/odata/Property`, { ...product.headers, ...prefer }, BENCH_DIR);
  const server = await startChild('static walk', join(__dirname, 'static-body.js'), files, {}, o.pin);
  try {
    check('warm-up static walk', await timedWalk('warm-up walk static', server, '/', {}, 'ListingKey'));
    const walks: WalkMeasurement[] = [];
    for (let round = 1; round <= o.walkRounds; round++) {
      const w = await timedWalk(`walk static #${round}`, server, '/', {}, 'ListingKey');
      check(`static walk #${round}`, w);
      walks.push(w);
    }
    return walks;
  } finally {
    await stopChild(server);
    for (const f of files) rmSync(f, { force: true });
  }
}

/**
 * Server memory over the walks: resident before the first (warm-up) walk, the highest sampled during the timed walks, at
 * the end of the last, and the kernel's high-water mark since the server started (start-up and warm-up included).
 */
function memoryTable(walks: Record<'product' | 'baseline', WalkMeasurement[]>, s: Servers, warm: Record<'product' | 'baseline', RssSpan>): string {
  const lines = [
    '| server RSS, MB | before the first walk | peak during the timed walks | at the end of the last walk | high-water mark since start |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const side of ['product', 'baseline'] as const) {
    const ws = walks[side];
    const peak = Math.max(...ws.map((w) => w.rss.peak));
    lines.push(`| ${side} | ${mb(warm[side].start)} | ${mb(peak)} | ${mb(ws[ws.length - 1].rss.end)} | ${mb(peakRssBytes(s[side].child.pid))} |`);
  }
  return lines.join('\n');
}

async function deepFamily(s: Servers, facts: DataFacts, o: Options): Promise<FamilyRun> {
  const P = o.walkPageSize;
  // The product's nextLink after `deepAfter` records, captured by walking at the maximum page size.
  const capture = await walk(`http://127.0.0.1:${s.product.port}/odata/Property`, {
    headers: { ...s.product.headers, Prefer: `odata.maxpagesize=${P}` }, keyField: 'ListingKey', stopAfter: facts.deepAfter, parse: true,
  });
  if (capture.records !== facts.deepAfter || !capture.lastNextLink) throw new Error(`deep page: the capture walk read ${capture.records} records, not ${facts.deepAfter}`);
  const paths = {
    'product first': '/odata/Property',
    'product deep': pathOf(capture.lastNextLink),
    'baseline first': `/walk?limit=${PAGE}`,
    'baseline deep': `/walk?ts=${encodeURIComponent(facts.deepTs)}&key=${encodeURIComponent(facts.deepKey)}&limit=${PAGE}`,
  };
  await checkSamePage('first page', s.product, paths['product first'], s.baseline, paths['baseline first']);
  const deepPage = await checkSamePage('deep page', s.product, paths['product deep'], s.baseline, paths['baseline deep']);
  if (deepPage[0].ListingKey !== facts.deepFirstKey) throw new Error(`deep page starts at ${String(deepPage[0].ListingKey)}, not at record ${facts.deepAfter + 1} (${facts.deepFirstKey})`);
  log(`deep page: records ${facts.deepAfter + 1}–${facts.deepAfter + PAGE} of ${facts.listings}; same records from both servers`);

  const order = ['baseline first', 'baseline deep', 'product first', 'product deep'] as const;
  const target = (k: typeof order[number]): Target => ({ server: k.startsWith('product') ? s.product : s.baseline, paths: [paths[k]] });
  const m = await interleaved('deep', order, {
    'baseline first': target('baseline first'), 'baseline deep': target('baseline deep'),
    'product first': target('product first'), 'product deep': target('product deep'),
  }, o);

  const lines = [
    '| server | first page req/s | deep page req/s | first p50 / mean ms | deep p50 / mean ms | deep/first p50 | deep/first mean |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  const summary: string[] = [];
  const perRound: string[] = [];
  for (const side of ['product', 'baseline'] as const) {
    const f = best(m[`${side} first`]);
    const d = best(m[`${side} deep`]);
    const r50 = d.p50 / f.p50;
    const rMean = d.latencyMean / f.latencyMean;
    lines.push(`| ${side} | ${fmt(f.reqPerSec)} | ${fmt(d.reqPerSec)} | ${ms(f.p50)} / ${ms(f.latencyMean)} | ${ms(d.p50)} / ${ms(d.latencyMean)} `
      + `| **${r50.toFixed(2)}** | **${rMean.toFixed(2)}** |`);
    summary.push(`${side}: deep/first p50 ${r50.toFixed(2)}, mean ${rMean.toFixed(2)}`);
    perRound.push(`${side} ${m[`${side} first`].map((x, i) => (m[`${side} deep`][i].latencyMean / x.latencyMean).toFixed(2)).join(', ')}`);
  }
  const pf = best(m['product first']);
  const pd = best(m['product deep']);
  const body = lines.join('\n');
  return {
    family: DEEP,
    console: `${body}\n${summary.join('; ')}`,
    details: [
      `- Deep page: records ${facts.deepAfter + 1}–${facts.deepAfter + PAGE} of ${facts.listings} (${Math.round(100 * facts.deepAfter / facts.listings)}%), `
        + `the product's nextLink after ${facts.deepAfter / P} pages of ${P}; pages of ${PAGE} records (${(pf.bytesPerReq / 1024).toFixed(0)} KB first, ${(pd.bytesPerReq / 1024).toFixed(0)} KB deep)`,
      `- Load: ${o.connections} connections; ${o.duration} s per measurement after ${warmupText(o)}; ${o.rounds} rounds of `
        + 'baseline first, baseline deep, product first, product deep (reversed on even rounds); the best round (req/s) of each URL counts',
      `- Every round, deep/first mean latency: ${perRound.join('; ')}`,
    ],
    body,
    low: [],
  };
}

/** What a statement the product sent was for: reading data, applying the usage journal, a token lookup. */
type StatementKind = 'data' | 'usage journal applied' | 'token lookup' | 'webhook deliveries due' | 'credential changes checked'
  | 'records read by key after their positions' | 'related records read joined after their digests' | 'other';

/**
 * What each of a request's statements (in order) is for. An expansion read by digests first (RECORD_CACHE_MB)
 * has its digest statement as its one data statement, and reads the runs memory lacks joined after it.
 */
function statementKinds(statements: readonly string[]): StatementKind[] {
  const digested = new Set<string>();
  return statements.map((sql) => {
    const kind = statementKind(sql);
    if (kind !== 'data') return kind;
    if (isDigestRead(sql)) digested.add(tableOf(sql));
    else if (/group_concat/i.test(sql) && digested.has(tableOf(sql))) return 'related records read joined after their digests';
    return kind;
  });
}

/** RecordQueries.relatedDigests: the count and revision sums of each parent's related rows, without their records. */
const isDigestRead = (sql: string) => sql.includes(REVISION_COLUMN) && /group by/i.test(sql) && !/group_concat/i.test(sql);

function statementKind(sql: string): StatementKind {
  // USAGE_TABLE's name begins that of the journals' table, so this matches statements on either.
  if (sql.includes(USAGE_TABLE)) return 'usage journal applied';
  if (sql.includes(TOKENS_TABLE) || sql.includes(CLIENTS_TABLE)) return 'token lookup';
  // The webhook dispatcher's periodic look for deliveries due, when it falls inside the counted request.
  if (sql.includes(WEBHOOKS_TABLE)) return 'webhook deliveries due';
  // The periodic look at the credentials' change mark (a settings row), likewise.
  if (sql.includes(SETTINGS_TABLE)) return 'credential changes checked';
  // A first page read by positions (RECORD_CACHE_MB) reads the records memory lacks by key, in one statement.
  if (sql.includes(REVISION_COLUMN) && /\bin\s*\(/i.test(sql) && !/\border by\b/i.test(sql) && !isDigestRead(sql)) return 'records read by key after their positions';
  return /^\s*select\b/i.test(sql) ? 'data' : 'other';
}
const tableOf = (sql: string) => /\bfrom\s+[`"]?(\w+)/i.exec(sql)?.[1] ?? '?';

interface PageStatements {
  records: number;
  related: number;
  data: string[];
  /** What the request's other statements were for. */
  others: StatementKind[];
  nextLink?: string;
}

/** One page's request to the counting server, with the statements it sent in between and the page's checks. */
async function countedPage(counting: ServerProcess, counterPort: number, path: string, size: number, navigations: readonly string[]): Promise<PageStatements> {
  const take = async () => (await (await fetch(`http://127.0.0.1:${counterPort}/take`)).json()) as string[];
  await take();
  const res = await fetch(`http://127.0.0.1:${counting.port}${path}`, { headers: { ...counting.headers, Prefer: `odata.maxpagesize=${size}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`statements: GET ${path} answered ${res.status}\n${text.slice(0, 500)}`);
  const statements = await take();
  const body = JSON.parse(text) as { value: Record<string, unknown>[]; '@odata.nextLink'?: string };
  if (body.value.length !== size) throw new Error(`statements: GET ${path} with maxpagesize=${size} returned ${body.value.length} records`);
  let related = 0;
  for (const r of body.value) {
    for (const n of navigations) {
      if (!Array.isArray(r[n])) throw new Error(`statements: record ${String(r.ListingKey)} has no ${n} array`);
      related += (r[n] as unknown[]).length;
    }
  }
  const kinds = statementKinds(statements);
  return {
    records: body.value.length,
    related,
    data: statements.filter((_, i) => kinds[i] === 'data'),
    others: kinds.filter((k) => k !== 'data'),
    nextLink: body['@odata.nextLink'],
  };
}

/** The table of data statements per page, for each page size and set of navigations. */
async function statementsPerPage(counting: ServerProcess): Promise<{ body: string; ok: boolean; details: string[] }> {
  const m = /statement counter on port (\d+)/.exec(counting.output());
  if (!m) throw new Error(`the counting server did not say where its counter is\n${counting.output()}`);
  const counterPort = Number(m[1]);
  // Untimed: the first request looks up the token (then cached) and prepares statements.
  await countedPage(counting, counterPort, `/odata/Property?$expand=${ALL_NAVIGATIONS.join(',')}`, 10, ALL_NAVIGATIONS);
  const rows = [[ALL_NAVIGATIONS[0]], ALL_NAVIGATIONS];
  const lines = [
    `| navigations | ${COUNT_PAGE_SIZES.map((n) => `page of ${n}`).join(' | ')} | expected |`,
    `|---|${COUNT_PAGE_SIZES.map(() => '---:').join('|')}|---:|`,
  ];
  let ok = true;
  const others = new Map<string, number>();
  const tables = new Map<number, string>();
  for (const navs of rows) {
    const expected = 1 + navs.length;
    const cells: string[] = [];
    for (const size of COUNT_PAGE_SIZES) {
      const path = `/odata/Property?$expand=${navs.join(',')}`;
      const first = await countedPage(counting, counterPort, path, size, navs);
      if (!first.nextLink) throw new Error(`statements: no nextLink after the first ${size} listings`);
      const second = await countedPage(counting, counterPort, pathOf(first.nextLink), size, navs);
      for (const p of [first, second]) {
        const kinds = p.others.reduce((a, k) => a.set(k, (a.get(k) ?? 0) + 1), new Map<string, number>());
        const key = [...kinds].map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
        others.set(key, (others.get(key) ?? 0) + 1);
      }
      tables.set(navs.length, first.data.map(tableOf).join(', '));
      const same = first.data.length === second.data.length;
      if (first.data.length !== expected || !same) ok = false;
      log(`statements: ${navs.length} navigation(s), pages of ${size}: ${first.data.length} data statements (${first.related} related records), `
        + `next page ${second.data.length} (${second.related}); besides: ${first.others.join(', ') || 'none'}`);
      cells.push(`${first.data.length}${same ? '' : ` (next page ${second.data.length})`}${first.data.length !== expected || !same ? ' ⚠' : ''} · ${fmt(first.related)} rows`);
    }
    lines.push(`| ${navs.length}: \`${navs.join(',')}\` | ${cells.join(' | ')} | ${expected} |`);
  }
  const otherLine = [...others].map(([k, n]) => `${k} (${n} of ${rows.length * COUNT_PAGE_SIZES.length * 2} requests)`).join('; ');
  return {
    body: lines.join('\n'),
    ok,
    details: [
      `- Statements per page: each cell is data statements · related records on the page; the page after it took the same number in every cell${ok ? '' : ' **except those marked ⚠**'}. `
        + `Tables read, in order: ${[...tables].map(([n, t]) => `${n} navigation(s): ${t}`).join('; ')}. Other statements per request: ${otherLine}`,
    ],
  };
}

async function expandFamily(s: Servers, o: Options, startCounting: () => Promise<ServerProcess>): Promise<FamilyRun> {
  const productPath = '/odata/Property?$expand=Media';
  const page = await checkSamePage('expand page', s.product, productPath, s.baseline, '/expand');
  const counts = page.map((r) => (Array.isArray(r.Media) ? r.Media.length : -1));
  if (counts.some((n) => n < 0)) throw new Error('expand page: a record has no Media array');
  const media = counts.reduce((a, n) => a + n, 0);
  if (media === 0) throw new Error('expand page: no listing on the page has media');
  log(`expand: same ${PAGE} records with equal media arrays from both (${media} media, ${Math.min(...counts)}–${Math.max(...counts)} a listing)`);
  const r = await runPair('expand', { server: s.product, paths: [productPath] }, { server: s.baseline, paths: ['/expand'] }, o);

  const counting = await startCounting();
  let statements: Awaited<ReturnType<typeof statementsPerPage>>;
  try {
    statements = await statementsPerPage(counting);
  } finally {
    await stopChild(counting);
  }
  const run = pairRun(EXPAND, o, [r], [
    `- Page: ${PAGE} listings with ${media} media (${Math.min(...counts)}–${Math.max(...counts)} a listing); the same records and media arrays from both servers`,
    ...statements.details,
  ], PRODUCT_BASELINE, [`Wire limit: ${await wireLimit('expand', s.product, productPath, r, o)}`, `Statements per page (data statements · related records on the page):\n\n${statements.body}`]);
  if (!statements.ok) run.low.push('expand statements per page (not 1 + navigations)');
  return run;
}

/** Class A transactions of the `demo` client in the usage table, over all hours. */
async function usageA(product: ServerProcess): Promise<number> {
  const r = await get(product, '/admin/usage?client=demo');
  if (r.status !== 200) throw new Error(`GET /admin/usage: status ${r.status}\n${r.body.slice(0, 300)}`);
  return (JSON.parse(r.body) as { value: { class: string; count: number }[] }).value
    .filter((u) => u.class === 'A').reduce((a, u) => a + u.count, 0);
}

async function authCostFamily(s: Servers, anonymous: ServerProcess, keys: string[], o: Options): Promise<FamilyRun> {
  const refused = await fetch(`http://127.0.0.1:${s.product.port}${productKeyPath(keys[0])}`);
  if (refused.status !== 401) throw new Error(`auth-cost: the normal server answered ${refused.status} to a request without a token, not 401`);
  const before = await usageA(s.product);
  const checked = keys.slice(0, 5);
  for (const key of checked) {
    const n = await get(s.product, productKeyPath(key));
    const a = await get(anonymous, productKeyPath(key));
    if (n.status !== 200 || a.status !== 200) throw new Error(`auth-cost key ${key}: normal ${n.status}, anonymous ${a.status}\n${a.body.slice(0, 300)}`);
    // The context URLs name each server's own port.
    const strip = (b: string) => { const { '@odata.context': _c, ...rec } = JSON.parse(b) as Record<string, unknown>; return JSON.stringify(rec); };
    if (strip(n.body) !== strip(a.body)) throw new Error(`auth-cost key ${key}: the two servers serve different records`);
  }
  log(`auth-cost: the normal server refuses a request without a token (401); both serve the same records`);
  const paths = keys.map(productKeyPath);
  const m = await interleaved('auth-cost key', ['anonymous', 'normal'] as const, { anonymous: { server: anonymous, paths }, normal: { server: s.product, paths } }, o);
  await new Promise((r) => setTimeout(r, 1000)); // requests still in flight when a load stopped finish
  const metered = (await usageA(s.product)) - before;
  const responses = checked.length + m.normal.reduce((a, x) => a + x.requests + x.warmupRequests, 0);
  // wrk stops counting at the end of each load while up to one request per connection is still on its way.
  const slack = o.connections * 2 * o.rounds;
  if (metered < responses || metered > responses + slack) {
    throw new Error(`auth-cost: the usage table counted ${metered} class A transactions for ${responses} responses of the normal server (metering off or miscounting?)`);
  }
  log(`auth-cost: metering on: ${metered} class A transactions counted for ${responses} responses received (+ those in flight at the end of each load)`);
  return pairRun(AUTH_COST, o, [{ name: 'key', product: m.normal, baseline: m.anonymous }], [
    `- Verified: the normal server refuses a request without a token; both serve the same records; its usage table counted ${metered} class A `
      + `transactions during the family for ${responses} responses the load generator received (the rest were in flight when a load stopped)`,
  ], { a: 'normal', b: 'anonymous', target: AUTH_TARGET_RATIO });
}

// ---------------------------------------------------------------------------------------------------------

function pinSelf(pin: boolean): boolean {
  if (!pin) return false;
  if (cpus().length < 2) { log('one CPU: not pinning'); return false; }
  try {
    execFileSync('taskset', ['-a', '-pc', '0', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    log('taskset is not available: not pinning');
    return false;
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const o = parseArgs(argv);
  exitUnlessWrk('bench');
  const command = `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`;
  const want = (...names: ScenarioName[]) => names.some((n) => o.scenarios.has(n));
  if (want('replication') && o.listings < 100_000) log(`note: the replication walk covers ${o.listings} listings (the documented runs walk at least 100000)`);
  const db = await prepareDatabase(o);
  const keys = want('key', 'page', 'auth-cost') ? await sampleKeys(db.url) : [];
  if (want('key', 'page', 'auth-cost') && keys.length < 10) throw new Error(`only ${keys.length} listing keys in the benchmark database`);
  const facts = want('filtered', 'deep') ? await dataFacts(db.url, o) : undefined;
  o.pin = pinSelf(o.pin);
  loadAtStart = loadavg()[0];

  const servers: ServerProcess[] = [];
  try {
    const env = { DATABASE_URL: db.url, PORT: '0', NODE_ENV: 'production' };
    // `reso-server serve` itself, through a script of its own name (see bench/product-server.ts).
    // Every /odata request needs a bearer token: the product registers this one for its admin `demo` client.
    const token = randomBytes(24).toString('base64url');
    // All load comes from the one demo client: its limit on requests in progress must admit every connection,
    // twice over: when a run ends, wrk drops its connections with requests in flight, and on MariaDB those
    // (waiting on the database) still hold their slots for a moment while the next run's connections arrive.
    const productEnv = {
      ...env, PAGE_SIZE: String(PAGE), MAX_PAGE_SIZE: String(o.walkPageSize), SEED_LISTINGS: '0', WORKERS: '1',
      MAX_CONCURRENT_REQUESTS: String(Math.max(8, 2 * o.connections)),
    };
    const bearer = { Authorization: `Bearer ${token}` };
    const product = await startChild('product', join(__dirname, 'product-server.js'), [], { ...productEnv, DEMO_TOKEN: token }, o.pin, bearer);
    servers.push(product);
    const baseline = await startChild('baseline', join(__dirname, 'baseline-server.js'), [], env, o.pin);
    servers.push(baseline);
    // auth-cost: the same product without authentication, licensing or metering (its own database connection).
    let anonymous: ServerProcess | undefined;
    if (want('auth-cost')) {
      anonymous = await startChild('anonymous', join(__dirname, 'anonymous-server.js'), [], productEnv, o.pin);
      servers.push(anonymous);
    }
    // expand: the product with a statement counter, started for the count only (after the measurements).
    const startCounting = async () => {
      const c = await startChild('counting', join(__dirname, 'counting-server.js'), [], { ...productEnv, DEMO_TOKEN: token }, o.pin, bearer);
      servers.push(c);
      return c;
    };
    log(`product on port ${product.port} (pid ${product.child.pid}), baseline on port ${baseline.port} (pid ${baseline.child.pid})`
      + `${anonymous ? `, anonymous product on port ${anonymous.port} (pid ${anonymous.child.pid})` : ''}; scenarios ${[...o.scenarios].join(',')}`);
    const s: Servers = { product, baseline };

    const done: FamilyRun[] = [];
    const finish = (run: FamilyRun) => {
      done.push(run);
      console.log(`\n== ${run.family.id}: ${o.listings} listings, ${db.description}\n${run.console}\n`);
      if (o.write) writeDoc(run.family, o, runSection(run.family, o, db, command, run.details, run.body));
    };
    if (want('key', 'page')) finish(await keyAndPageFamily(s, keys, o));
    if (want('filtered')) finish(await filteredFamily(s, facts!, o));
    if (want('replication')) finish(await replicationFamily(s, o));
    if (want('deep')) finish(await deepFamily(s, facts!, o));
    if (want('expand')) finish(await expandFamily(s, o, startCounting));
    if (want('auth-cost')) finish(await authCostFamily(s, anonymous!, keys, o));

    const low = done.flatMap((r) => r.low);
    if (low.length) console.log(`\nbelow the target: ${low.join(', ')}`);
    return 0;
  } finally {
    await Promise.all(servers.map(stopChild));
    killAllNow();
    await db.cleanup();
  }
}

main().then(
  (code) => { process.exit(code); },
  (e: Error) => { console.error(`[bench] failed: ${e.stack ?? e.message}`); killAllNow(); process.exit(1); },
);
