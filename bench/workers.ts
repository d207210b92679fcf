/**
 * What a second worker gives: a fetch by key and a page of 100 listings, requests a second with `--workers 1` and
 * `--workers 2`, against the same SQLite database in the same run, in alternating turns (1, 2, 1, 2, …) so that
 * other work on the machine weighs on both alike; and the server's CPU time per request (primary and workers).
 *
 *   npm run build && node dist/bench/workers.js [--seconds S] [--connections C] [--listings N] [--rounds R] [--write]
 *
 * Seeds N listings (default 20,000) into a fresh SQLite file in .bench/ (or uses DATABASE_URL as it is), then for each
 * round starts `reso-server serve` (bench/product-server.ts) with WORKERS=1, loads it, stops it, and the same with
 * WORKERS=2. Each load is a 1 s warm-up then S seconds of autocannon with C connections (one token, so
 * MAX_CONCURRENT_REQUESTS is raised to C). The load generator is this process, on the same cores as the server:
 * on a 2-core machine two workers and the load generator share two cores, so the table also gives the server's CPU
 * per request and the load generator's, which say what the rate alone cannot. `--write` puts the result in
 * docs/benchmarks.md (its own section). Not part of the test suite.
 */
import autocannon from 'autocannon';
import { mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { writeBenchSection } from './doc-section';
import { freshDatabase } from './fresh-database';
import { cpuSeconds } from './process-cpu';
import { startProduct } from './product-process';

const ROOT = resolve(__dirname, '../..');
const TOKEN = 'bench-workers-token-4e8b1d7c9a2f6035e1';
const WORKER_COUNTS = [1, 2] as const;

interface Options { seconds: number; connections: number; listings: number; rounds: number; write: boolean }

function parseArgs(argv: string[]): Options {
  const o: Options = { seconds: 8, connections: 16, listings: 20_000, rounds: 3, write: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--seconds') o.seconds = Number(argv[++i]);
    else if (argv[i] === '--connections') o.connections = Number(argv[++i]);
    else if (argv[i] === '--listings') o.listings = Number(argv[++i]);
    else if (argv[i] === '--rounds') o.rounds = Number(argv[++i]);
    else if (argv[i] === '--write') o.write = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (![o.seconds, o.connections, o.listings, o.rounds].every((n) => Number.isInteger(n) && n > 0)) {
    throw new Error('--seconds, --connections, --listings and --rounds take positive integers');
  }
  return o;
}

/**
 * One load of one target against one server. `serverCores`: the server's CPU seconds per second of load (what it
 * got of the machine); `machineCores`: every process's, from /proc/stat (2.0 on this machine: nothing left idle).
 */
interface Turn { rps: number; serverCpuMsPerRequest: number; loadCpuMsPerRequest: number; serverCores: number; machineCores: number }

/** Busy and total CPU ticks of the whole machine since boot (/proc/stat's first line). */
function machineTicks(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
  const ticks = fields.map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - ticks[3] - ticks[4], total };
}

function load(url: string, seconds: number, connections: number): Promise<autocannon.Result> {
  return new Promise((resolveRun, rejectRun) => {
    autocannon({ url, connections, duration: seconds, timeout: 30, headers: { Authorization: `Bearer ${TOKEN}` } },
      (err, result) => (err ? rejectRun(err) : resolveRun(result)));
  });
}

/** The server's processes: the primary and, in a cluster, its workers (from /proc). */
function serverPids(child: ChildProcess): number[] {
  const pid = child.pid!;
  try {
    return [pid, ...readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)];
  } catch {
    return [pid];
  }
}

const serverCpu = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);

