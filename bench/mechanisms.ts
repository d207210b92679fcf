/**
 * What each performance mechanism buys: the same build served twice at once, as deployed ("on") and with one
 * mechanism switched off ("off": RESO_BENCH_WITHOUT, src/foundation/bench-without.ts, or RECORD_CACHE_MB=0 for the
 * record cache), each `reso-server serve` pinned to CPU 1 and wrk to CPU 0, on the scenario the mechanism exists for.
 * Rounds are interleaved (on, off; off, on; …) and each pair of rounds gives a ratio on/off; the figure is their
 * median, of requests per second and of requests per second of the server's CPU time (which holds up better when
 * other work on the machine takes CPU from the servers). A case with nothing switched off ("none") measures on
 * against on: the noise of the machine. The scan threads are measured by bench/unindexed-scans.ts (no read of the
 * shipped dictionary is a scan; docs/benchmarks/mechanisms.md).
 *
 *   npm run build && npm run build:tests && node dist/bench/mechanisms.js [--db sqlite|mysql] [--listings 20000]
 *     [--duration 8] [--rounds 3] [--settle 5] [--connections 16] [--only record-cache,plan-cache,…] [--off-first]
 *
 * The database: .bench/mechanisms-N.sqlite, or the database reso_mechanisms on MYSQL_URL (default
 * mysql://root@127.0.0.1:3306/test), seeded with N demo listings when it holds another number.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { freshDatabase } from './fresh-database';
import { ListingFacts, listingFacts } from './listing-facts';
import { cpuSeconds } from './process-cpu';
import { startProduct } from './product-process';
import { exitUnlessWrk, wrk } from './wrk';

const ROOT = resolve(__dirname, '../..');
const TOKEN = randomBytes(24).toString('base64url');
type Db = 'sqlite' | 'mysql';
type Scenario = 'key' | 'page' | 'filtered' | 'expand';

interface Case {
  readonly mechanism: string;
  readonly scenario: Scenario;
  /** The "off" server's settings beyond the "on" server's. */
  readonly off: Record<string, string>;
  readonly dbs: readonly Db[];
}

const without = (m: string) => ({ RESO_BENCH_WITHOUT: m });
const BOTH: readonly Db[] = ['sqlite', 'mysql'];
const CASES: readonly Case[] = [
  { mechanism: 'none', scenario: 'key', off: {}, dbs: BOTH },
  { mechanism: 'none', scenario: 'expand', off: {}, dbs: BOTH },
  { mechanism: 'record-cache', scenario: 'key', off: { RECORD_CACHE_MB: '0' }, dbs: BOTH },
  { mechanism: 'record-cache', scenario: 'page', off: { RECORD_CACHE_MB: '0' }, dbs: BOTH },
  { mechanism: 'expansion-cache', scenario: 'expand', off: without('expansion-cache'), dbs: BOTH },
  { mechanism: 'byte-pieces', scenario: 'expand', off: without('byte-pieces'), dbs: BOTH },
  { mechanism: 'byte-pieces', scenario: 'page', off: without('byte-pieces'), dbs: BOTH },
  { mechanism: 'log-thread', scenario: 'key', off: without('log-thread'), dbs: BOTH },
  { mechanism: 'plan-cache', scenario: 'filtered', off: without('plan-cache'), dbs: BOTH },
  { mechanism: 'plan-cache', scenario: 'key', off: without('plan-cache'), dbs: BOTH },
];

function paths(scenario: Scenario, facts: ListingFacts): string[] {
  const key = (k: string) => `/odata/Property('${encodeURIComponent(k)}')`;
  switch (scenario) {
    case 'key': return facts.keys.map(key);
    case 'page': return ['/odata/Property'];
    case 'filtered': return [`/odata/Property?$filter=${encodeURIComponent(`ModificationTimestamp gt '${facts.middle}'`)}`];
    case 'expand': return ['/odata/Property?$expand=Media'];
  }
}

interface Options { db: Db; listings: number; duration: number; rounds: number; settle: number; connections: number; only?: Set<string>; offFirst: boolean }

function parseArgs(argv: string[]): Options {
  const o: Options = { db: 'sqlite', listings: 20000, duration: 8, rounds: 3, settle: 5, connections: 16, offFirst: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--off-first') { o.offFirst = true; continue; }
    const v = argv[++i];
    switch (argv[i - 1]) {
      case '--db': if (v !== 'sqlite' && v !== 'mysql') throw new Error('--db is sqlite or mysql'); o.db = v; break;
      case '--listings': o.listings = Number(v); break;
      case '--duration': o.duration = Number(v); break;
      case '--rounds': o.rounds = Number(v); break;
      case '--settle': o.settle = Number(v); break;
      case '--connections': o.connections = Number(v); break;
      case '--only': o.only = new Set(v.split(',')); break;
      default: throw new Error(`unknown argument ${argv[i - 1]}`);
    }
  }
  return o;
}

function databaseUrl(o: Options): string {
  if (o.db === 'sqlite') return `sqlite:${join(ROOT, '.bench', `mechanisms-${o.listings}.sqlite`)}`;
  const u = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
  u.pathname = '/reso_mechanisms';
  return u.toString();
}

