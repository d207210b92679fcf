/**
 * The service on a 3-node Galera cluster (test/support/galera.ts starts one on loopback ports), three measures:
 * - scale-out: a fetch by key and a page of 100 with 1, 2 and 3 instances, each on its own node (`WORKERS=1`), the
 *   load spread evenly over them; requests a second and, since this machine has only 2 cores for everything, the
 *   CPU each request costs the instances and the database nodes (from /proc), whose inverse is what more cores buy;
 * - causal reads: the same two requests on one instance with `DB_CAUSAL_READS=on` (the default) and `off`, in
 *   alternating turns: what waiting for the node to apply the cluster's commits costs a read;
 * - conflicts: the same listings ingested by two writers at once (in this process, each on its own database
 *   connection pool), through two nodes and through one, against one writer alone: the conflicts lost and retried
 *   per write transaction, how many gave up, and the time taken.
 *
 *   npm run build && node dist/bench/cluster.js [--listings N] [--seconds S] [--connections C] [--rounds R] [--write]
 *
 * Not part of the test suite; needs galera-4 and rsync (as GALERA=1 tests do). `--write` puts the tables in
 * docs/benchmarks.md ("Cluster").
 */
import autocannon from 'autocannon';
import { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import { ListingService } from '../src/process/service';
import { openDatabase } from '../src/storage/db/open-database';
import { galeraDatabase, GaleraCluster } from '../test/support/galera';
import { writeBenchSection } from './doc-section';
import { cpuSeconds } from './process-cpu';
import { startProduct } from './product-process';

const TOKEN = 'bench-cluster-token-6c1e9a3f7d2b8045aa';
/** Requests in progress allowed per client: twice the connections, since a slot comes back on the response's 'close', just after the client may have sent its next request. */
const inProgress = (o: Options) => String(o.connections * 2);

interface Options { listings: number; seconds: number; connections: number; rounds: number; write: boolean }

function parseArgs(argv: string[]): Options {
  const o: Options = { listings: 2000, seconds: 6, connections: 12, rounds: 2, write: false };
  for (let i = 0; i < argv.length; i++) {
    const next = () => Number(argv[++i]);
    if (argv[i] === '--listings') o.listings = next();
    else if (argv[i] === '--seconds') o.seconds = next();
    else if (argv[i] === '--connections') o.connections = next();
    else if (argv[i] === '--rounds') o.rounds = next();
    else if (argv[i] === '--write') o.write = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return o;
}

/** The pids of the cluster's three mariadbd (their pid files). */
function nodePids(cluster: GaleraCluster): number[] {
  return cluster.nodes.map((n) => Number(readFileSync(cluster.pidFile(n.index), 'utf8').trim()));
}

const cpu = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);

interface Turn { rps: number; instanceMs: number; databaseMs: number }

/** C connections spread over the instances' URLs for S seconds; the CPU the instances and the nodes spent per request. */
async function load(urls: readonly string[], o: Options, instancePids: readonly number[], databasePids: readonly number[]): Promise<Turn> {
  const run = (seconds: number) => Promise.all(urls.map((url) => new Promise<autocannon.Result>((done, fail) => {
    autocannon({ url, connections: Math.max(1, Math.round(o.connections / urls.length)), duration: seconds, headers: { Authorization: `Bearer ${TOKEN}` } },
      (err, r) => (err ? fail(err) : done(r)));
  })));
  await run(1);
  const [i0, d0] = [cpu(instancePids), cpu(databasePids)];
  const results = await run(o.seconds);
  const requests = results.reduce((n, r) => n + r.requests.total, 0);
  const bad = results.reduce((n, r) => n + r.non2xx + r.errors, 0);
  if (bad) {
    const statuses = results.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]))));
    throw new Error(`${urls[0]}: ${bad} non-2xx or errors (statuses by instance: ${statuses.join(', ')}; errors ${results.map((r) => r.errors)})`);
  }
  return { rps: requests / o.seconds, instanceMs: ((cpu(instancePids) - i0) * 1000) / requests, databaseMs: ((cpu(databasePids) - d0) * 1000) / requests };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;

/** Instances started on the first `count` nodes, loaded, stopped. */
async function scaleOut(cluster: GaleraCluster, urls: readonly string[], o: Options, key: string): Promise<string> {
  const lines = [row(['request', 'instances (one per node)', 'req/s (median)', 'instance CPU ms/request', 'database CPU ms/request', 'requests per instance CPU-s'])];
  lines.push(row(['---', '---:', '---:', '---:', '---:', '---:']));
  for (const [name, path] of [['fetch by key', `/Property('${key}')`], ['page of 100', '/Property?$top=100']]) {
    for (const count of [1, 2, 3]) {
      const turns: Turn[] = [];
      for (let round = 0; round < o.rounds; round++) {
        const started = await Promise.all(urls.slice(0, count).map((u) => startProduct(u, 0, TOKEN, 1, { MAX_CONCURRENT_REQUESTS: inProgress(o) })));
        try {
          turns.push(await load(started.map((s) => `${s.base}${path}`), o, started.map((s) => s.child.pid!), nodePids(cluster)));
        } finally {
          await Promise.all(started.map((s) => stop(s.child)));
        }
      }
      const instanceMs = median(turns.map((t) => t.instanceMs));
      lines.push(row([name, count, median(turns.map((t) => t.rps)).toFixed(0), instanceMs.toFixed(2), median(turns.map((t) => t.databaseMs)).toFixed(2), (1000 / instanceMs).toFixed(0)]));
      console.error(lines[lines.length - 1]);
    }
  }
  return lines.join('\n');
}