async function turn(url: string, pids: number[], o: Options): Promise<Turn> {
  await load(url, 1, o.connections);
  const server0 = serverCpu(pids);
  const self0 = process.cpuUsage();
  const machine0 = machineTicks();
  const r = await load(url, o.seconds, o.connections);
  const server = serverCpu(pids) - server0;
  const self = process.cpuUsage(self0);
  const machine = machineTicks();
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  const n = r.requests.total;
  return {
    rps: n / r.duration, serverCpuMsPerRequest: (server * 1000) / n, loadCpuMsPerRequest: (self.user + self.system) / 1000 / n,
    serverCores: server / r.duration,
    machineCores: (availableParallelism() * (machine.busy - machine0.busy)) / (machine.total - machine0.total),
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  await exited;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** turns[target][workers]: every round's turn. */
type Turns = Record<string, Record<number, Turn[]>>;

function table(turns: Turns): string {
  const rows: string[] = [];
  for (const [target, byWorkers] of Object.entries(turns)) {
    const one = byWorkers[1];
    for (const workers of WORKER_COUNTS) {
      const t = byWorkers[workers];
      const rps = median(t.map((x) => x.rps));
      const cpu = median(t.map((x) => x.serverCpuMsPerRequest));
      const perCpu = 1000 / cpu;
      const basePerCpu = 1000 / median(one.map((x) => x.serverCpuMsPerRequest));
      rows.push(`| ${target} | ${workers} | ${rps.toFixed(0)} | ${t.map((x) => x.rps.toFixed(0)).join(', ')} | ${(rps / median(one.map((x) => x.rps))).toFixed(2)} | `
        + `${cpu.toFixed(2)} | ${perCpu.toFixed(0)} | ${(perCpu / basePerCpu).toFixed(2)} | ${median(t.map((x) => x.loadCpuMsPerRequest)).toFixed(2)} | `
        + `${median(t.map((x) => x.serverCores)).toFixed(2)} | ${median(t.map((x) => x.machineCores)).toFixed(2)} |`);
    }
  }
  return [
    '| request | workers | req/s (median) | req/s each round | ratio | server CPU ms/request | requests per server CPU-s | ratio per CPU-s | load generator CPU ms/request | server cores busy | machine cores busy |',
    '| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const dir = join(ROOT, '.bench');
  mkdirSync(dir, { recursive: true });
  const databaseUrl = process.env.DATABASE_URL ?? `sqlite:${join(dir, `workers-${o.listings}.sqlite`)}`;
  if (!process.env.DATABASE_URL) await freshDatabase(databaseUrl);
  const env = { MAX_CONCURRENT_REQUESTS: String(o.connections) };
  // The first start seeds (once, with one process); every turn after finds the listings there.
  const seeding = await startProduct(databaseUrl, o.listings, TOKEN, 1, env);
  const first = await fetch(`${seeding.base}/Property?$top=1&$select=ListingKey`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  const key = ((await first.json()) as { value: { ListingKey: string }[] }).value[0].ListingKey;
  await stop(seeding.child);
  const targets: Record<string, string> = { 'fetch by key': `/Property('${encodeURIComponent(key)}')`, 'page of 100': '/Property?$top=100' };
  const turns: Turns = Object.fromEntries(Object.keys(targets).map((t) => [t, { 1: [], 2: [] }]));
  const loadBefore = loadavg()[0].toFixed(1);
  for (let round = 1; round <= o.rounds; round++) {
    for (const workers of WORKER_COUNTS) {
      const { base, child } = await startProduct(databaseUrl, o.listings, TOKEN, workers, env);
      try {
        const pids = serverPids(child);
        if (pids.length !== workers + (workers > 1 ? 1 : 0)) throw new Error(`expected ${workers} workers, found processes ${pids.join(', ')}`);
        for (const [target, path] of Object.entries(targets)) {
          const t = await turn(`${base}${path}`, pids, o);
          turns[target][workers].push(t);
          console.error(`round ${round}, ${workers} worker(s), ${target}: ${t.rps.toFixed(0)} req/s, server ${t.serverCpuMsPerRequest.toFixed(2)} ms CPU/request, `
            + `server ${t.serverCores.toFixed(2)} cores, machine ${t.machineCores.toFixed(2)} cores busy`);
        }
      } finally {
        await stop(child);
      }
    }
  }
  const result = table(turns);
  console.log(result);
  if (o.write) {
    const database = databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'MariaDB/MySQL';
    writeBenchSection('workers', `${database}, ${o.listings} listings, ${availableParallelism()} cores: {when} (load average ${loadBefore} → ${loadavg()[0].toFixed(1)})`,
      `node dist/bench/workers.js --seconds ${o.seconds} --connections ${o.connections} --listings ${o.listings} --rounds ${o.rounds}`, result);
  }
}

main().then(() => process.exit(0), (e: Error) => { console.error(e); process.exit(1); });
