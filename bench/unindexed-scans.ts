/**
 * Fields filterable without an index (Policy.UnindexedProperties), measured on the certification dictionary: how
 * long the worst queries on each such field take on a large database, against DB_STATEMENT_TIMEOUT_MS (the bound a
 * scan is stopped at, with 501 ScanLimitExceeded), and what they cost the requests beside them.
 *
 *   npm run build && node dist/bench/unindexed-scans.js [--listings N] [--database URL] [--write]
 *
 * Generates docs/certification/reso-dictionary.xml into .bench/, seeds N demo listings (20,000 by default) into
 * the database (a SQLite file in .bench/ by default, or DATABASE URL: mysql://…; reused while it holds N listings),
 * serves it (bench/dictionary-server.ts, one process, the default statement timeout) and times, one request at a
 * time, for every field of Property, Member, Office, Media and OpenHouse without an index:
 * - the first page of a filter no record meets (`<field> eq <absent value>`): the whole set scanned for one page;
 * - `/$count` of a filter every record with a value meets (`<field> ne <absent value>`): the whole set counted;
 * - the first page ordered by the field, descending: the whole set scanned and sorted;
 * and, for the multi-value lookups made filterable (value tables), `any` and `all` of an absent value. Then a simple
 * request (`Property?$top=1&$select=ListingKey`) back to back, idle and beside 4 connections running those scans.
 * `--write` puts the result in docs/benchmarks.md (its own section, per database).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generate } from '../codegen/generate';
import { loadGenerated } from '../codegen/load-generated';
import type { EntitySetSpec, FieldSpec, ServiceModel } from '../src/model/service-model';
import { seedDemoData } from '../src/demo/demo-data';
import { ListingService } from '../src/process/service';
import { openDatabase } from '../src/storage/db/open-database';
import { DEFAULT_TIMEOUTS } from '../src/storage/db/deadline';
import { writeBenchSection } from './doc-section';
import { freshDatabase } from './fresh-database';
import { latencyRow } from './latency-row';
import { servingAt } from './product-process';

const ROOT = resolve(__dirname, '../..');
const TOKEN = 'bench-unindexed-scans-token-7c1e4a9f2b6d0835';
const SETS = ['Property', 'Member', 'Office', 'Media', 'OpenHouse'];
const SIMPLE = '/Property?$top=1&$select=ListingKey';
const BESIDE = 4;
const SECONDS = 5;

interface Options { listings: number; database: string; write: boolean }

function parseArgs(argv: string[]): Options {
  const o: Options = { listings: 20_000, database: '', write: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--listings') o.listings = Number(argv[++i]);
    else if (argv[i] === '--database') o.database = argv[++i];
    else if (argv[i] === '--write') o.write = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!(o.listings > 0)) throw new Error('--listings takes a positive number');
  o.database ||= `sqlite:${join(ROOT, '.bench', `unindexed-${o.listings}.sqlite`)}`;
  return o;
}

/** The database holding `listings` demo listings under `model`: reused when it does, else made afresh and seeded. */
async function seeded(model: ServiceModel, url: string, listings: number): Promise<void> {
  const open = async () => {
    const service = new ListingService(model, openDatabase(url, DEFAULT_TIMEOUTS));
    try {
      await service.prepare();
      return service;
    } catch (e) {
      await service.close().catch(() => undefined);
      throw e;
    }
  };
  // A database that does not exist yet (or holds another schema) is made afresh below.
  let service = await open().catch(() => undefined);
  const have = service ? Number((await service.db.all('SELECT count(*) AS n FROM `Property`'))[0].n) : 0;
  if (service && have === listings) return service.close();
  await service?.close();
  await freshDatabase(url);
  service = await open();
  const started = performance.now();
  await seedDemoData(service, { listings }, undefined, (n) => process.stderr.write(`\rseeding: ${n} of ${listings} listings`));
  console.error(`\nseeded ${listings} listings in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  await service.close();
}

function serveIt(generated: string, url: string): Promise<{ base: string; child: ChildProcess }> {
  const env = { ...process.env, GENERATED: generated, DATABASE_URL: url, PORT: '0', DEMO_TOKEN: TOKEN, SEED_LISTINGS: '0', BENCH_PARENT_PID: String(process.pid), LOG_LEVEL: 'warn' };
  const child = spawn(process.execPath, [join(ROOT, 'dist/bench/dictionary-server.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return servingAt(child, 'the server').then((base) => ({ base, child }));
}

async function timed(base: string, path: string): Promise<{ ms: number; status: number; text: string }> {
  const t0 = performance.now();
  const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  const text = await res.text();
  return { ms: performance.now() - t0, status: res.status, text };
}

/** A literal of the field's type that no demo record holds. */
function absent(f: FieldSpec): string {
  switch (f.type) {
    case 'Edm.Date': return '1900-01-01';
    case 'Edm.DateTimeOffset': return '1900-01-01T00:00:00Z';
    case 'Edm.String': return "'(none)'";
    case 'Edm.Decimal': case 'Edm.Double': return '-987654.5';
    default: return '-987654';
  }
}

/** Each worst-case query on the set's fields without an index, and on its filterable collections. */
function queries(set: EntitySetSpec): { shape: string; path: string }[] {
  const q = (shape: string, path: string, filter?: string) => ({ shape, path: filter === undefined ? path : `${path}${path.includes('?') ? '&' : '?'}$filter=${encodeURIComponent(filter)}` });
  return set.fields.flatMap((f) => {
    if (f.unindexed) {
      return [
        q('page, no record matches', `/${set.name}?$select=${set.key}`, `${f.name} eq ${absent(f)}`),
        q('$count, every record with a value', `/${set.name}/$count`, `${f.name} ne ${absent(f)}`),
        q('page ordered by it, descending', `/${set.name}?$select=${set.key},${f.name}&$orderby=${encodeURIComponent(`${f.name} desc`)}`),
      ];
    }
    if (f.collection && f.valueTable) {
      return [q('collection: any(), no record matches', `/${set.name}?$select=${set.key}`, `${f.name}/any(x: x eq '(none)')`),
        q('collection: all(), page', `/${set.name}?$select=${set.key}`, `${f.name}/all(x: x eq '(none)')`)];
    }
    return [];
  });
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function measureSets(base: string, model: ServiceModel, timeoutMs: number): Promise<{ rows: string[]; scans: string[] }> {
  const rows: string[] = [];
  const scans: string[] = [];
  for (const name of SETS) {
    const set = model.entitySets.find((s) => s.name === name)!;
    const count = (await timed(base, `/${name}/$count`)).text;
    const byShape = new Map<string, number[]>();
    for (const { shape, path } of queries(set)) {
      const r = await timed(base, path);
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 300)}`);
      (byShape.get(shape) ?? byShape.set(shape, []).get(shape)!).push(r.ms);
      if (!shape.startsWith('collection: any')) scans.push(path);
    }
    for (const [shape, ms] of byShape) {
      const worst = Math.max(...ms);
      rows.push(`| ${name} | ${count} | ${shape} | ${ms.length} | ${quantile(ms, 0.5).toFixed(0)} | ${worst.toFixed(0)} | ${(worst / timeoutMs).toFixed(2)} |`);
    }
  }
  return { rows, scans };
}

