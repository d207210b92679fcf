/**
 * `npm run bench [-- options]`: the product against a bare Express + driver baseline over the same database.
 *
 * Seeds N demo listings into a benchmark database (reused while it holds the same data), starts the product
 * (`reso-server serve`) and bench/baseline-server as child processes, and loads each in turn with autocannon
 * from this process: fetch by key (rotating through real ListingKeys) and the first page of 100. Rounds
 * alternate (BP PB BP …) so drift on a shared machine hits both; the best round of each counts.
 * The figure that matters is the ratio product/baseline (target: at least 0.60).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import autocannon from 'autocannon';
import * as mysql from 'mysql2/promise';
import { serviceModel } from '../generated';
import { seedDemoData } from '../src/seed/demo-data';
import { ListingService } from '../src/service';
import { openDatabase } from '../src/storage/database';

const ROOT = resolve(__dirname, '../..');
const BENCH_DIR = join(ROOT, '.bench');
const DOC = join(ROOT, 'docs/benchmarks.md');
const TARGET_RATIO = 0.6;
const KEY_SAMPLE = 1000;
const MYSQL_DB = 'reso_bench';

const USAGE = `Usage: node dist/bench/run.js [options]   (npm run bench -- [options])

  --listings N      demo listings in the benchmark database (default 20000)
  --duration S      seconds per measurement (default 10)
  --connections C   concurrent connections (default 16)
  --rounds R        measurements per server and scenario, in the order BP PB BP … (default 3)
  --warmup S        seconds of discarded load before each measurement (default 2)
  --db sqlite|mysql database (default sqlite: .bench/listings-N.sqlite; mysql: database ${MYSQL_DB} on
                    MYSQL_URL, default mysql://root@127.0.0.1:3306/test)
  --reseed          rebuild the benchmark database even if it holds the same data
  --drop            mysql: drop database ${MYSQL_DB} at the end (default: keep it for the next run)
  --no-pin          do not pin the servers to CPU 1 and the load generator to CPU 0
  --write           record the results in docs/benchmarks.md`;

interface Options {
  listings: number;
  duration: number;
  connections: number;
  rounds: number;
  warmup: number;
  db: 'sqlite' | 'mysql';
  reseed: boolean;
  drop: boolean;
  pin: boolean;
  write: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    listings: 20000, duration: 10, connections: 16, rounds: 3, warmup: 2,
    db: 'sqlite', reseed: false, drop: false, pin: true, write: false,
  };
  const num = (i: number, name: string, min: number): number => {
    const n = Number(argv[i]);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name} needs an integer of at least ${min}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--listings': o.listings = num(++i, a, 100); break;
      case '--duration': o.duration = num(++i, a, 1); break;
      case '--connections': o.connections = num(++i, a, 1); break;
      case '--rounds': o.rounds = num(++i, a, 1); break;
      case '--warmup': o.warmup = num(++i, a, 0); break;
      case '--db': {
        const v = argv[++i];
        if (v !== 'sqlite' && v !== 'mysql') throw new Error('--db is sqlite or mysql');
        o.db = v;
        break;
      }
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
function dataFingerprint(listings: number): string {
  const h = createHash('sha256').update(`listings=${listings}\n`);
  const files = [
    join(ROOT, 'dist/generated/storage-schema.js'),
    join(ROOT, 'dist/generated/field-tables.js'),
    join(ROOT, 'dist/src/storage/record-codec.js'),
  ];
  const seedDir = join(ROOT, 'dist/src/seed');
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
  const fingerprint = dataFingerprint(o.listings);
  let url: string;
  let description: string;
  let wipe: () => Promise<void>;
  let cleanup = async () => undefined;
  let stampFile: string;
  if (o.db === 'sqlite') {
    const file = join(BENCH_DIR, `listings-${o.listings}.sqlite`);
    url = `sqlite:${file}`;
    description = `sqlite:${relative(ROOT, file)}`;
    stampFile = `${file}.stamp`;
    wipe = async () => { for (const s of ['', '-wal', '-shm', '.stamp']) rmSync(`${file}${s}`, { force: true }); };
  } else {
    const admin = new URL(process.env.MYSQL_URL || 'mysql://root@127.0.0.1:3306/test');
    const target = new URL(admin.href);
    target.pathname = `/${MYSQL_DB}`;
    url = target.href;
    description = `mysql://${target.host}/${MYSQL_DB}`;
    stampFile = join(BENCH_DIR, `mysql-${MYSQL_DB}.stamp`);
    const server = new URL(admin.href);
    server.pathname = '/'; // no default database: MYSQL_URL's may not exist, and ours may not yet
    const sql = async (statement: string) => {
      const c = await mysql.createConnection({ uri: server.href, connectTimeout: 5000 });
      try { await c.query(statement); } finally { await c.end(); }
    };
    await sql(`CREATE DATABASE IF NOT EXISTS ${MYSQL_DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    wipe = async () => {
      rmSync(stampFile, { force: true });
      await sql(`DROP DATABASE IF EXISTS ${MYSQL_DB}`);
      await sql(`CREATE DATABASE ${MYSQL_DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    };
    if (o.drop) cleanup = async () => { rmSync(stampFile, { force: true }); await sql(`DROP DATABASE IF EXISTS ${MYSQL_DB}`); };
  }

  const stamp = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : '';
  let count = -1;
  if (!o.reseed && stamp === fingerprint) {
    const service = new ListingService(serviceModel, openDatabase(url));
    try {
      await service.ready();
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
      await service.ready();
      let last = 0;
      await seedDemoData(service, { listings: o.listings }, (line) => {
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

function startChild(name: string, script: string, args: string[], env: NodeJS.ProcessEnv, pin: boolean): Promise<ServerProcess> {
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
    const timer = setTimeout(() => fail('did not start within 60 s'), 60_000);
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
        resolveStart({ name, port: Number(m[1]), child, output: () => tail });
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
  /** Path of the i-th request. */
  path: (i: number) => string;
}

