/**
 * A database in use: demo data and ingested records, a server on it, and two consumers replicating it as the
 * spec's practice says (one by ModificationTimestamp with key-only walks, one by EntityEvent), in step with it.
 * A dictionary change is then applied as an operator does it: stop the server, start it on the new model
 * (same port, so the consumers go on), and the consumers go on replicating.
 */
import type { ServiceModel } from '../../src/model/service-model';
import { emptyReport, ingestBatch, IngestReport } from '../../src/ingest/ingest';
import { RunningServer, startServer } from '../../src/process/server';
import { seedDemoData } from '../../src/demo/demo-data';
import type { DatabaseTarget, TestDatabase } from './databases';
import { startTestServer, TEST_TOKEN, testConfig } from './http';
import { allDifferences, nullsAsAbsent, servedOverHttp, withoutDeleted } from './replication-compare';
import { ReplicationConsumer } from './replication-consumer';
import { EventConsumer } from './replication-events';
import { Rec, walkPages } from './replication-paging';

export const HEADERS = { Authorization: `Bearer ${TEST_TOKEN}` };

export class LiveDatabase {
  private constructor(
    readonly db: TestDatabase, public server: RunningServer, readonly port: number,
    readonly byTimestamp: ReplicationConsumer, readonly byEvents: EventConsumer,
  ) {}

  /** A new database served on `model`, with `listings` demo listings, and both consumers' first pulls done. */
  static async open(target: DatabaseTarget, model: ServiceModel, listings: number): Promise<LiveDatabase> {
    const db = await target.create();
    const server = await startTestServer(model, db.url);
    await seedDemoData(server.service, { listings });
    const port = Number(new URL(server.url).port);
    const byTimestamp = new ReplicationConsumer(server.url, { headers: HEADERS });
    const byEvents = new EventConsumer(server.url, HEADERS, 0, Math.random);
    await byTimestamp.initialPull();
    await byEvents.initialWalk();
    return new LiveDatabase(db, server, port, byTimestamp, byEvents);
  }

  get url(): string {
    return this.server.url;
  }

  /** Upserts records of `set` as `reso-server ingest` does; throws if a line is refused. */
  async ingest(set: string, records: readonly Rec[]): Promise<IngestReport> {
    const report = emptyReport();
    await ingestBatch(this.server.service, set, records.map((input, i) => ({ line: i + 1, input })), report);
    if (report.errors.length) throw new Error(`ingest refused: ${JSON.stringify(report.errors)}`);
    return report;
  }

  /** The server stopped and started again on `model`, on the same port; throws what the start threw. */
  async restart(model: ServiceModel): Promise<void> {
    if (this.running) await this.server.close();
    this.running = false;
    this.said = [];
    this.server = await startServer(model, testConfig(this.db.url, { port: this.port }), (line) => this.said.push(line));
    this.running = true;
  }

  /** The server stopped (other servers may start on the database). */
  async stop(): Promise<void> {
    if (this.running) await this.server.close();
    this.running = false;
  }

  /** What the last restart's server said (its start-up lines). */
  said: string[] = [];

  /** Whether `server` is up (a start the test expected to fail leaves none). */
  private running = true;

  /** Every record of a set as served now, by key. */
  async records(set: string, key: string, query = ''): Promise<Map<string, Rec>> {
    const walk = await walkPages(`${this.url}/${set}${query}`, { headers: { ...HEADERS, Prefer: 'odata.maxpagesize=1000' } });
    return new Map(walk.records.map((r) => [String(r[key]), r]));
  }

  /**
   * Both consumers replicate once more (an increment with a key-only walk; the change log after their mark), and
   * the differences between each replica and what is served now (empty: exact). Null and absent are one (see
   * nullsAsAbsent).
   */
  async replicationDifferences(): Promise<string[]> {
    await this.byTimestamp.incrementalPull();
    await this.byTimestamp.removedRecordsCheck();
    await this.byEvents.increment();
    const expected = nullsAsAbsent(withoutDeleted(await servedOverHttp(this.url, HEADERS)));
    return [
      ...allDifferences(nullsAsAbsent(this.byTimestamp.replica()), expected).map((d) => `by ModificationTimestamp: ${d}`),
      ...allDifferences(nullsAsAbsent(this.byEvents.replica()), expected).map((d) => `by EntityEvent: ${d}`),
    ];
  }

  /** The plan of a statement (SQLite's EXPLAIN QUERY PLAN details, MariaDB's EXPLAIN possible and chosen keys), as text. */
  async plan(sql: string, params: readonly unknown[]): Promise<string> {
    const mysql = this.server.service.db.dialect.name === 'mysql';
    const rows = await this.server.service.db.all(`${mysql ? 'EXPLAIN' : 'EXPLAIN QUERY PLAN'} ${sql}`, params);
    return rows.map((r) => (mysql ? `${String(r.possible_keys)} ${String(r.key)}` : String(r.detail))).join('\n');
  }

  async close(): Promise<void> {
    if (this.running) await this.server.close().catch(() => undefined);
    await this.db.drop();
  }
}
