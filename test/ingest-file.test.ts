/**
 * `reso-server ingest <Resource> <file.ndjson>`: files as operators' tools write them. A byte-order mark
 * does not spoil the first line, and a deletion mark that is not a JSON boolean is refused instead of being
 * taken as a whole record (which would blank the stored listing).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { ingestFile } from '../src/ingest/ndjson';
import type { RunningServer } from '../src/server';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';

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
});
