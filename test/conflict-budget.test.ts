/**
 * Issue 41, "Writes never fail for a conflict that a retry would resolve": a request's write gives up on a conflict
 * after its short policy (a client must not wait a minute), a batch writer keeps trying for its time budget; a batch
 * that exhausts its budget is split in halves, each with a budget of its own, and only a line that exhausts its own
 * is reported, with the reason. (The cluster itself: galera-conflicts.test.ts.)
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch, IngestTarget } from '../src/ingest/ingest';
import type { RunningServer } from '../src/process/server';
import { batchConflictPolicy, ConflictCounts, REQUEST_CONFLICT_POLICY, retryingConflicts } from '../src/storage/db/conflicts';
import { DatabaseUnavailable } from '../src/storage/db/errors';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';

const noCounts = (): ConflictCounts => ({ conflicts: 0, unannounced: 0, recovered: 0, exhausted: 0 });
const lost = () => new DatabaseUnavailable('ER_LOCK_DEADLOCK');

describe('Issue 41: how long a write transaction keeps running again after conflicts', () => {
  /** A transaction that loses `losses` times, each attempt taking `attemptMs` on an injected clock. */
  function contested(losses: number, attemptMs: number) {
    const clock = { ms: 0 };
    let attempts = 0;
    const attempt = async () => {
      attempts++;
      clock.ms += attemptMs;
      if (attempts <= losses) throw lost();
      return 'committed';
    };
    return { attempt, now: () => clock.ms, attempts: () => attempts };
  }
  // Waits drawn at 0 (full jitter's least): the clock alone says how long the retries took.
  const noWait = () => 0;

  it('a request\'s write: 12 attempts, then the conflict is reported, however quick they were', async () => {
    const t = contested(Infinity, 1);
    const counts = noCounts();
    const failed = await retryingConflicts(t.attempt, counts, REQUEST_CONFLICT_POLICY, () => 0, t.now).catch((e: unknown) => e);
    expect(failed).to.be.instanceOf(DatabaseUnavailable);
    expect({ attempts: t.attempts(), ...counts }).to.deep.equal({ attempts: 12, conflicts: 12, unannounced: 0, recovered: 0, exhausted: 1 });
  });

  it('a batch: attempts for as long as its budget allows (60 s of 10 s attempts: 6), then the conflict is reported', async () => {
    const t = contested(Infinity, 10_000);
    const counts = noCounts();
    const failed = await retryingConflicts(t.attempt, counts, batchConflictPolicy(60_000), noWait, t.now).catch((e: unknown) => e);
    expect(failed).to.be.instanceOf(DatabaseUnavailable);
    expect({ attempts: t.attempts(), exhausted: counts.exhausted }).to.deep.equal({ attempts: 6, exhausted: 1 });
  });

  it('a batch that loses 40 times, more than a request may, commits within its budget', async () => {
    const t = contested(40, 100);
    const counts = noCounts();
    expect(await retryingConflicts(t.attempt, counts, batchConflictPolicy(60_000), noWait, t.now)).to.equal('committed');
    expect({ attempts: t.attempts(), ...counts }).to.deep.equal({ attempts: 41, conflicts: 40, unannounced: 0, recovered: 1, exhausted: 0 });
  });

  it('a batch whose budget would end within the next wait reports the conflict without waiting (a budget of 0: at the first loss)', async () => {
    const t = contested(Infinity, 0);
    const counts = noCounts();
    await retryingConflicts(t.attempt, counts, batchConflictPolicy(0), () => 1, t.now).catch(() => undefined);
    expect({ attempts: t.attempts(), exhausted: counts.exhausted }).to.deep.equal({ attempts: 1, exhausted: 1 });
  });
});

describeEachDatabase('Issue 41: an ingest batch that keeps losing conflicts is split, and only the line that loses its own budget fails', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  before(async function () {
    this.timeout(60_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  /** The service, with a writer on another node that wins every conflict over `contestedKey`: a transaction writing it is rolled back as lost. */
  function contestedOver(contestedKey: string): IngestTarget {
    const service = server.service;
    return {
      model: service.model,
      stores: service.stores,
      writer: {
        transaction: (fn, policy) => service.writer.transaction(async (tx) => {
          const result = await fn(tx);
          const written = (await tx.recordsByKeys('Property', [contestedKey])).get(contestedKey);
          if (written?.City === 'Contested') throw lost();
          return result;
        }, policy),
      },
    };
  }

  it('8 lines, line 5 always lost: 3 splits, the 7 others written, line 5 reported with the reason, nothing of it stored', async () => {
    const keys = Array.from({ length: 8 }, (_, i) => `SPLIT-${i + 1}`);
    const items = keys.map((key, i) => ({ line: i + 1, input: { ListingKey: key, MlsStatus: 'Active', City: 'Contested' } }));
    const report = emptyReport();
    // A budget of 0: each part gives up at its first loss (the retries within a budget: above).
    await ingestBatch(contestedOver('SPLIT-5'), 'Property', items, report, 'write', { conflictBudgetMs: 0 });
    expect({ created: report.created, splits: report.splits, lines: report.errors.map((e) => e.line) }).to.deep.equal({ created: 7, splits: 3, lines: [5] });
    expect(report.errors[0].message).to.match(/other writers' changes to the same records won every attempt for 0 s \(database unavailable \(ER_LOCK_DEADLOCK\)\)/);
    const statuses = await Promise.all(keys.map(async (key) => (await get(`${server.url}/Property('${key}')`)).status));
    expect(statuses).to.deep.equal([200, 200, 200, 200, 404, 200, 200, 200]);
  });
});
