/**
 * What compression costs and saves: for a page of 100 listings, a page of 100 with every expansion, a fetch by
 * key and $metadata, requests a second, bytes on the wire per response and the server's CPU per request with
 * `Accept-Encoding: identity` (the baseline), `gzip` and `br`, all against one server in the same run.
 *
 *   npm run build && node dist/bench/compression.js [--seconds S] [--connections C] [--listings N] [--write]
 *
 * Starts `reso-server serve` (bench/product-server.ts; COMPRESSION on, its default) on a fresh SQLite file in
 * .bench/ (or DATABASE_URL, which it does not reseed). Each phase is a 1 s warm-up then S seconds of autocannon
 * with C connections. `--write` puts the result in docs/benchmarks.md (its own section).
 */
import autocannon from 'autocannon';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuSeconds } from './process-cpu';
import { startProduct } from './product-process';
import { writeBenchSection } from './doc-section';

const ROOT = resolve(__dirname, '../..');
const TOKEN = 'bench-compression-token-7f3a9c1e5b2d8046';
const CODINGS = ['identity', 'gzip', 'br'] as const;

interface Options { seconds: number; connections: number; listings: number; write: boolean }

function parseArgs(argv: string[]): Options {
  const o: Options = { seconds: 8, connections: 8, listings: 2000, write: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--seconds') o.seconds = Number(argv[++i]);
    else if (argv[i] === '--connections') o.connections = Number(argv[++i]);
    else if (argv[i] === '--listings') o.listings = Number(argv[++i]);
    else if (argv[i] === '--write') o.write = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!(o.seconds > 0) || !(o.connections > 0) || !(o.listings > 0)) throw new Error('--seconds, --connections and --listings take positive numbers');
  return o;
}

interface Phase { rps: number; bytesPerResponse: number; cpuMsPerRequest: number }

function run(url: string, coding: string, seconds: number, connections: number): Promise<autocannon.Result> {
  return new Promise((resolveRun, rejectRun) => {
    autocannon({
      url, connections, duration: seconds, timeout: 30,
      headers: { Authorization: `Bearer ${TOKEN}`, 'Accept-Encoding': coding },
    }, (err, result) => (err ? rejectRun(err) : resolveRun(result)));
  });
}

async function phase(url: string, coding: string, pid: number, o: Options): Promise<Phase> {
  await run(url, coding, 1, o.connections);
  const cpu0 = cpuSeconds(pid);
  const r = await run(url, coding, o.seconds, o.connections);
  const cpu = cpuSeconds(pid) - cpu0;
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url} (${coding}): ${r.non2xx} non-2xx, ${r.errors} errors`);
  const n = r.requests.total;
  // autocannon's throughput counts what the socket received: headers and (compressed) bodies.
  return { rps: n / r.duration, bytesPerResponse: r.throughput.total / n, cpuMsPerRequest: (cpu * 1000) / n };
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const dir = join(ROOT, '.bench');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `compression-${o.listings}.sqlite`);
  if (!process.env.DATABASE_URL) for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) rmSync(f);
  const databaseUrl = process.env.DATABASE_URL ?? `sqlite:${file}`;
  const { base, child } = await startProduct(databaseUrl, o.listings, TOKEN);
  try {
    const first = await fetch(`${base}/Property?$top=1&$select=ListingKey`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const key = ((await first.json()) as { value: { ListingKey: string }[] }).value[0].ListingKey;
    const targets: [string, string][] = [
      ['page of 100', `${base}/Property?$top=100`],
      ['page of 100, every expansion', `${base}/Property?$top=100&$expand=Media,OpenHouse,historyTransactional,PropertyRooms,PropertyUnits`],
      ['fetch by key', `${base}/Property('${encodeURIComponent(key)}')`],
      ['$metadata', `${base}/$metadata`],
    ];
    const load = loadavg()[0].toFixed(1);
    const rows: string[] = [];
    for (const [name, url] of targets) {
      const results: Phase[] = [];
      for (const coding of CODINGS) results.push(await phase(url, coding, child.pid!, o));
      const [identity] = results;
      CODINGS.forEach((coding, i) => {
        const p = results[i];
        rows.push(`| ${name} | ${coding} | ${p.rps.toFixed(0)} | ${(p.rps / identity.rps).toFixed(2)} | ${Math.round(p.bytesPerResponse)} | `
          + `${(p.bytesPerResponse / identity.bytesPerResponse).toFixed(3)} | ${p.cpuMsPerRequest.toFixed(2)} | ${(p.cpuMsPerRequest / identity.cpuMsPerRequest).toFixed(2)} |`);
      });
    }
    const table = [
      '| response | Accept-Encoding | req/s | ratio | bytes/response | bytes ratio | server CPU ms/request | CPU ratio |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...rows,
    ].join('\n');
    console.log(table);
    const database = databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'MariaDB/MySQL';
    if (o.write) {
      writeBenchSection('compression', `${database}, ${o.listings} listings: {when} (load average ${load} → ${loadavg()[0].toFixed(1)})`,
        `node dist/bench/compression.js --seconds ${o.seconds} --connections ${o.connections} --listings ${o.listings}`, table);
    }
  } finally {
    child.kill('SIGTERM');
  }
}

main().then(() => process.exit(0), (e: Error) => { console.error(e); process.exit(1); });