interface Scenario {
  name: string;
  product: Target;
  baseline: Target;
}

interface Measurement {
  reqPerSec: number;
  p50: number;
  p99: number;
  bytesPerReq: number;
  /** The server's CPU use during the measurement, in % of one core (NaN where /proc is missing). */
  serverCpu: number;
  /** This process's (the load generator's) CPU use during the measurement, in % of one core. */
  loadCpu: number;
  requests: number;
  serverCpuSeconds: number;
}

/** User + system CPU seconds a process has used so far (Linux /proc; NaN elsewhere). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return NaN;
  }
}

function load(target: Target, seconds: number, connections: number): Promise<autocannon.Result> {
  assertAlive(target.server);
  let n = 0;
  return new Promise((resolveRun, rejectRun) => {
    autocannon({
      url: `http://127.0.0.1:${target.server.port}`,
      connections,
      duration: seconds,
      timeout: 30,
      requests: [{ setupRequest: (req) => ({ ...req, path: target.path(n++) }) }],
    }, (err, result) => (err ? rejectRun(err) : resolveRun(result)));
  });
}

function checkResult(what: string, r: autocannon.Result): void {
  const total = Object.values(r.statusCodeStats).reduce((a, s) => a + s.count, 0);
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0 || total === 0) {
    throw new Error(`${what}: ${r.non2xx} non-2xx responses, ${r.errors} errors, ${r.timeouts} timeouts `
      + `of ${total} responses (status counts ${JSON.stringify(r.statusCodeStats)})`);
  }
}

async function measure(what: string, target: Target, o: Options): Promise<Measurement> {
  if (o.warmup > 0) checkResult(`${what} (warm-up)`, await load(target, o.warmup, o.connections));
  const cpuBefore = cpuSeconds(target.server.child.pid);
  const ownBefore = process.cpuUsage();
  const r = await load(target, o.duration, o.connections);
  const own = process.cpuUsage(ownBefore);
  const cpu = cpuSeconds(target.server.child.pid) - cpuBefore;
  checkResult(what, r);
  assertAlive(target.server);
  const m = {
    reqPerSec: r.requests.total / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    bytesPerReq: r.throughput.total / r.requests.total,
    serverCpu: (100 * cpu) / r.duration,
    loadCpu: (own.user + own.system) / 1e4 / r.duration,
    requests: r.requests.total,
    serverCpuSeconds: cpu,
  };
  log(`  ${what}: ${m.reqPerSec.toFixed(0)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, `
    + `CPU server ${m.serverCpu.toFixed(0)}% load generator ${m.loadCpu.toFixed(0)}%`);
  return m;
}

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

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

/** Both servers must answer 200 with the same records before their speed means anything. */
async function checkSameAnswers(product: ServerProcess, baseline: ServerProcess, keys: string[]): Promise<void> {
  for (const key of keys.slice(0, 5)) {
    const p = await get(product.port, productKeyPath(key));
    const b = await get(baseline.port, baselineKeyPath(key));
    if (p.status !== 200 || b.status !== 200) throw new Error(`key ${key}: product ${p.status}, baseline ${b.status}\n${p.body.slice(0, 500)}`);
    const { '@odata.context': _ctx, ...record } = JSON.parse(p.body) as Record<string, unknown>;
    if (JSON.stringify(record) !== JSON.stringify(JSON.parse(b.body))) throw new Error(`key ${key}: product and baseline serve different records`);
  }
  const p = await get(product.port, '/odata/Property');
  const b = await get(baseline.port, '/Property');
  if (p.status !== 200 || b.status !== 200) throw new Error(`page: product ${p.status}, baseline ${b.status}\n${p.body.slice(0, 500)}`);
  const pv = (JSON.parse(p.body) as { value: unknown[] }).value;
  const bv = (JSON.parse(b.body) as { value: unknown[] }).value;
  if (pv.length !== 100 || JSON.stringify(pv) !== JSON.stringify(bv)) {
    throw new Error(`first page: product has ${pv.length} records, baseline ${bv.length}, or they differ`);
  }
}

