/**
 * What checking every ingest line against its set's record schema (Ajv, src/ingest/line-check.ts) costs, in
 * ingest lines per second, with the check against without it in the same run. "Without" is the same ingest
 * with schemas that accept any object (the model's record schemas swapped for `{ "type": "object" }`), so
 * everything else (codec, reads, writes, timestamps, change log) is the same. Each round re-ingests every seeded
 * listing with one field changed (its related records move with it), or adds a photo to every listing, in
 * batches of 500; rounds alternate (with, without, without, with, …) on
 * one database so drift on a shared machine hits both; the best round of each counts. The check alone is timed
 * too, over the same lines, in microseconds a line.
 *
 *   npm run build && node dist/bench/ingest-validation.js [--database sqlite:/tmp/x.sqlite | mysql://root@127.0.0.1:3306/bench_check]
 *     [--listings 1000] [--rounds 3]
 */
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch, IngestItem, IngestTarget } from '../src/ingest/ingest';
import { lineCheck } from '../src/ingest/line-check';
import type { RecordSchema, ServiceModel } from '../src/model/service-model';
import { seedDemoData } from '../src/demo/demo-data';
import { ListingService } from '../src/process/service';
import { openDatabase } from '../src/storage/db/open-database';
import { freshDatabase } from './fresh-database';

const BATCH = 500;
type Rec = Record<string, unknown>;

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

/** The model with every record schema accepting any object with a key: ingest as it was before the check. */
function unchecked(model: ServiceModel): ServiceModel {
  // Not a schema the generator would write (it closes every record), hence the cast.
  const anything = (schema: RecordSchema, key: string) => ({
    ...schema, properties: { [key]: schema.properties[key] }, required: [], additionalProperties: true,
  }) as unknown as RecordSchema;
  return { ...model, recordSchemas: Object.fromEntries(model.entitySets.map((s) => [s.name, anything(model.recordSchemas[s.name], s.key)])) };
}

/** Lines per second of wall time and of this process's CPU (SQLite runs in it; MariaDB's own work is not counted). */
async function timed(target: IngestTarget, set: string, inputs: readonly Rec[]): Promise<{ wall: number; cpu: number }> {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < inputs.length; i += BATCH) {
    const items: IngestItem[] = inputs.slice(i, i + BATCH).map((input, j) => ({ line: i + j + 1, input }));
    const report = emptyReport();
    await ingestBatch(target, set, items, report);
    if (report.errors.length || report.updated + report.created !== items.length) throw new Error(`not every line written: ${JSON.stringify(report).slice(0, 300)}`);
  }
  const used = process.cpuUsage(cpu);
  return {
    wall: Math.round(inputs.length / (Number(process.hrtime.bigint() - started) / 1e9)),
    cpu: Math.round(inputs.length / ((used.user + used.system) / 1e6)),
  };
}

async function main(): Promise<void> {
  const url = option('--database', 'sqlite:/tmp/reso-bench-validation.sqlite');
  const listings = Number(option('--listings', '1000'));
  const rounds = Number(option('--rounds', '3'));
  await freshDatabase(url);
  const service = new ListingService(serviceModel, openDatabase(url));
  try {
    await service.prepare();
    await seedDemoData(service, { listings });
    const all = await service.store('Property').all();
    const photo = (await service.store('Media').all()).find((m) => m.MediaCategory === 'Photo')!;
    const checked: IngestTarget = service;
    const plain: IngestTarget = { model: unchecked(serviceModel), stores: service.stores, writer: service.writer };
    const compileStarted = performance.now();
    const checks = ['Property', 'Media'].map((name) => lineCheck(serviceModel, serviceModel.entitySets.find((s) => s.name === name)!));
    const compileMs = performance.now() - compileStarted;

    // Each round's lines: every listing changed (its related records move with it), or a new photo of every listing.
    let round = 0;
    const scenarios = {
      listingsChanged: { set: 'Property', lines: (tag: string) => all.map((r) => ({ ...r, PublicRemarks: `${String(r.PublicRemarks ?? '')} (${tag})` })) },
      photosAdded: {
        set: 'Media',
        lines: (tag: string) => all.map((r) => {
          const key = `${String(r.ListingKey)}-${tag}`;
          return { ...photo, MediaKey: key, ResourceRecordKey: r.ListingKey, MediaObjectID: key, OriginatingSystemMediaKey: key, SourceSystemMediaKey: key };
        }),
      },
    };
    const results: Record<string, { checked: { wall: number; cpu: number }; unchecked: { wall: number; cpu: number }; ratio: { wall: number; cpu: number } }> = {};
    for (const [name, scenario] of Object.entries(scenarios)) {
      const best = { checked: { wall: 0, cpu: 0 }, unchecked: { wall: 0, cpu: 0 } };
      const run = async (which: 'checked' | 'unchecked') => {
        const t = await timed(which === 'checked' ? checked : plain, scenario.set, scenario.lines(`R${round++}`));
        best[which] = { wall: Math.max(best[which].wall, t.wall), cpu: Math.max(best[which].cpu, t.cpu) };
      };
      for (let r = 0; r < rounds; r++) {
        for (const which of r % 2 === 0 ? ['checked', 'unchecked'] as const : ['unchecked', 'checked'] as const) await run(which);
      }
      const ratio = (k: 'wall' | 'cpu') => Number((best.checked[k] / best.unchecked[k]).toFixed(2));
      results[name] = { ...best, ratio: { wall: ratio('wall'), cpu: ratio('cpu') } };
    }

    // The check alone, over the same lines (the best of the rounds).
    const perLine = (check: (typeof checks)[number], lines: readonly Rec[]) => {
      let best = Infinity;
      for (let r = 0; r < rounds; r++) {
        const started = performance.now();
        for (const line of lines) if (check(line).problems.length) throw new Error(`a line fails its check: ${JSON.stringify(check(line).problems)}`);
        best = Math.min(best, ((performance.now() - started) * 1000) / lines.length);
      }
      return Number(best.toFixed(1));
    };
    const checkAlone = {
      listingMicroseconds: perLine(checks[0], scenarios.listingsChanged.lines('alone')),
      photoMicroseconds: perLine(checks[1], scenarios.photosAdded.lines('alone')),
      compileMs: Math.round(compileMs),
    };
    console.log(JSON.stringify({ database: url.split(':')[0], listings, rounds, linesPerSecond: results, checkAlone }));
  } finally {
    await service.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