/** The database with `listings` demo listings: reused if it holds that many, else made afresh and seeded. */
async function seeded(url: string, listings: number): Promise<ListingFacts> {
  const facts = await listingFacts(url).catch(() => undefined);
  if (facts?.listings === listings) return facts;
  console.error(`[mechanisms] seeding ${listings} listings into ${url}`);
  mkdirSync(join(ROOT, '.bench'), { recursive: true });
  await freshDatabase(url);
  const seeding = await startProduct(url, listings, TOKEN);
  await stop(seeding.child);
  return listingFacts(url);
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null) return done();
    child.once('exit', () => done());
    child.kill();
  });
}

interface Server { readonly child: ChildProcess; readonly origin: string }

async function serve(url: string, env: Record<string, string>): Promise<Server> {
  const settings = { RESO_BENCH_WITHOUT: '', NODE_ENV: 'production', PAGE_SIZE: '100', MAX_CONCURRENT_REQUESTS: '64', ...env };
  const { base, child } = await startProduct(url, 0, TOKEN, 1, settings);
  execFileSync('taskset', ['-a', '-pc', '1', String(child.pid)], { stdio: 'ignore' });
  return { child, origin: new URL(base).origin };
}

/** p50, p99: latency in ms. */
interface Round { readonly perSecond: number; readonly cpuSeconds: number; readonly p50: number; readonly p99: number }

/** wrk on CPU 0 for `seconds` (bench/wrk.ts), asking for `paths` in turn; a response other than 2xx fails the run. */
async function load(server: Server, paths: readonly string[], seconds: number, connections: number): Promise<Round> {
  const before = cpuSeconds(server.child.pid);
  const r = await wrk({ origin: server.origin, paths, headers: { Authorization: `Bearer ${TOKEN}` }, connections, seconds, cpu: 0 });
  return { perSecond: r.requestsPerSecond, cpuSeconds: cpuSeconds(server.child.pid) - before, p50: r.latency.p50, p99: r.latency.p99 };
}

/** A ratio on/off as what the mechanism buys: +25% for 1.25. */
const gain = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(0)}%`;

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function measure(c: Case, url: string, facts: ListingFacts, o: Options): Promise<string> {
  const asked = paths(c.scenario, facts);
  // The server started first has done worse than its twin on this machine: --off-first tells that apart from a gain.
  const first = await serve(url, o.offFirst ? c.off : {});
  const second = await serve(url, o.offFirst ? {} : c.off);
  const [on, off] = o.offFirst ? [second, first] : [first, second];
  try {
    for (const s of [on, off]) await load(s, asked, o.settle, o.connections); // V8 compiles the hot path under load
    const got = { on: [] as Round[], off: [] as Round[] };
    for (let r = 0; r < o.rounds; r++) {
      for (const side of r % 2 ? ['off', 'on'] as const : ['on', 'off'] as const) {
        got[side].push(await load(side === 'on' ? on : off, asked, o.duration, o.connections));
      }
    }
    const byRound = (measure: (x: Round) => number) => got.on.map((x, i) => measure(x) / measure(got.off[i]));
    const [rates, perCpu] = [byRound((x) => x.perSecond), byRound((x) => (x.perSecond * o.duration) / x.cpuSeconds)];
    const list = (rs: Round[]) => rs.map((x) => `${x.perSecond.toFixed(0)} (${x.p50.toFixed(2)}/${x.p99.toFixed(2)})`).join(', ');
    return `| ${c.mechanism} | ${c.scenario} | ${o.db} | ${median(got.on.map((x) => x.perSecond)).toFixed(0)} | ${median(got.off.map((x) => x.perSecond)).toFixed(0)} `
      + `| **${gain(median(rates))}** | ${rates.map((x) => x.toFixed(2)).join(', ')} | **${gain(median(perCpu))}** | ${perCpu.map((x) => x.toFixed(2)).join(', ')} `
      + `| ${list(got.on)}; ${list(got.off)} |`;
  } finally {
    await Promise.all([stop(on.child), stop(off.child)]);
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  exitUnlessWrk('mechanisms');
  const url = databaseUrl(o);
  const facts = await seeded(url, o.listings);
  execFileSync('taskset', ['-a', '-pc', '0', String(process.pid)], { stdio: 'ignore' });
  console.log(`${new Date().toISOString()}, ${o.listings} listings, ${o.db}, ${o.rounds} rounds of ${o.duration} s, ${o.connections} connections, load average ${loadavg()[0].toFixed(1)}\n`);
  console.log('| mechanism | scenario | database | on (req/s, median) | off (req/s, median) | gain (median on/off) | on/off by round | gain per server CPU-s (median) | on/off per CPU-s by round | rounds on; off: req/s (p50/p99 latency, ms) |');
  console.log('|---|---|---|---:|---:|---:|---|---:|---|---|');
  for (const c of CASES.filter((x) => x.dbs.includes(o.db) && (!o.only || o.only.has(x.mechanism)))) {
    console.log(await measure(c, url, facts, o));
  }
  console.log(`\nload average at the end ${loadavg()[0].toFixed(1)}`);
}

main().catch((e: Error) => { console.error(`[mechanisms] ${e.stack ?? e.message}`); process.exit(1); });