const productKeyPath = (key: string) => `/odata/Property(${encodeURIComponent(`'${key.replace(/'/g, "''")}'`)})`;
const baselineKeyPath = (key: string) => `/Property/${encodeURIComponent(key)}`;

// ---------------------------------------------------------------------------------------------------------
// Report

const SECTION = 'key-and-page';
const SECTION_TITLE = 'Fetch by key and first page';
const SECTION_INTRO = `Scenarios: **key** is \`GET /odata/Property('<ListingKey>')\`, rotating through about ${KEY_SAMPLE} real keys
spread over the table, against the baseline's \`GET /Property/<key>\`; **page** is \`GET /odata/Property\`
(the first page of 100 listings in the default order) against the baseline's \`GET /Property\`.
The baseline (\`bench/baseline-server.ts\`) is bare Express 4 with the same driver (a better-sqlite3 prepared
statement or a mysql2 \`pool.execute\`) sending the stored record text as it is; no middleware.`;

const INTRO_BEGIN = '<!-- bench-intro -->';
const INTRO_END = '<!-- /bench-intro -->';
const DOC_INTRO = `# Benchmarks

${INTRO_BEGIN}
What is measured: the product (\`reso-server serve\`) and a baseline doing the least an Express + database
driver handler can do, serving the same rows from the same database, each loaded in turn by
[autocannon](https://github.com/mcollina/autocannon) from a separate process (\`npm run bench\`, source in
\`bench/\`). Every figure that matters is a **ratio product/baseline measured in the same run**: the runs
happen on a shared, noisy 2-core machine (servers pinned to one core, the load generator to the other),
so absolute requests per second drift between runs and only mean something next to the baseline beside them.
Target: a ratio of at least ${TARGET_RATIO.toFixed(2)} in every scenario.

Columns: **ratio** is product/baseline of the best round's requests per second (the headline figure);
**ratio per CPU-s** is product/baseline of requests per second of server CPU time over all rounds, which
holds up better when other work on the machine takes CPU from the servers (see *server CPU*: a server
well below 100% of its core was starved by other processes or waiting on the database). Latencies are
autocannon's, in ms, at the best round; *body* is the product's response size.

Each scenario family below has its own section; each run records its date, exact command, data size and
database. \`npm run bench -- --write\` replaces the previous run of the same family and database.
${INTRO_END}
`;

