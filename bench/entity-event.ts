/**
 * EntityEvent (the change log, RCP-027): what reading it and writing it cost.
 *
 * - walk: the whole log (`GET /odata/EntityEvent`, following nextLink at `Prefer: odata.maxpagesize=P`) as the
 *   admin `demo` client and as a client with a scope (whose events carry the visibility condition), against
 *   the baseline's raw keyset walk of the same table (`GET /events?limit=P[&after=S]`, bench/baseline-server.ts),
 *   in turns, in the same run; events per second, the best of the rounds. Both walks must return the same
 *   events in the same order (their ResourceRecordKeys are hashed).
 * - ingest: every seeded listing re-ingested with one field changed (batches of 500: each listing and its
 *   related records, about 20, are logged), on two fresh databases, one whose model logs changes and one whose
 *   model has the change log taken out, in turns; lines per second of wall time and of this process's CPU.
 *
 *   npm run build && node dist/bench/entity-event.js [--db sqlite|mysql] [--listings 4000] [--ingest-listings 500] [--rounds 3] [--page 1000]
 *
 * Not part of `npm run bench` (record the output in docs/benchmarks.md by hand).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch, IngestItem } from '../src/ingest/ingest';
import type { ServiceModel } from '../src/model/service-model';
import { seedDemoData } from '../src/demo/demo-data';
import { ListingService } from '../src/process/service';
import { openDatabase } from '../src/storage/db/open-database';
import { freshDatabase } from './fresh-database';
import { startProduct } from './product-process';
import { walk, WalkResult } from './walk';

const ROOT = resolve(__dirname, '../..');
const TOKEN = 'bench-entity-event-token-4c8e1a7f9b3d5062';
const SCOPED_TOKEN = 'bench-entity-event-scoped-9d2b6f0a4e8c1735';
const BATCH = 500;

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

function databaseUrl(db: string, name: string): string {
  return db === 'mysql' ? `mysql://root@127.0.0.1:3306/${name}` : `sqlite:/tmp/${name}.sqlite`;
}

/** The same model with its change log taken out: writes log nothing. */
function withoutChangeLog(model: ServiceModel): ServiceModel {
  return { ...model, entitySets: model.entitySets.map((s) => (s.changeLog ? { ...s, changeLog: undefined } : s)) };
}

function startBaseline(url: string): Promise<{ base: string; child: ChildProcess }> {
  const env = { ...process.env, DATABASE_URL: url, PORT: '0', BENCH_PARENT_PID: String(process.pid) };
  const child = spawn(process.execPath, [join(ROOT, 'dist/bench/baseline-server.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolveStart, reject) => {
    child.once('exit', (code) => reject(new Error(`the baseline exited (${code}):\n${out}`)));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolveStart({ base: m[1], child });
    });
  });
}

async function walkPhase(db: string, listings: number, rounds: number, page: number): Promise<void> {
  const url = databaseUrl(db, `bench_events_${listings}`);
  await freshDatabase(url);
  const service = new ListingService(serviceModel, openDatabase(url));
  await service.prepare();
  await seedDemoData(service, { listings });
  const { client } = await service.clients.add({ id: 'bench-scoped', name: 'Scoped', scope: "MlsStatus ne 'Withdrawn'" });
  await service.clients.issueToken(client.id, undefined, SCOPED_TOKEN);
  const events = await service.changeLog!.newest();
  await service.close();
  process.env.MAX_PAGE_SIZE = String(page);
  const product = await startProduct(url, 0, TOKEN);
  const baseline = await startBaseline(url);
  const prefer = { Prefer: `odata.maxpagesize=${page}` };
  const sides: [string, () => Promise<WalkResult>][] = [
    ['baseline', () => walk(`${baseline.base}/events?limit=${page}`, { keyField: 'ResourceRecordKey' })],
    ['product (admin)', () => walk(`${product.base}/EntityEvent`, { keyField: 'ResourceRecordKey', headers: { ...prefer, Authorization: `Bearer ${TOKEN}` } })],
    ['product (scoped)', () => walk(`${product.base}/EntityEvent`, { keyField: 'ResourceRecordKey', headers: { ...prefer, Authorization: `Bearer ${SCOPED_TOKEN}` } })],
  ];
  const best = new Map<string, WalkResult>();
  try {
    for (let round = 0; round <= rounds; round++) {
      for (const [name, run] of round % 2 ? [...sides].reverse() : sides) {
        const w = await run();
        if (round === 0) continue; // warm-up
        console.log(`round ${round} ${name}: ${w.records} events in ${w.seconds.toFixed(2)} s, ${Math.round(w.records / w.seconds)} events/s`);
        const b = best.get(name);
        if (!b || w.records / w.seconds > b.records / b.seconds) best.set(name, w);
      }
    }
  } finally {
    product.child.kill();
    baseline.child.kill();
  }
  const base = best.get('baseline')!;
  if (best.get('product (admin)')!.keysHash !== base.keysHash) throw new Error('the product and the baseline walked different events');
  const rate = (w: WalkResult) => Math.round(w.records / w.seconds);
  console.log(`\nwalk, ${db}, ${listings} listings, ${events} events, page ${page}:`);
  for (const [name, w] of best) console.log(`  ${name}: ${w.records} events, ${rate(w)} events/s, ratio ${(rate(w) / rate(base)).toFixed(2)}`);
}

