/**
 * What the database holds about a record a replica lacks, for a failing replication comparison to explain itself:
 * its change-log events and its listing's, and, on MariaDB, the listing's and the record's rows on each node the
 * suite's instances use (column and stored text), with the events of the transaction that last wrote the listing.
 * Read with plain statements, apart from the service, so that what is printed is what the tables hold.
 */
import * as mysql from 'mysql2/promise';
import type { ListingService } from '../../src/process/service';
import type { TestDatabase } from './databases';

/** The change-log events of a listing and one of its records, in order. */
export async function changeLogOf(service: ListingService, listing: string, key: string): Promise<string> {
  const events = await service.db.all(
    'SELECT EntityEventSequence AS n, ResourceName AS s, ResourceRecordKey AS k FROM EntityEvent WHERE ResourceRecordKey IN (?, ?) ORDER BY EntityEventSequence', [listing, key]);
  return events.map((e) => `${e.n} ${e.s} ${e.k}`).join('; ');
}

/** On MariaDB (one server or each node of a cluster): the rows of `listing` and of a `Media` or other record. */
export async function rowsOnEachNode(db: TestDatabase, nodes: number, listing: string, set: string, keyField: string, key: string): Promise<string[]> {
  if (!db.url.startsWith('mysql:') && !db.url.startsWith('mariadb:')) return [];
  const out: string[] = [];
  for (let i = 0; i < nodes; i++) {
    const c = await mysql.createConnection({ uri: db.instanceUrl(i).replace(/^mariadb:/, 'mysql:'), dateStrings: true });
    try {
      const [p] = await c.query("SELECT ModificationTimestamp AS t, MlsStatus AS s, JSON_VALUE(_record, '$.ModificationTimestamp') AS text_t, JSON_VALUE(_record, '$.MlsStatus') AS text_s FROM Property WHERE ListingKey = ?", [listing]);
      const [r] = await c.query(`SELECT ModificationTimestamp AS t, JSON_VALUE(_record, '$.ModificationTimestamp') AS text_t FROM \`${set}\` WHERE \`${keyField}\` = ?`, [key]);
      out.push(`node ${i + 1}: listing ${JSON.stringify(p)}; record ${JSON.stringify(r)}`);
      if (i > 0) continue;
      // The transaction that last wrote the listing, by its commit time: which events it logged.
      const t = (p as { t?: string }[])[0]?.t;
      const [events] = await c.query(
        'SELECT e.EntityEventSequence AS n, e.ResourceName AS s, e.ResourceRecordKey AS k FROM EntityEvent e JOIN EntityEventPrior p USING (EntityEventSequence) WHERE p._committed = ? ORDER BY 1 LIMIT 40', [t]);
      const [[moved]] = await c.query(`SELECT COUNT(*) AS n FROM \`${set}\` WHERE ModificationTimestamp = ?`, [t]) as unknown as [{ n: number }[]];
      out.push(`events committed at ${t}: ${(events as { n: number; s: string; k: string }[]).map((e) => `${e.n} ${e.s} ${e.k}`).join(', ') || 'none'}; ${set} rows stamped then: ${moved.n}`);
    } catch (e) {
      out.push(`node ${i + 1}: ${(e as Error).message}`);
    } finally {
      await c.end();
    }
  }
  return out;
}
