/**
 * docs/scaling-out.md "Scaling out": a write transaction (an ingest batch, a client change, a usage flush) is kept whole or not
 * at all, and one that loses a conflict runs again from its start. On a Galera node a transaction can lose its rows
 * to another node's commit between two of its statements, told by a deadlock error or (measured, rarely) not told
 * at all: either way nothing of the lost attempt may stay.
 */
import { expect } from 'chai';
import type { Database, Executor } from '../src/storage/db/database';
import { openDatabase } from '../src/storage/db/open-database';
import { describeEachDatabase, type TestDatabase } from './support/databases';
import * as mysql from 'mysql2/promise';

describeEachDatabase('Write transactions: whole or not at all', (target) => {
  let db: TestDatabase;
  let store: Database;

  before(async function () {
    // SQLite has one writer at a time and no other node: nothing can take its transaction away.
    if (target.label === 'SQLite') this.skip();
    this.timeout(60_000);
    db = await target.create();
    store = openDatabase(db.url);
    await store.run('CREATE TABLE listing_marks (ListingKey VARCHAR(40) PRIMARY KEY, Attempt INT NOT NULL)');
  });
  after(async () => {
    await store?.close();
    await db?.drop();
  });

  const marks = async () => (await store.all('SELECT ListingKey, Attempt FROM listing_marks ORDER BY ListingKey'))
    .map((r) => `${r.ListingKey as string}@${Number(r.Attempt)}`);

  it('a transaction rolled back between two of its statements without an error keeps nothing of that attempt and commits whole on the next', async () => {
    await store.run('DELETE FROM listing_marks');
    const before = store.conflicts!();
    let attempts = 0;
    await store.transaction(async (tx) => {
      attempts++;
      await tx.run('INSERT INTO listing_marks (ListingKey, Attempt) VALUES (?, ?)', ['L1', attempts]);
      // What a Galera node's unannounced rollback leaves: the transaction gone, the session not told.
      if (attempts === 1) await tx.run('ROLLBACK');
      await tx.run('INSERT INTO listing_marks (ListingKey, Attempt) VALUES (?, ?)', ['L2', attempts]);
    });
    const after = store.conflicts!();
    expect({ attempts, rows: await marks(), unannounced: after.unannounced - before.unannounced, recovered: after.recovered - before.recovered })
      .to.deep.equal({ attempts: 2, rows: ['L1@2', 'L2@2'], unannounced: 1, recovered: 1 });
  });

  it('the connection a lost attempt used serves the next transaction on its own (no statement of it left open)', async () => {
    await store.run('DELETE FROM listing_marks');
    let attempts = 0;
    await store.transaction(async (tx) => {
      attempts++;
      if (attempts === 1) await tx.run('ROLLBACK');
      await tx.run('INSERT INTO listing_marks (ListingKey, Attempt) VALUES (?, ?)', ['L3', attempts]);
    });
    // A transaction that fails keeps nothing, although its statement ran on the same connection.
    const failed = await store.transaction(async (tx) => {
      await tx.run('INSERT INTO listing_marks (ListingKey, Attempt) VALUES (?, ?)', ['L4', 1]);
      await tx.run('INSERT INTO listing_marks (ListingKey, Attempt) VALUES (?, ?)', ['L3', 9]);
    }).then(() => 'committed', (e: Error) => e.message);
    expect({ failed: /Duplicate|duplicate/.test(failed), rows: await marks() }).to.deep.equal({ failed: true, rows: ['L3@2'] });
  });

  it('another node commits a row the transaction holds, mid-transaction: the attempt keeps nothing, the next commits whole (Galera)', async function () {
    if (target.label !== 'Galera') this.skip();
    this.timeout(60_000);
    await store.run('DELETE FROM listing_marks');
    await store.run('INSERT INTO listing_marks (ListingKey, Attempt) VALUES (?, ?)', ['L5', 0]);
    const other = await mysql.createConnection(db.instanceUrl(1));
    const observer = await mysql.createConnection(db.url);
    try {
      let attempts = 0;
      await store.transaction(async (tx: Executor) => {
        attempts++;
        await tx.run('UPDATE listing_marks SET Attempt = ? WHERE ListingKey = ?', [attempts, 'L5']);
        if (attempts === 1) {
          // Node 2 commits first (this transaction is not certified yet); applying it on node 1 must take this
          // transaction's row away. The observer's causal read returns only once node 1 has applied it.
          await other.query("UPDATE listing_marks SET Attempt = 100 WHERE ListingKey = 'L5'");
          const [seen] = await observer.query("SET STATEMENT wsrep_sync_wait = 1 FOR SELECT Attempt FROM listing_marks WHERE ListingKey = 'L5'");
          expect((seen as { Attempt: number }[])[0].Attempt, 'node 1 applied node 2\'s commit').to.equal(100);
        }
        await tx.run('INSERT INTO listing_marks (ListingKey, Attempt) VALUES (?, ?)', [`L6-${attempts}`, attempts]);
      });
      expect({ attempts, rows: await marks() }).to.deep.equal({ attempts: 2, rows: ['L5@2', 'L6-2@2'] });
    } finally {
      await other.end();
      await observer.end();
    }
  });
}, { cluster: true });