async function timedIngest(service: ListingService, inputs: readonly Record<string, unknown>[]): Promise<{ wall: number; cpu: number }> {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < inputs.length; i += BATCH) {
    const items: IngestItem[] = inputs.slice(i, i + BATCH).map((input, j) => ({ line: i + j + 1, input }));
    const report = emptyReport();
    await ingestBatch(service, 'Property', items, report);
    if (report.errors.length) throw new Error(JSON.stringify(report.errors.slice(0, 2)));
  }
  const used = process.cpuUsage(cpu);
  return { wall: Math.round(inputs.length / (Number(process.hrtime.bigint() - started) / 1e9)), cpu: Math.round(inputs.length / ((used.user + used.system) / 1e6)) };
}

async function ingestPhase(db: string, listings: number, rounds: number): Promise<void> {
  const services: [string, ListingService][] = [];
  for (const [name, model] of [['without logging', withoutChangeLog(serviceModel)], ['with logging', serviceModel]] as const) {
    const url = databaseUrl(db, `bench_events_ingest_${name.startsWith('with ') ? 'on' : 'off'}`);
    await freshDatabase(url);
    const service = new ListingService(model, openDatabase(url));
    await service.prepare();
    await seedDemoData(service, { listings });
    services.push([name, service]);
  }
  const results = new Map<string, { wall: number; cpu: number }[]>();
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const [name, service] of round % 2 ? services : [...services].reverse()) {
        const all = await service.store('Property').all();
        const r = await timedIngest(service, all.map((l) => ({ ...l, PublicRemarks: `${String(l.PublicRemarks ?? '')} (round ${round})` })));
        console.log(`round ${round} ${name}: ${r.wall} lines/s wall, ${r.cpu} lines/s CPU`);
        (results.get(name) ?? results.set(name, []).get(name)!).push(r);
      }
    }
  } finally {
    for (const [, s] of services) await s.close();
  }
  const best = (name: string, k: 'wall' | 'cpu') => Math.max(...results.get(name)!.map((r) => r[k]));
  console.log(`\ningest (listings changed), ${db}, ${listings} listings:`);
  for (const name of results.keys()) console.log(`  ${name}: best ${best(name, 'wall')} lines/s wall, ${best(name, 'cpu')} lines/s CPU`);
  console.log(`  with/without: wall ${(best('with logging', 'wall') / best('without logging', 'wall')).toFixed(2)}, CPU ${(best('with logging', 'cpu') / best('without logging', 'cpu')).toFixed(2)}`);
}

async function main(): Promise<void> {
  const db = option('--db', 'sqlite');
  const rounds = Number(option('--rounds', '3'));
  if (!process.argv.includes('--skip-walk')) await walkPhase(db, Number(option('--listings', '4000')), rounds, Number(option('--page', '1000')));
  if (!process.argv.includes('--skip-ingest')) await ingestPhase(db, Number(option('--ingest-listings', '500')), rounds);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
