/**
 * Issue 42, point 3: the wire limit measured by a load generator that does not parse bodies (`wrk`, Debian's
 * package `wrk`: autocannon reads every body, and capped the earlier "wire limit" figures at its own speed).
 * Each scenario is measured against the static body of the same bytes: plain node:http (bench/static-body.ts)
 * answering the product's own response, captured once per coding, identity and gzip (the product's gzip body,
 * sent with Content-Encoding: gzip). The server (product or static) is pinned to CPU 1, wrk to CPU 0; rounds
 * alternate product and static (PS SP …) so that drift on a shared machine hits both; the best round counts.
 *
 *   npm run build && npm run build:tests && node dist/bench/gzip-wire.js [--listings N] [--seconds S]
 *     [--connections C] [--rounds R] [--scenarios key,page,page1000,expand,walk] [--env NAME=VALUE …] [--write]
 *
 * DATABASE_URL picks the database (default: a SQLite file in .bench/, seeded once per listing count); the product
 * runs with MAX_PAGE_SIZE=1000. `--product-root DIR` runs another checkout's build as the product (another
 * revision, on the same database: its migrations run first, so give it a database of its own); `--env` gives it a
 * setting (`--env GZIP_PAGE_CACHE_MB=0`: what kept pages buy). `--write` appends
 * to docs/benchmarks/gzip.md. The product compresses at one zlib level with no setting to change it
 * (src/http/compression.ts), so what another level would buy is timed here: zlib on the captured identity bodies
 * at levels 1 and 6, in this process (the CPU the product would spend per response, and the size it would send).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { startProduct } from './product-process';
import { exitUnlessWrk, wrk } from './wrk';

const ROOT = resolve(__dirname, '../..');
const DIR = join(ROOT, '.bench', 'gzip-wire');
const DOC = join(ROOT, 'docs', 'benchmarks', 'gzip.md');
const TOKEN = 'bench-gzip-wire-token-3c8e1f0a9b7d4562';
const CODINGS = ['identity', 'gzip'] as const;
type Coding = typeof CODINGS[number];
const SCENARIOS = ['key', 'page', 'page1000', 'expand', 'walk'] as const;
type Scenario = typeof SCENARIOS[number];

interface Options {
  listings: number; seconds: number; connections: number; rounds: number; scenarios: Scenario[]; write: boolean; productRoot?: string;
  /** The product's settings beyond the bench's (`--env NAME=VALUE`, repeated): a mechanism switched off, say. */
  env: Record<string, string>;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { listings: 2000, seconds: 8, connections: 16, rounds: 2, scenarios: [...SCENARIOS], write: false, env: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--listings') o.listings = Number(argv[++i]);
    else if (a === '--seconds') o.seconds = Number(argv[++i]);
    else if (a === '--connections') o.connections = Number(argv[++i]);
    else if (a === '--rounds') o.rounds = Number(argv[++i]);
    else if (a === '--scenarios') o.scenarios = argv[++i].split(',') as Scenario[];
    else if (a === '--write') o.write = true;
    else if (a === '--product-root') o.productRoot = resolve(argv[++i]);
    else if (a === '--env') {
      const [name, ...value] = argv[++i].split('=');
      o.env[name] = value.join('=');
    }
    else throw new Error(`unknown argument ${a}`);
  }
  const unknown = o.scenarios.filter((s) => !SCENARIOS.includes(s));
  if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(', ')}: from ${SCENARIOS.join(', ')}`);
  if (o.listings < 1000 && o.scenarios.some((s) => s === 'page1000' || s === 'walk')) throw new Error('page1000 and walk need --listings 1000 or more');
  return o;
}

/** A response's bytes as sent (nothing decoded), with its headers. */
function fetchRaw(url: string, coding: Coding): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolveFetch, reject) => {
    const req = request(url, { headers: { Authorization: `Bearer ${TOKEN}`, 'Accept-Encoding': coding, Prefer: 'odata.maxpagesize=1000' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolveFetch({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The next links of a walk from `first`, read as identity JSON: the paths wrk cycles through. */
async function walkPaths(base: string, first: string): Promise<string[]> {
  const paths: string[] = [];
  let url: string | undefined = `${base}${first}`;
  while (url) {
    paths.push(url.slice(new URL(base).origin.length));
    const r = await fetchRaw(url, 'identity');
    url = (JSON.parse(r.body.toString()) as { '@odata.nextLink'?: string })['@odata.nextLink'];
  }
  return paths;
}

function pin(pid: number, cpu: number): void {
  execFileSync('taskset', ['-a', '-pc', String(cpu), String(pid)], { stdio: 'ignore' });
}

/** Plain node:http answering the captured bodies (`/n` the n-th), with Content-Encoding for gzip ones. */
function startStatic(files: readonly string[], coding: Coding): Promise<{ origin: string; child: ChildProcess }> {
  const env = { ...process.env, BENCH_PARENT_PID: String(process.pid), ...(coding === 'gzip' ? { STATIC_CONTENT_ENCODING: 'gzip' } : {}) };
  const child = spawn(process.execPath, [join(ROOT, 'dist/bench/static-body.js'), ...files], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolveStart, reject) => {
    child.once('exit', (code) => reject(new Error(`the static server exited (${code})`)));
    child.stdout!.once('data', (c: Buffer) => {
      const m = /listening on (http:\/\/\S+)/.exec(c.toString());
      if (!m) return reject(new Error(`the static server said ${c.toString()}`));
      child.stdout!.resume();
      resolveStart({ origin: m[1], child });
    });
  });
}

/** One wrk run on CPU 0 (bench/wrk.ts): requests a second, the paths asked for in turn. */
async function load(origin: string, paths: readonly string[], coding: Coding, o: Options): Promise<number> {
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Accept-Encoding': coding, Prefer: 'odata.maxpagesize=1000' };
  return (await wrk({ origin, paths, headers, connections: o.connections, seconds: o.seconds, cpu: 0 })).requestsPerSecond;
}

interface Row { scenario: string; coding: Coding; bytes: number; product: number; staticRate: number; perRequest: number }
/** A scenario's identity bodies as the product sent them: what the zlib timing compresses. */
interface Captured { scenario: Scenario; bodies: Buffer[] }

const TITLES: Record<Scenario, string> = {
  key: 'key fetch', page: 'first page of 100', page1000: 'page of 1,000', expand: 'page of 100 with $expand=Media', walk: 'replication walk, pages of 1,000 (records/s)',
};

async function measure(o: Options, base: string, captured: Captured[]): Promise<Row[]> {
  const first = await fetchRaw(`${base}/Property?$top=1&$select=ListingKey`, 'identity');
  const key = (JSON.parse(first.body.toString()) as { value: { ListingKey: string }[] }).value[0].ListingKey;
  const paths: Record<Scenario, () => Promise<string[]>> = {
    key: async () => [`/Property('${encodeURIComponent(key)}')`],
    page: async () => ['/Property?$top=100'],
    page1000: async () => ['/Property?$top=1000'],
    expand: async () => ['/Property?$top=100&$expand=Media'],
    walk: () => walkPaths(base, '/Property'),
  };
  const origin = new URL(base).origin;
  const rows: Row[] = [];
  for (const scenario of o.scenarios) {
    const list = (await paths[scenario]()).map((p) => (p.startsWith('/odata') ? p : `/odata${p}`));
    for (const coding of CODINGS) {
      const files: string[] = [];
      let bytes = 0;
      for (const [i, path] of list.entries()) {
        const r = await fetchRaw(`${origin}${path}`, coding);
        if (r.status !== 200) throw new Error(`${path} (${coding}): ${r.status} ${r.body.toString().slice(0, 200)}`);
        if ((r.headers['content-encoding'] ?? 'identity') !== coding) throw new Error(`${path}: asked for ${coding}, got ${String(r.headers['content-encoding'])}`);
        const file = join(DIR, `${scenario}-${coding}-${i}.bin`);
        writeFileSync(file, r.body);
        files.push(file);
        bytes += r.body.length;
        if (coding === 'identity') bodiesOf(captured, scenario).push(r.body);
      }
      const stat = await startStatic(files, coding);
      try {
        pin(stat.child.pid!, 1);
        let best = { product: 0, staticRate: 0 };
        for (let round = 0; round < o.rounds; round++) {
          // Product and static take turns going first (PS SP …): drift hits both.
          const order = round % 2 === 0 ? ['product', 'static'] : ['static', 'product'];
          for (const which of order) {
            // The server not measured is idle: it takes next to nothing of CPU 1.
            const rate = which === 'product'
              ? await load(origin, list, coding, o)
              : await load(stat.origin, list.map((_, i) => `/${i}`), coding, o);
            if (which === 'product') best = { ...best, product: Math.max(best.product, rate) };
            else best = { ...best, staticRate: Math.max(best.staticRate, rate) };
          }
        }
        const perRequest = scenario === 'walk' ? 1000 : 1;
        rows.push({ scenario: TITLES[scenario], coding, bytes: Math.round(bytes / list.length), product: best.product * perRequest, staticRate: best.staticRate * perRequest, perRequest });
        console.log(`${TITLES[scenario]} ${coding}: product ${(best.product * perRequest).toFixed(0)}, static ${(best.staticRate * perRequest).toFixed(0)}`);
      } finally {
        stat.child.kill('SIGTERM');
      }
    }
  }
  return rows;
}

function bodiesOf(captured: Captured[], scenario: Scenario): Buffer[] {
  let entry = captured.find((c) => c.scenario === scenario);
  if (!entry) captured.push(entry = { scenario, bodies: [] });
  return entry.bodies;
}

const LEVELS = [6, 1] as const;
/** Each level compresses a scenario's bodies for at least this long: a median over enough calls to be steady. */
const TIMING_MS = 1000;

/**
 * zlib at each level on the captured identity bodies, in this process pinned to CPU 1 (where the product ran; wrk
 * is done by now): ms per response (the median call), gzip bytes against the text, and responses a second that
 * one core could compress. The product's own level is 6; 1 has no setting (src/http/compression.ts).
 */
function zlibLevels(captured: readonly Captured[]): string {
  pin(process.pid, 1);
  const lines = captured.map(({ scenario, bodies }) => {
    const text = bodies.reduce((n, b) => n + b.length, 0);
    const cells = LEVELS.map((level) => {
      const times: number[] = [];
      let gz = 0;
      const until = performance.now() + TIMING_MS;
      while (performance.now() < until || times.length < 5) {
        for (const body of bodies) {
          const start = performance.now();
          const out = gzipSync(body, { level });
          times.push(performance.now() - start);
          if (times.length <= bodies.length) gz += out.length;
        }
      }
      const ms = times.sort((x, y) => x - y)[Math.floor(times.length / 2)];
      return `${(gz / text).toFixed(3)} | ${ms.toFixed(2)} | ${(1000 / ms).toFixed(0)}`;
    });
    return `| ${TITLES[scenario]} | ${Math.round(text / bodies.length)} | ${cells.join(' | ')} |`;
  });
  return [
    '| response (identity body) | bytes | level 6: gzip/text | ms | per core/s | level 1: gzip/text | ms | per core/s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...lines,
  ].join('\n');
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  exitUnlessWrk('gzip-wire');
  mkdirSync(DIR, { recursive: true });
  const file = join(ROOT, '.bench', `gzip-wire-${o.listings}.sqlite`);
  const databaseUrl = process.env.DATABASE_URL ?? `sqlite:${file}`;
  const reseeded = databaseUrl.startsWith('sqlite:') && !existsSync(file);
  // All load comes from one client: its concurrent-request limit raised above the connections, as bench/run.ts does.
  const { base, child } = await startProduct(databaseUrl, o.listings, TOKEN, 1, { MAX_PAGE_SIZE: '1000', MAX_CONCURRENT_REQUESTS: String(2 * o.connections), ...o.env }, o.productRoot);
  try {
    pin(child.pid!, 1);
    const load = loadavg()[0].toFixed(1);
    const captured: Captured[] = [];
    const rows = await measure(o, base, captured);
    const levels = zlibLevels(captured);
    const table = [
      '| response | coding | bytes | product (req/s) | static (req/s) | ratio |',
      '|---|---|---:|---:|---:|---:|',
      ...rows.map((r) => `| ${r.scenario} | ${r.coding} | ${r.bytes} | ${r.product.toFixed(0)} | ${r.staticRate.toFixed(0)} | ${(r.product / r.staticRate).toFixed(3)} |`),
    ].join('\n');
    console.log(table);
    console.log(levels);
    if (o.write) {
      const database = databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'MariaDB';
      const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
      const env = Object.entries(o.env).map(([name, value]) => ` --env ${name}=${value}`).join('');
      const command = `node dist/bench/gzip-wire.js${o.productRoot ? ` --product-root ${o.productRoot}` : ''}${env} --listings ${o.listings} --seconds ${o.seconds} --connections ${o.connections} --rounds ${o.rounds} --scenarios ${o.scenarios.join(',')}`;
      const revision = revisionOf(o.productRoot ?? ROOT);
      const section = [
        `## ${database}, ${o.listings} demo listings, product ${revision}: ${when} UTC`, '',
        `\`${databaseUrl.startsWith('sqlite:') ? '' : 'DATABASE_URL=… '}${command}\`${reseeded ? ' (database seeded by this run)' : ''}`, '',
        `${cpus().length} cores, load average ${load} at the start, ${loadavg()[0].toFixed(1)} at the end: the machine was shared with other engineers' `
          + 'test runs, so figures are noisy; product and static were interleaved round by round and each is its best round.', '',
        table, '',
        'zlib in the bench process on CPU 1, on the same identity bodies (a walk: all its pages; ms is the median call):', '',
        levels, '',
      ].join('\n');
      appendSection(section);
    }
  } finally {
    child.kill('SIGTERM');
  }
}

/** The commit a checkout is at, or its folder where it is none (a build copied elsewhere). */
function revisionOf(root: string): string {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return root;
  }
}

/** Appends a run's section to docs/benchmarks/gzip.md (made with its heading the first time). */
function appendSection(section: string): void {
  mkdirSync(join(ROOT, 'docs', 'benchmarks'), { recursive: true });
  const head = '# Gzip at the wire limit (issue 42)\n\nMeasured with `wrk` (bench/gzip-wire.ts), each response against the static body of the same bytes.\n\n';
  const doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : head;
  writeFileSync(DOC, `${doc.trimEnd()}\n\n${section}`);
}

main().then(() => process.exit(0), (e: Error) => { console.error(e); process.exit(1); });
