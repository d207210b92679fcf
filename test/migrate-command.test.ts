/**
 * docs/dictionary.md "Changing the dictionary" and "Command line": `reso-server migrate` brings a database to the dictionary
 * without serving, `--dry-run` says what it would do and changes nothing, and a database migrated past this build
 * is refused with one line and exit code 6 (real processes of `dist/src/cli/main.js`, on both databases).
 */
import { expect } from 'chai';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { runCli } from './support/licence-http';
import { ListingService } from '../src/process/service';
import { serviceModel } from '../generated';
import { PREPARED_FOR } from '../src/process/startup';
import { openDatabase } from '../src/storage/db/open-database';

describeEachDatabase('Command line: migrate', (target) => {
  let db: TestDatabase;
  before(async () => {
    db = await target.create();
  });
  after(() => db.drop());

  async function tables(): Promise<string[]> {
    const service = new ListingService(serviceModel, openDatabase(db.url));
    try {
      const rows = service.db.dialect.name === 'sqlite'
        ? await service.db.all("SELECT name FROM sqlite_master WHERE type = 'table'")
        : await service.db.all('SELECT TABLE_NAME AS name FROM information_schema.tables WHERE table_schema = DATABASE()');
      return rows.map((r) => String(r.name));
    } finally {
      await service.close();
    }
  }

  it('--dry-run on an empty database lists every migration with its statements, and creates nothing', async () => {
    const r = await runCli(db.url, ['migrate', '--dry-run']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/4 schema migration\(s\) pending:\n {2}service\/0001-own-tables\n/);
    expect(r.stdout).to.match(/^ {2}service\/0002-pull-tables$/m);
    expect(r.stdout).to.match(/^ {2}dictionary\/0001-initial$/m);
    expect(r.stdout).to.match(/^ {2}dictionary\/0002-storage-column-revision-added$/m);
    expect(r.stdout).to.match(/create table `Property` \(`ListingKey` varchar\(255\) not null/);
    expect(r.stdout.trim().split('\n').pop()).to.equal('a start (or `reso-server migrate`) would do this');
    expect(await tables()).to.deep.equal([]);
  });

  it('migrate applies them, one line each, without serving; then there is nothing to do', async () => {
    const r = await runCli(db.url, ['migrate']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^migration service\/0001-own-tables applied: /m);
    expect(r.stdout).to.match(/^migration dictionary\/0001-initial applied: /m);
    expect(await tables()).to.include.members(['Property', 'Media', 'reso_clients', 'reso_migrations']);
    const again = await runCli(db.url, ['migrate', '--dry-run', '--json']);
    expect(again.code, again.stderr).to.equal(0);
    const plan = JSON.parse(again.stdout) as { pending: unknown[]; records: { rewritten: number }[]; clients: unknown[] };
    expect(plan.pending).to.deep.equal([]);
    expect(plan.records.every((s) => s.rewritten === 0)).to.equal(true);
    expect((await runCli(db.url, ['migrate'])).stdout).to.match(/already at the dictionary; nothing to do/);
  });

  it('a database migrated past this build is refused with one line and exit code 6, and left as it is', async () => {
    const service = new ListingService(serviceModel, openDatabase(db.url));
    try {
      await service.db.run('INSERT INTO reso_migrations (name, batch, migration_time) VALUES (?, ?, ?)', ['dictionary/0099-from-a-newer-dictionary', 9, '2026-01-01 00:00:00']);
      // What the newer build's start left: its own fingerprint of the prepared database.
      await service.db.run('UPDATE reso_server_settings SET value = ? WHERE name = ?', ['prepared by a newer build', PREPARED_FOR]);
    } finally {
      await service.close();
    }
    for (const args of [['migrate'], ['clients', 'list']]) {
      const r = await runCli(db.url, args);
      expect(r.code, r.stderr).to.equal(6);
      expect(r.stderr.trim()).to.match(/^reso-server: the database has been migrated past this build \(it records dictionary\/0099-from-a-newer-dictionary/);
      expect(r.stderr).not.to.match(/\n\s+at /);
    }
  });
});

describeEachDatabase('Command line: migrate, on a database whose index was dropped by hand', (target) => {
  let db: TestDatabase;
  before(async () => {
    db = await target.create();
  });
  after(() => db.drop());

  it('the next migration refuses (exit code 6), naming the index and the statement that makes it again; made again, it goes on', async () => {
    expect((await runCli(db.url, ['migrate'])).code).to.equal(0);
    const index = serviceModel.tables.find((t) => t.name === 'Property')!.indexes[0];
    const service = new ListingService(serviceModel, openDatabase(db.url));
    try {
      await service.db.run(service.db.dialect.name === 'sqlite' ? `DROP INDEX \`${index.name}\`` : `DROP INDEX \`${index.name}\` ON Property`);
      // What a dictionary change leaves: the start-up work is due again.
      await service.db.run('UPDATE reso_server_settings SET value = ? WHERE name = ?', ['prepared for another dictionary', PREPARED_FOR]);
    } finally {
      await service.close();
    }
    const refused = await runCli(db.url, ['migrate']);
    expect(refused.code, refused.stderr).to.equal(6);
    expect(refused.stderr).to.include(`missing: index ${index.name} of Property`);
    const statement = /make it again with (.+)$/m.exec(refused.stderr)?.[1];
    expect(statement, refused.stderr).to.match(new RegExp(`${index.name}.*${index.columns.map((c) => `\`${c}\``).join(', ')}`));
    const repair = new ListingService(serviceModel, openDatabase(db.url));
    try {
      await repair.db.run(statement!);
    } finally {
      await repair.close();
    }
    const again = await runCli(db.url, ['migrate']);
    expect(again.code, again.stderr).to.equal(0);
  });
});
