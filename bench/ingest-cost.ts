/**
 * The cost of ingest, in lines per second, for the kinds of batch replication depends on:
 * - **listings changed**: every seeded listing re-ingested with one field changed, in batches of 500 (each
 *   listing's related records move with it: src/ingest/followers.ts);
 * - **listings created after their photos**: new listings whose photos were ingested first;
 * - **photos added**: new photos of existing listings (each moves its listing's timestamps).
 * Run on a fresh database seeded with `--listings` demo listings (with their media, open houses and history):
 *
 *   node dist/bench/ingest-cost.js [--database sqlite:/tmp/x.sqlite | mysql://root@127.0.0.1:3306/bench_ingest] [--listings 2000]
 *
 * Uses only the service's public parts (seeding, ingestBatch), so the same script measures any revision.
 */
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch, IngestItem } from '../src/ingest/ingest';
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

/** Lines per second of wall time, and per second of this process's CPU (steadier on a shared machine; SQLite runs in it). */
async function timed(service: ListingService, set: string, inputs: readonly Rec[]): Promise<{ wall: number; cpu: number }> {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < inputs.length; i += BATCH) {
    const items: IngestItem[] = inputs.slice(i, i + BATCH).map((input, j) => ({ line: i + j + 1, input }));
    const report = emptyReport();
    await ingestBatch(service, set, items, report);
    if (report.errors.length) throw new Error(`${set}: ${JSON.stringify(report.errors.slice(0, 2))}`);
  }
  const used = process.cpuUsage(cpu);
  return {
    wall: Math.round(inputs.length / (Number(process.hrtime.bigint() - started) / 1e9)),
    cpu: Math.round(inputs.length / ((used.user + used.system) / 1e6)),
  };
}

async function main(): Promise<void> {
  const url = option('--database', 'sqlite:/tmp/reso-bench-ingest.sqlite');
  const listings = Number(option('--listings', '2000'));
  await freshDatabase(url);
  const service = new ListingService(serviceModel, openDatabase(url));
  try {
    await service.prepare();
    await seedDemoData(service, { listings });
    // The whole sets, read once (a bench's data, small enough to hold).
    const all = await service.store('Property').all();
    const photo = (await service.store('Media').all()).find((m) => m.MediaCategory === 'Photo')!;
    const counts = await Promise.all(['Media', 'OpenHouse', 'HistoryTransactional'].map((s) => service.store(s).count()));
    const changed = await timed(service, 'Property', all.map((r) => ({ ...r, PublicRemarks: `${String(r.PublicRemarks ?? '')} (changed)` })));
    const newKeys = all.map((_, i) => `BENCH${i}`);
    const photos = (keys: readonly string[], tag: string) => keys.map((k) => ({
      ...photo, MediaKey: `${k}-${tag}`, ResourceRecordKey: k, MediaObjectID: `${k}-${tag}`, OriginatingSystemMediaKey: `${k}-${tag}`, SourceSystemMediaKey: `${k}-${tag}`,
    }));
    await timed(service, 'Media', photos(newKeys, 'P1'));
    const created = await timed(service, 'Property', all.map((r, i) => ({ ...r, ListingKey: newKeys[i], ListingId: `B${i}` })));
    const added = await timed(service, 'Media', photos(all.map((r) => r.ListingKey as string), 'P2'));
    console.log(JSON.stringify({
      database: url.split(':')[0], listings, related: { media: counts[0], openHouses: counts[1], history: counts[2] },
      linesPerSecond: { listingsChanged: changed, listingsCreatedAfterPhotos: created, photosAdded: added },
    }));
  } finally {
    await service.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
