/**
 * Spec §2 (related resources), with RESO's Media and HistoryTransactional shape: a record belongs to a
 * listing through ResourceRecordKey only when its ResourceName is Property (the dictionary's
 * ResourceDiscriminator). A Member's photo whose ResourceRecordKey happens to equal a ListingKey is not the
 * listing's: it is not expanded under it, not on its navigation path, does not move its timestamps, and does
 * not leave the feed with it.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import type { RunningServer } from '../src/process/server';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';

const KEY = 'SHARED-1';

async function ingest(server: RunningServer, set: string, records: Record<string, unknown>[]) {
  const report = emptyReport();
  await ingestBatch(server.service, set, records.map((input, i) => ({ line: i + 1, input })), report);
  expect(report.errors).to.deep.equal([]);
  return report;
}

const mediaKeys = (records: { MediaKey: string }[]) => records.map((m) => m.MediaKey).sort();

describeEachDatabase('§2 Related resources: Media belongs to the resource it names', (target) => {
  let db: TestDatabase;
  let server: RunningServer;

  before(async function () {
    this.timeout(60_000);
    db = await target.create();
    // The feed leaves withdrawn listings out, and their media with them.
    server = await startTestServer(serviceModel, db.url, { feedScope: "MlsStatus ne 'Withdrawn'" });
    await ingest(server, 'Property', [{ ListingKey: KEY, MlsStatus: 'Active', StandardStatus: 'Active' }]);
    await ingest(server, 'Member', [{ MemberKey: KEY, MemberFirstName: 'Pat' }]);
    await ingest(server, 'Media', [
      { MediaKey: 'LISTING-PHOTO', ResourceName: 'Property', ResourceRecordKey: KEY, MediaCategory: 'Photo', Order: 1 },
      { MediaKey: 'LEGACY-PHOTO', ResourceRecordKey: KEY, MediaCategory: 'Photo', Order: 2 },
    ]);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  it("a Member's photo with the same key does not move the listing's timestamps", async () => {
    const before = (await get(`${server.url}/Property('${KEY}')`)).json;
    const report = await ingest(server, 'Media', [
      { MediaKey: 'MEMBER-PHOTO', ResourceName: 'Member', ResourceRecordKey: KEY, MediaCategory: 'Photo', Order: 1 },
    ]);
    expect(report.created).to.equal(1);
    expect(report.listingsTouched).to.equal(0);
    const after = (await get(`${server.url}/Property('${KEY}')`)).json;
    expect(after.ModificationTimestamp).to.equal(before.ModificationTimestamp);
    expect(after.PhotosChangeTimestamp ?? null).to.equal(before.PhotosChangeTimestamp ?? null);
  });

  it('is not expanded under the listing, nor on its navigation path; the listing\'s own media are', async () => {
    const expanded = await get(`${server.url}/Property('${KEY}')?$expand=Media`);
    expect(expanded.status).to.equal(200);
    expect(mediaKeys(expanded.json.Media)).to.deep.equal(['LEGACY-PHOTO', 'LISTING-PHOTO']);
    const path = await get(`${server.url}/Property('${KEY}')/Media`);
    expect(path.status).to.equal(200);
    expect(mediaKeys(path.json.value)).to.deep.equal(['LEGACY-PHOTO', 'LISTING-PHOTO']);
  });

  it('stays in the feed when the listing leaves it; the listing\'s media leave with the listing', async () => {
    await ingest(server, 'Media', [
      { MediaKey: 'MEMBER-PHOTO', ResourceName: 'Member', ResourceRecordKey: KEY, MediaCategory: 'Photo', Order: 1 },
    ]);
    await ingest(server, 'Property', [{ ListingKey: KEY, MlsStatus: 'Withdrawn', StandardStatus: 'Withdrawn' }]);
    const media = await get(`${server.url}/Media?$filter=ResourceRecordKey eq '${KEY}'`);
    expect(media.status).to.equal(200);
    expect(mediaKeys(media.json.value)).to.deep.equal(['MEMBER-PHOTO']);
    expect((await get(`${server.url}/Property('${KEY}')`)).status).to.equal(404);
    await ingest(server, 'Property', [{ ListingKey: KEY, MlsStatus: 'Active', StandardStatus: 'Active' }]);
  });
});
