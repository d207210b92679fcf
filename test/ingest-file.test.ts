/**
 * `reso-server ingest <Resource> <file.ndjson>`: files as operators' tools write them. A byte-order mark
 * does not spoil the first line, and a deletion mark that is not a JSON boolean is refused instead of being
 * taken as a whole record (which would blank the stored listing). Every line is checked against the set's
 * generated schema and a bad line is reported with every problem at its JSON pointer; a deletion of a key not
 * stored is a notice; a value the database refuses costs only its own line, which is named.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { ingestFile } from '../src/ingest/ndjson';
import type { RunningServer } from '../src/process/server';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';
import { Ingested, ndjson } from './support/typed-records';

describeEachDatabase('Ingest of NDJSON files', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let dir: string;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text, 'utf8');
    return path;
  };
  const listing = async (key: string) => (await get(`${server.url}/Property('${key}')`)).json;

  before(async function () {
    this.timeout(60_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
    dir = mkdtempSync(join(tmpdir(), 'reso-ingest-'));
  });
  after(async () => {
    await server?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a UTF-8 byte-order mark before the first line is not part of the record', async () => {
    const path = file('bom.ndjson', '\uFEFF{"ListingKey":"BOM-1","MlsStatus":"Active","City":"Oslo"}\n{"ListingKey":"BOM-2","MlsStatus":"Active"}\n');
    const report = await ingestFile(server.service, 'Property', path, { onError: 'skip' });
    expect(report.errors).to.deep.equal([]);
    expect(report.created).to.equal(2);
    expect((await listing('BOM-1')).City).to.equal('Oslo');
  });

  for (const onError of ['skip', 'reject'] as const) {
    it(`"@delete" that is not a JSON boolean is refused with its line (${onError}), and the stored listing keeps its fields`, async () => {
      const key = `MARK-${onError}`;
      await ingestFile(server.service, 'Property', file(`${key}.ndjson`, `{"ListingKey":"${key}","MlsStatus":"Active","City":"Bergen"}\n`), { onError });
      const before = await listing(key);
      const path = file(`${key}-mark.ndjson`, `{"ListingKey":"${key}","@delete":"true"}\n{"ListingKey":"${key}","@delete":1}\n`);
      const report = await ingestFile(server.service, 'Property', path, { onError });
      expect(report.errors.map((e) => e.line)).to.deep.equal([1, 2]);
      for (const e of report.errors) expect(e.message).to.match(/@delete.*must be true or false/);
      expect(report.updated + report.created + report.deleted).to.equal(0);
      const after = await listing(key);
      expect(after).to.deep.equal(before);
      expect(after.City).to.equal('Bergen');
    });
  }

  it('"@delete": true still marks the listing deleted, and false is an ordinary record', async () => {
    await ingestFile(server.service, 'Property', file('keep.ndjson', '{"ListingKey":"DEL-1","MlsStatus":"Active","@delete":false}\n'), { onError: 'skip' });
    expect((await listing('DEL-1')).MlsStatus).to.equal('Active');
    const report = await ingestFile(server.service, 'Property', file('del.ndjson', '{"ListingKey":"DEL-1","@delete":true}\n'), { onError: 'skip' });
    expect(report.deleted).to.equal(1);
    expect((await listing('DEL-1')).MlsStatus).to.equal('Delete');
  });

  describe('every line checked against the set\'s record schema (generated/schemas/Property.json)', () => {
    it('a bad line is reported with every problem at its JSON pointer, and the good lines around it are written', async () => {
      const good = (key: string): Ingested<'Property'> => ({ ListingKey: key, MlsStatus: 'Active', ListPrice: 350_000 });
      const bad = { ListingKey: 'CHK-BAD', ListPrice: 'a lot', MlsStatus: 'Foo', Bogus: 1, Appliances: ['Dishwasher', 7], BedroomsTotal: 2.5 };
      const report = await ingestFile(server.service, 'Property', file('check.ndjson', ndjson(good('CHK-1'), bad, good('CHK-2'))), { onError: 'skip' });
      expect(report.errors).to.deep.equal([{
        line: 2,
        message: '/Bogus is not a field of Property; /Appliances/1 must be a string; /BedroomsTotal must be an integer; '
          + '/ListPrice must be a number; /MlsStatus "Foo" is not a value of lookup MlsStatus',
      }]);
      expect(report.created).to.equal(2);
      expect((await get(`${server.url}/Property('CHK-BAD')`)).status).to.equal(404);
      expect((await listing('CHK-2')).ListPrice).to.equal(350_000);
    });

    it('accepts what it always did: digits for numbers, offsets on timestamps, annotations; the service\'s timestamps are ignored', async () => {
      const line = {
        ListingKey: 'NORM-1', MlsStatus: 'Active', ListPrice: '450000.125', BedroomsTotal: '3',
        OriginalEntryTimestamp: '2026-01-02T03:04:05.6789+02:00', ModificationTimestamp: 'not a time', '@odata.etag': 'W/"1"',
      };
      const report = await ingestFile(server.service, 'Property', file('norm.ndjson', ndjson(line)), { onError: 'skip' });
      expect(report.errors).to.deep.equal([]);
      const stored = await listing('NORM-1');
      expect(stored).to.include({ ListPrice: 450000.13, BedroomsTotal: 3, OriginalEntryTimestamp: '2026-01-02T01:04:05.678Z' });
      expect(stored.ModificationTimestamp).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    });

    it('what the schema cannot say is still the codec\'s: a date not on the calendar', async () => {
      const report = await ingestFile(server.service, 'Property', file('cal.ndjson', ndjson({ ListingKey: 'CAL-1', ListingContractDate: '2026-02-30' })), { onError: 'skip' });
      expect(report.errors).to.deep.equal([{ line: 1, message: '/ListingContractDate must be a date YYYY-MM-DD' }]);
    });
  });

  it('"@delete" of a key that is not stored is a notice with its line, counted apart from unchanged (not an error)', async () => {
    await ingestFile(server.service, 'Property', file('nf-seed.ndjson', ndjson({ ListingKey: 'NF-1', MlsStatus: 'Active' })), { onError: 'skip' });
    const deletions = ndjson({ ListingKey: 'NF-1', '@delete': true }, { ListingKey: 'NF-1', '@delete': true }, { ListingKey: 'NF-NEVER', '@delete': true });
    const report = await ingestFile(server.service, 'Property', file('nf.ndjson', deletions), { onError: 'skip' });
    expect(report).to.include({ deleted: 1, unchanged: 1, notFound: 1 });
    expect(report.errors).to.deep.equal([]);
    expect(report.notices).to.deep.equal([{ line: 3, message: 'no Property with key "NF-NEVER": nothing to delete' }]);
  });

  describe('a value the database refuses costs only its own line, which is named', () => {
    const trigger = 'reso_test_refuse';
    const refused = /^the database refused the record \((SQLITE_CONSTRAINT_TRIGGER|ER_SIGNAL_EXCEPTION): refused by the test trigger\)$/;
    before(async () => {
      // An operator's rule in the database (a trigger) refusing some listings: the database, not ingest, says no.
      const sql = target.label === 'SQLite'
        ? `CREATE TRIGGER ${trigger} BEFORE INSERT ON Property WHEN NEW.ListingKey LIKE 'REFUSED%' `
          + 'BEGIN SELECT RAISE(ABORT, \'refused by the test trigger\'); END'
        : `CREATE TRIGGER ${trigger} BEFORE INSERT ON Property FOR EACH ROW BEGIN IF NEW.ListingKey LIKE 'REFUSED%' THEN `
          + 'SIGNAL SQLSTATE \'45000\' SET MESSAGE_TEXT = \'refused by the test trigger\'; END IF; END';
      await server.service.db.schemaWork((knex) => knex.raw(sql));
    });
    after(async () => { await server.service.db.schemaWork((knex) => knex.raw(`DROP TRIGGER ${trigger}`)); });

    const lines = (prefix: string, refusedAt: number) => Array.from({ length: 6 }, (_, i): Ingested<'Property'> => (
      { ListingKey: i + 1 === refusedAt ? `REFUSED-${prefix}` : `${prefix}-${i + 1}`, MlsStatus: 'Active', ListPrice: 100_000 + i }));

    it('skip: the batch is written again in halves; the good lines are written and the refused line is reported with the database\'s words', async () => {
      const report = await ingestFile(server.service, 'Property', file('refused.ndjson', ndjson(...lines('HALF', 3))), { onError: 'skip' });
      expect(report.errors.map((e) => e.line)).to.deep.equal([3]);
      expect(report.errors[0].message).to.match(refused);
      expect(report.created).to.equal(5);
      for (const n of [1, 2, 4, 5, 6]) expect((await listing(`HALF-${n}`)).ListPrice, `HALF-${n}`).to.equal(100_000 + n - 1);
      expect((await get(`${server.url}/Property('REFUSED-HALF')`)).status).to.equal(404);
    });

    it('reject: the check writes each batch and rolls it back, so the refused line is named and nothing is written', async () => {
      const report = await ingestFile(server.service, 'Property', file('refused-reject.ndjson', ndjson(...lines('REJ', 5))), { onError: 'reject' });
      expect(report.rejected).to.equal(true);
      expect(report.errors.map((e) => e.line)).to.deep.equal([5]);
      expect(report.errors[0].message).to.match(refused);
      for (const n of [1, 2, 3, 4, 6]) expect((await get(`${server.url}/Property('REJ-${n}')`)).status, `REJ-${n}`).to.equal(404);
    });

    it('MariaDB: a column narrower than the dictionary says ("Data too long") names the line too', async function () {
      if (target.label !== 'MariaDB') this.skip();
      const column = (length: number) => server.service.db.schemaWork((knex) => knex.raw(`ALTER TABLE Property MODIFY PropertyType VARCHAR(${length}) NULL`));
      await column(8);
      try {
        const records: Ingested<'Property'>[] = [
          { ListingKey: 'LONG-1', PropertyType: 'Land' }, { ListingKey: 'LONG-2', PropertyType: 'Residential' }, { ListingKey: 'LONG-3', PropertyType: 'Farm' },
        ];
        const report = await ingestFile(server.service, 'Property', file('long.ndjson', ndjson(...records)), { onError: 'skip' });
        expect(report.errors).to.deep.equal([{ line: 2, message: 'the database refused the record (ER_DATA_TOO_LONG: Data too long for column \'PropertyType\' at row 1)' }]);
        expect(report.created).to.equal(2);
      } finally {
        await column(50);
      }
    });
  });
});