/** Simple requests back to back for SECONDS, idle and beside BESIDE connections running `scans` in turn. */
async function beside(base: string, scans: readonly string[]): Promise<string[]> {
  const loop = async (stop: () => boolean) => {
    const out: number[] = [];
    while (!stop()) out.push((await timed(base, SIMPLE)).ms);
    return out;
  };
  const idleEnd = performance.now() + SECONDS * 1000;
  const idle = await loop(() => performance.now() > idleEnd);
  let done = false;
  let sent = 0;
  const answered = new Map<number, number>();
  const worker = async () => {
    while (!done) {
      const r = await timed(base, scans[(sent++) % scans.length]);
      answered.set(r.status, (answered.get(r.status) ?? 0) + 1);
    }
  };
  const busyEnd = performance.now() + SECONDS * 1000;
  const workers = Array.from({ length: BESIDE }, worker);
  const busy = await loop(() => performance.now() > busyEnd);
  done = true;
  await Promise.all(workers);
  const statuses = [...answered].map(([s, n]) => `${n} × ${s}`).join(', ');
  return [latencyRow('idle', idle), latencyRow(`beside ${BESIDE} connections of scans (${statuses})`, busy)];
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const dir = join(ROOT, '.bench', 'certification-generated');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  generate({ dictionary: join(ROOT, 'docs/certification/reso-dictionary.xml'), outDir: dir });
  const model = loadGenerated(dir);
  await seeded(model, o.database, o.listings);
  const timeoutMs = Number(process.env.DB_STATEMENT_TIMEOUT_MS ?? DEFAULT_TIMEOUTS.statementMs);
  const { base, child } = await serveIt(dir, o.database);
  try {
    const { rows, scans } = await measureSets(base, model, timeoutMs);
    const table = [
      `| set | records | query, on each field without an index | queries | p50 ms | max ms | max / ${timeoutMs} ms |`,
      '| --- | ---: | --- | ---: | ---: | ---: | ---: |',
      ...rows,
      '',
      '| simple request | requests | p50 ms | p99 ms | max ms |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...await beside(base, scans),
    ].join('\n');
    console.log(table);
    const database = o.database.startsWith('sqlite:') ? 'SQLite' : 'MariaDB';
    if (o.write) {
      const command = `node dist/bench/unindexed-scans.js --listings ${o.listings}${database === 'SQLite' ? '' : ` --database ${o.database.replace(/\/\/[^@/]*@/, '//…@')}`}`;
      const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}`;
      writeBenchSection(`unindexed-scans-${database.toLowerCase()}`, `${database}, ${o.listings} listings, ${machine}: {when}`, command, table);
    }
  } finally {
    child.kill('SIGTERM');
  }
}

main().catch((e: Error) => { console.error(`unindexed-scans: ${e.stack ?? e.message}`); process.exit(1); });