function fmt(n: number): string {
  return n >= 100 ? n.toFixed(0) : n.toFixed(1);
}

function table(results: ScenarioResult[]): string {
  const lines = [
    '| scenario | product req/s | baseline req/s | ratio | ratio per CPU-s | product p50 / p99 ms | baseline p50 / p99 ms | server CPU product / baseline | body |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    const p = best(r.product);
    const b = best(r.baseline);
    const ratio = p.reqPerSec / b.reqPerSec;
    const perCpu = Number.isFinite(cpuRatio(r)) ? cpuRatio(r).toFixed(2) : 'n/a';
    lines.push(`| ${r.name} | ${fmt(p.reqPerSec)} | ${fmt(b.reqPerSec)} | **${ratio.toFixed(2)}**${ratio < TARGET_RATIO ? ' ⚠' : ''} | ${perCpu} `
      + `| ${p.p50} / ${p.p99} | ${b.p50} / ${b.p99} | ${p.serverCpu.toFixed(0)}% / ${b.serverCpu.toFixed(0)}% `
      + `| ${(p.bytesPerReq / 1024).toFixed(1)} KB |`);
  }
  return lines.join('\n');
}

function rounds(results: ScenarioResult[]): string {
  return results.map((r) => `${r.name}: product ${r.product.map((m) => fmt(m.reqPerSec)).join(', ')}; `
    + `baseline ${r.baseline.map((m) => fmt(m.reqPerSec)).join(', ')}`).join('. ');
}

function runSection(o: Options, db: BenchDatabase, command: string, results: ScenarioResult[]): string {
  const cpu = cpus()[0]?.model?.trim() ?? 'unknown CPU';
  return `<!-- bench-run ${SECTION} ${o.db} -->
### ${o.db === 'sqlite' ? 'SQLite' : 'MariaDB/MySQL'}, ${o.listings} listings: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC

- Command: \`${command}\`
- Data: ${o.listings} demo listings (with their media, rooms, open houses…) in \`${db.description}\`
- Load: ${o.connections} connections; ${o.duration} s per measurement after ${o.warmup} s of warm-up; ${o.rounds} rounds per server
  in the order baseline-product, product-baseline, …; the best round of each counts
- Every round, req/s: ${rounds(results)}
- Node ${process.version}, ${cpus().length} × ${cpu}${o.pin ? '; servers pinned to CPU 1, load generator to CPU 0' : ''}; load average ${loadAtStart.toFixed(1)} at the start

${table(results)}
<!-- /bench-run -->`;
}