/** One instance on node 2, causal reads on and off in alternating turns. */
async function causalReads(cluster: GaleraCluster, url: string, o: Options, key: string): Promise<string> {
  const lines = [row(['request', 'DB_CAUSAL_READS', 'req/s (median)', 'instance CPU ms/request', 'database CPU ms/request', 'ratio on/off (req/s)'])];
  lines.push(row(['---', '---', '---:', '---:', '---:', '---:']));
  for (const [name, path] of [['fetch by key', `/Property('${key}')`], ['page of 100', '/Property?$top=100']]) {
    const turns: Record<string, Turn[]> = { on: [], off: [] };
    for (let round = 0; round < o.rounds; round++) {
      for (const mode of ['on', 'off']) {
        const s = await startProduct(url, 0, TOKEN, 1, { MAX_CONCURRENT_REQUESTS: inProgress(o), DB_CAUSAL_READS: mode });
        try {
          turns[mode].push(await load([`${s.base}${path}`], o, [s.child.pid!], nodePids(cluster)));
        } finally {
          await stop(s.child);
        }
      }
    }
    const rps = (m: string) => median(turns[m].map((t) => t.rps));
    for (const mode of ['on', 'off']) {
      lines.push(row([name, mode, rps(mode).toFixed(0), median(turns[mode].map((t) => t.instanceMs)).toFixed(2), median(turns[mode].map((t) => t.databaseMs)).toFixed(2),
        mode === 'on' ? (rps('on') / rps('off')).toFixed(2) : '']));
    }
  }
  return lines.join('\n');
}

/** Two writers ingesting the same listings at once (new values each), through `nodes`; conflicts per transaction. */
async function conflicts(urls: readonly string[], records: readonly Record<string, unknown>[]): Promise<string> {
  const lines = [row(['writers', 'through nodes', 'transactions', 'conflicts lost (retried)', 'per transaction', 'gave up', 'seconds'])];
  lines.push(row(['---:', '---', '---:', '---:', '---:', '---:', '---:']));
  for (const nodes of [[1], [1, 1], [1, 2]]) {
    const services = nodes.map((n) => new ListingService(serviceModel, openDatabase(urls[n - 1])));
    const started = performance.now();
    let transactions = 0;
    await Promise.all(services.map(async (service, w) => {
      for (let i = 0; i < records.length; i += 50) {
        const batch = records.slice(i, i + 50).map((r, j) => ({ line: i + j + 1, input: { ...r, ListPrice: 100_000 + w * 1000 + j } }));
        await ingestBatch(service, 'Property', batch, emptyReport());
        transactions++;
      }
    }));
    const seconds = (performance.now() - started) / 1000;
    const counts = services.map((s) => s.db.conflicts!());
    const lost = counts.reduce((n, c) => n + c.conflicts, 0);
    lines.push(row([nodes.length, nodes.join(', '), transactions, lost, (lost / transactions).toFixed(2), counts.reduce((n, c) => n + c.exhausted, 0), seconds.toFixed(1)]));
    for (const s of services) await s.close();
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const loadBefore = loadavg()[0].toFixed(1);
  const cluster = await GaleraCluster.start();
  try {
    const db = await galeraDatabase(cluster);
    // Seeds through node 1 (the first start does), then every instance finds the data there.
    const seeding = await startProduct(db.urls[0], o.listings, TOKEN, 1, {});
    const page = await fetch(`${seeding.base}/Property?$top=300`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const records = ((await page.json()) as { value: Record<string, unknown>[] }).value.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('@'))));
    await stop(seeding.child);
    const key = String(records[0].ListingKey);
    const sections = [
      `Scale-out (${o.connections} connections in all, ${o.seconds} s per turn, ${o.rounds} rounds):\n\n${await scaleOut(cluster, db.urls, o, key)}`,
      `Causal reads (one instance on node 2):\n\n${await causalReads(cluster, db.urls[1], o, key)}`,
      `Conflicts (${records.length} listings ingested by each writer in transactions of 50):\n\n${await conflicts(db.urls, records)}`,
    ];
    const text = sections.join('\n\n');
    console.log(text);
    if (o.write) {
      writeBenchSection('cluster', `MariaDB Galera, 3 nodes on one 2-core machine, ${o.listings} listings: {when} (load average ${loadBefore} → ${loadavg()[0].toFixed(1)})`,
        `node dist/bench/cluster.js --listings ${o.listings} --seconds ${o.seconds} --connections ${o.connections} --rounds ${o.rounds}`, text);
    }
    await db.drop();
  } finally {
    await cluster.stop();
  }
}

main().then(() => process.exit(0), (e: Error) => { console.error(e); process.exit(1); });
