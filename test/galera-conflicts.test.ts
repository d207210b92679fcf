/**
 * Issue 41, "Writes never fail for a conflict that a retry would resolve", on a real 3-node Galera cluster
 * (support/galera.ts, GALERA=1): writers on all three nodes change the same listings for WRITING_MS while a CLI
 * ingest of a large file runs through node 1. Every write transaction ends committed, the ingest exits 0 with no
 * error, and the database holds the same final values on every node with one change-log event per change applied.
 */
import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceModel } from '../generated';
import { ListingService } from '../src/process/service';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import { openDatabase } from '../src/storage/db/open-database';
import type { ConflictCounts } from '../src/storage/db/conflicts';
import { GALERA, galeraCluster, galeraDatabase } from './support/galera';
import { runCli } from './support/licence-http';
import { Random, storedRecords } from './support/replication-writer';

/** How long the writers on the three nodes change the same listings (the issue measured 45 s). */
const WRITING_MS = 45_000;
/** The listings every writer and the ingest change; the ingest's batches (500 lines) each hold every one once. */
const LISTINGS = 500;
/** Listings per writer's transaction. */
const WRITER_BATCH = 20;
/** The ingest's file: 14 batches of 500 lines, as in the issue. */
const FILE_LINES = 7_000;

type Listing = Record<string, unknown>;

interface WriterOutcome {
  transactions: number;
  /** Transactions (or lines of them) that did not commit. */
  lost: string[];
  /** Changes applied, by listing key. */
  applied: Map<string, number>;
}

/** Changes WRITER_BATCH listings at a time, each to a price no other write uses, until `until`. */
async function writeUntil(service: ListingService, writer: number, keys: readonly string[], template: Listing, until: number): Promise<WriterOutcome> {
  const random = new Random(writer);
  const outcome: WriterOutcome = { transactions: 0, lost: [], applied: new Map() };
  for (let round = 1; Date.now() < until; round++) {
    const chosen = new Set<string>();
    while (chosen.size < WRITER_BATCH) chosen.add(random.pick(keys));
    const items = [...chosen].map((key, i) => ({ line: i + 1, input: { ...template, ListingKey: key, ListingId: key, ListPrice: writer * 10_000_000 + round * 100 + i } }));
    const report = emptyReport();
    outcome.transactions++;
    try {
      await ingestBatch(service, 'Property', items, report);
    } catch (e) {
      outcome.lost.push(`writer ${writer}, round ${round}: ${(e as Error).message}`);
      continue;
    }
    outcome.lost.push(...report.errors.map((r) => `writer ${writer}, round ${round}, line ${r.line}: ${r.message}`));
    const failed = new Set(report.errors.map((r) => r.line));
    for (const item of items) if (!failed.has(item.line)) { const key = item.input.ListingKey; outcome.applied.set(key, (outcome.applied.get(key) ?? 0) + 1); };
  }
  return outcome;
}

