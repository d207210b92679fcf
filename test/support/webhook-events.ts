/** Events for the webhook tests: listings written through ingest (each an event), and a client's own pull of its events. */
import { emptyReport, ingestBatch } from '../../src/ingest/ingest';
import type { RunningServer } from '../../src/process/server';
import { walkPages } from './replication-paging';

let listingCount = 0;

/** Writes `n` listings in one transaction (at least one event each); returns their keys. */
export async function writeListings(running: RunningServer, n: number, status = 'Active'): Promise<string[]> {
  const keys = Array.from({ length: n }, () => `WH${String(++listingCount).padStart(5, '0')}`);
  const report = emptyReport();
  await ingestBatch(running.service, 'Property', keys.map((k, i) => ({ line: i + 1, input: { ListingKey: k, MlsStatus: status, ListPrice: 100_000 + i } })), report);
  if (report.errors.length) throw new Error(JSON.stringify(report.errors));
  return keys;
}

/** The client's events as it pulls them itself (`EntityEvent?$filter=EntityEventSequence gt <after>`, every page). */
export async function pulled(running: RunningServer, token: string, after = 0): Promise<any[]> {
  const walk = await walkPages(`${running.url}/EntityEvent?$filter=EntityEventSequence gt ${after}`, { headers: { Authorization: `Bearer ${token}` } });
  return walk.records;
}