function writeDoc(o: Options, db: BenchDatabase, command: string, results: ScenarioResult[]): void {
  const run = runSection(o, db, command, results);
  let doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : DOC_INTRO;
  // The intro is ours: refresh it so it describes the current columns.
  const a = doc.indexOf(INTRO_BEGIN);
  const b = a < 0 ? -1 : doc.indexOf(INTRO_END, a);
  if (a >= 0 && b > a) {
    const fresh = DOC_INTRO.slice(DOC_INTRO.indexOf(INTRO_BEGIN), DOC_INTRO.indexOf(INTRO_END));
    doc = doc.slice(0, a) + fresh + doc.slice(b);
  }
  const begin = `<!-- bench-family ${SECTION} -->`;
  const end = `<!-- /bench-family ${SECTION} -->`;
  const i = doc.indexOf(begin);
  const j = i < 0 ? -1 : doc.indexOf(end, i);
  const runs = new Map<string, string>();
  if (i >= 0 && j > i) {
    const re = new RegExp(`<!-- bench-run ${SECTION} (\\w+) -->[\\s\\S]*?<!-- /bench-run -->`, 'g');
    for (const m of doc.slice(i, j).matchAll(re)) runs.set(m[1], m[0]);
  }
  runs.set(o.db, run);
  const ordered = ['sqlite', 'mysql'].filter((d) => runs.has(d)).map((d) => runs.get(d)!);
  const family = `${begin}\n## ${SECTION_TITLE}\n\n${SECTION_INTRO}\n\n${ordered.join('\n\n')}\n${end}`;
  if (i >= 0 && j > i) doc = doc.slice(0, i) + family + doc.slice(j + end.length);
  else doc = `${doc.replace(/\s*$/, '')}\n\n${family}\n`;
  mkdirSync(join(ROOT, 'docs'), { recursive: true });
  writeFileSync(DOC, doc);
  log(`wrote ${relative(ROOT, DOC)}`);
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
  const command = `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`;
  const db = await prepareDatabase(o);
  const keys = await sampleKeys(db.url);
  if (keys.length < 10) throw new Error(`only ${keys.length} listing keys in the benchmark database`);
  o.pin = pinSelf(o.pin);
  loadAtStart = loadavg()[0];

  const servers: ServerProcess[] = [];
  try {
    const env = { DATABASE_URL: db.url, PORT: '0', NODE_ENV: 'production' };
    // `reso-server serve` itself, through a script of its own name (see bench/product-server.ts).
    const product = await startChild('product', join(__dirname, 'product-server.js'), [],
      { ...env, PAGE_SIZE: '100', SEED_LISTINGS: '0' }, o.pin);
    servers.push(product);
    const baseline = await startChild('baseline', join(__dirname, 'baseline-server.js'), [], env, o.pin);
    servers.push(baseline);
    log(`product on port ${product.port}, baseline on port ${baseline.port}; ${keys.length} keys`);
    await checkSameAnswers(product, baseline, keys);

    const scenarios: Scenario[] = [
      {
        name: 'key',
        product: { server: product, path: (i) => productKeyPath(keys[i % keys.length]) },
        baseline: { server: baseline, path: (i) => baselineKeyPath(keys[i % keys.length]) },
      },
      {
        name: 'page',
        product: { server: product, path: () => '/odata/Property' },
        baseline: { server: baseline, path: () => '/Property' },
      },
    ];
    const results: ScenarioResult[] = [];
    for (const s of scenarios) {
      const r: ScenarioResult = { name: s.name, product: [], baseline: [] };
      // Baseline, product; product, baseline; …: a steady drift in the machine's load favours neither.
      for (let round = 1; round <= o.rounds; round++) {
        const order = round % 2 === 1 ? (['baseline', 'product'] as const) : (['product', 'baseline'] as const);
        for (const side of order) r[side].push(await measure(`${s.name} ${side.padEnd(8)} #${round}`, s[side], o));
      }
      results.push(r);
    }

    console.log(`\n${o.listings} listings, ${db.description}, ${o.connections} connections, ${o.duration} s × ${o.rounds} rounds (best round counts)\n`);
    console.log(table(results));
    for (const r of results) {
      console.log(`${r.name}: ratio of best ${(best(r.product).reqPerSec / best(r.baseline).reqPerSec).toFixed(2)}, `
        + `ratio of means ${(mean(r.product) / mean(r.baseline)).toFixed(2)}, `
        + `ratio of requests per server CPU-second ${cpuRatio(r).toFixed(2)}`);
    }
    for (const r of results) {
      for (const [side, m] of [['product', best(r.product)], ['baseline', best(r.baseline)]] as const) {
        if (m.loadCpu > 90) console.log(`${r.name} ${side}: the load generator used ${m.loadCpu.toFixed(0)}% of its core and may be the limit`);
        else if (m.serverCpu < 80) console.log(`${r.name} ${side}: the server got only ${m.serverCpu.toFixed(0)}% of a core (other load on the machine, or waiting on the database)`);
      }
    }
    if (o.write) writeDoc(o, db, command, results);
    const low = results.filter((r) => best(r.product).reqPerSec / best(r.baseline).reqPerSec < TARGET_RATIO);
    if (low.length) console.log(`\nbelow the target ratio ${TARGET_RATIO}: ${low.map((r) => r.name).join(', ')}`);
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