(GALERA ? describe : describe.skip)('Issue 41: writes never fail for a conflict that a retry would resolve (3-node Galera cluster)', function () {
  this.timeout(900_000);
  const services: ListingService[] = [];
  let drop: (() => Promise<void>) | undefined;
  after(async () => {
    for (const s of services) await s.close();
    await drop?.();
  });

  it(`writers on all three nodes change the same ${LISTINGS} listings for ${WRITING_MS / 1000} s while a CLI ingest of ${FILE_LINES.toLocaleString('en-US')} lines changes them through node 1: every transaction commits, the ingest exits 0 without an error, every node holds the same final values, one change-log event per change`, async () => {
    const cluster = await galeraCluster();
    const db = await galeraDatabase(cluster);
    drop = db.drop;
    const seeded = await runCli(db.urls[0], ['seed', '--listings', '5', '--json'], 120_000);
    expect(seeded.code, seeded.stderr).to.equal(0);
    for (const url of db.urls) services.push(new ListingService(serviceModel, openDatabase(url)));
    const template = (await storedRecords(services[0], 'Property')).find((r) => r.MlsStatus === 'Active')!;
    const keys = Array.from({ length: LISTINGS }, (_, i) => `CONFLICT-${String(i + 1).padStart(4, '0')}`);
    const created = emptyReport();
    await ingestBatch(services[0], 'Property', keys.map((key, i) => ({ line: i + 1, input: { ...template, ListingKey: key, ListingId: key, ListPrice: 1 } })), created);
    expect(created.created).to.equal(LISTINGS);
    const dir = mkdtempSync(join(tmpdir(), 'reso-conflicts-'));
    const fileOf = (name: string, firstPrice: number) => {
      const file = join(dir, name);
      writeFileSync(file, Array.from({ length: FILE_LINES }, (_, i) => {
        const key = keys[i % LISTINGS];
        return JSON.stringify({ ...template, ListingKey: key, ListingId: key, ListPrice: firstPrice + i });
      }).join('\n'));
      return file;
    };
    // The same ingest with no other writer: what the conflicts add to its time.
    const alone = await runCli(db.urls[0], ['ingest', 'Property', fileOf('alone.ndjson', 800_000_000), '--json'], 600_000);
    expect(alone.code, alone.stderr).to.equal(0);
    const eventsBefore = await eventsByKey(services[2], keys);
    const file = fileOf('listings.ndjson', 900_000_000);

    const started = Date.now();
    const until = started + WRITING_MS;
    const ingest = runCli(db.urls[0], ['ingest', 'Property', file, '--json'], 600_000);
    const writers = await Promise.all(services.map((s, n) => writeUntil(s, n + 1, keys, template, until)));
    const run = await ingest;
    const seconds = (Date.now() - started) / 1000;

    const counts = services.map((s) => s.db.conflicts!());
    const last = run.stdout.trim().split('\n').pop() ?? '';
    const summary = (last.startsWith('{') ? JSON.parse(last) : { failed: run.stderr.trim().split('\n').pop() }) as Record<string, number>;
    const lost = writers.flatMap((w) => w.lost);
    console.log(`      ${writers.map((w) => w.transactions).join(' + ')} writer transactions in ${seconds.toFixed(1)} s, ${lost.length} lost; `
      + `${lost.slice(0, 3).map((l) => `${l}; `).join('')}writers' conflicts ${JSON.stringify(total(counts))}; ingest ${JSON.stringify(summary)} (exit ${run.code}); `
      + `the same ingest alone ${alone.stdout.trim().split('\n').pop()}`);

    expect(lost, 'writer transactions that did not commit').to.deep.equal([]);
    expect(total(counts).exhausted, 'transactions that exhausted their retries').to.equal(0);
    expect(run.code, `the ingest's exit code: ${run.stderr.slice(-2000)}`).to.equal(0);
    expect({ errors: summary.errors, exhausted: summary.exhausted, written: summary.updated + summary.created }).to.deep.equal({ errors: 0, exhausted: 0, written: FILE_LINES });

    // Every node holds the same final values.
    const finals = await Promise.all(services.map(async (s) => new Map((await storedRecords(s, 'Property')).filter((r) => keys.includes(r.ListingKey)).map((r) => [r.ListingKey, r.ListPrice]))));
    expect(finals[0].size).to.equal(LISTINGS);
    expect([...finals[1]], 'node 2 against node 1').to.deep.equal([...finals[0]]);
    expect([...finals[2]], 'node 3 against node 1').to.deep.equal([...finals[0]]);
    // One change-log event per change applied: the ingest changed each listing once per batch, the writers as counted.
    const eventsAfter = await eventsByKey(services[2], keys);
    const wrong = keys.filter((key) => {
      const expected = (eventsBefore.get(key) ?? 0) + FILE_LINES / LISTINGS + writers.reduce((n, w) => n + (w.applied.get(key) ?? 0), 0);
      return eventsAfter.get(key) !== expected;
    });
    expect(wrong, 'listings whose change-log events are not one per change applied').to.deep.equal([]);
  });
});

function total(counts: readonly ConflictCounts[]): ConflictCounts {
  const sum = (k: keyof ConflictCounts) => counts.reduce((n, c) => n + (c[k] as number), 0);
  return { conflicts: sum('conflicts'), unannounced: sum('unannounced'), recovered: sum('recovered'), exhausted: sum('exhausted') };
}

async function eventsByKey(service: ListingService, keys: readonly string[]): Promise<Map<string, number>> {
  const rows = await service.db.all(
    `SELECT ResourceRecordKey AS k, COUNT(*) AS n FROM EntityEvent WHERE ResourceName = 'Property' AND ResourceRecordKey IN (${keys.map(() => '?').join(', ')}) GROUP BY ResourceRecordKey`, keys);
  return new Map(rows.map((r) => [r.k as string, Number(r.n)]));
}
