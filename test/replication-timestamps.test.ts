/**
 * The timestamps replication relies on (spec §2 ModificationTimestamp, §4 Recommended practice and Expansion
 * rule 4), case by case: a related record that comes back into a client's view comes back in its own set's
 * increment; timestamps come from the database's one clock, whatever a writer host's clock says, strictly
 * increasing with millisecond precision; PhotosChangeTimestamp is right whichever of a listing and its photos
 * arrives first. The randomised end-to-end proof is replication.test.ts.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { EntitySetName, Lookups } from '../generated/entities';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { ListingFixtures, listingFixtures } from './support/listing-fixtures';
import type { IngestLine } from './support/typed-records';
import { get, startTestServer } from './support/http';
import { odataString, Rec } from './support/replication-paging';
import { storedRecords } from './support/replication-writer';

const SCOPED_TOKEN = 'timestamps-scoped-token';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describeEachDatabase('Replication timestamps (§2, §4)', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let fixtures: ListingFixtures;
  let seq = 0;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
    await seedDemoData(server.service, { listings: 5 });
    fixtures = await listingFixtures(server.service, 'T');
    const { client } = await server.service.clients.add({ id: 'timestamps-scoped', name: 'Scoped', scope: "MlsStatus ne 'Withdrawn'" });
    await server.service.clients.issueToken(client.id, undefined, SCOPED_TOKEN);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  const ingest = <S extends EntitySetName>(set: S, ...inputs: IngestLine<S>[]) => fixtures.ingest(set, ...inputs);
  const listing = (key: string, status: Lookups.MlsStatus) => fixtures.listing(key, status);
  const photo = (listingKey: string, key: string) => fixtures.photo(listingKey, key);
  const asScoped = (path: string) => get(`${server.url}/${path}`, { Authorization: `Bearer ${SCOPED_TOKEN}` });
  const mediaKeys = (r: { json: any }) => r.json.value.map((m: Rec) => m.MediaKey);

  describe('a related record that comes back into view comes back in its own increment', () => {
    it('a listing withdrawn out of the client\'s scope and returned: its photo is in /Media\'s next increment', async () => {
      const key = `TS${++seq}`;
      // 1. The listing and its photo; the client's /Media has the photo at T.
      await ingest('Property', listing(key, 'Active'));
      await ingest('Media', photo(key, `${key}-M1`));
      const first = await asScoped(`Media?$filter=ResourceRecordKey eq '${key}'`);
      expect(mediaKeys(first)).to.deep.equal([`${key}-M1`]);
      const t = first.json.value[0].ModificationTimestamp as string;
      // 2. Withdrawn, outside the client's scope: the photo is gone from its /Media (its removal check drops it).
      await ingest('Property', listing(key, 'Withdrawn'));
      expect(mediaKeys(await asScoped(`Media?$filter=ResourceRecordKey eq '${key}'`))).to.deep.equal([]);
      // 3. Active again: the photo is in the increment after T, at the listing's new timestamp.
      await ingest('Property', listing(key, 'Active'));
      const increment = await asScoped(`Media?$filter=${encodeURIComponent(`ModificationTimestamp gt ${odataString(t)}`)}`);
      expect(increment.status).to.equal(200);
      expect(mediaKeys(increment)).to.include(`${key}-M1`);
      const returned = (await asScoped(`Property('${key}')`)).json;
      expect(increment.json.value.find((m: Rec) => m.MediaKey === `${key}-M1`).ModificationTimestamp).to.equal(returned.ModificationTimestamp);
    });

    it('a photo changed while its listing was out of scope is in the increment once the listing returns', async () => {
      const key = `TS${++seq}`;
      await ingest('Property', listing(key, 'Active'));
      await ingest('Media', photo(key, `${key}-M1`));
      await ingest('Property', listing(key, 'Withdrawn'));
      const mark = (await get(`${server.url}/Property('${key}')`)).json.ModificationTimestamp as string;
      await ingest('Media', { ...photo(key, `${key}-M1`), ShortDescription: 'changed while withdrawn' });
      const changedAt = (await get(`${server.url}/Media('${key}-M1')`)).json.ModificationTimestamp as string;
      await ingest('Property', listing(key, 'Active'));
      const since = await asScoped(`Media?$filter=${encodeURIComponent(`ModificationTimestamp gt ${odataString(changedAt)}`)}`);
      expect(mark < changedAt, 'the change happened while the listing was withdrawn').to.equal(true);
      expect(since.json.value.filter((m: Rec) => m.MediaKey === `${key}-M1`).map((m: Rec) => m.ShortDescription)).to.deep.equal(['changed while withdrawn']);
    });

    it('photos written before their listing was created out of scope appear in the increment when it enters the scope', async () => {
      const key = `TS${++seq}`;
      await ingest('Media', photo(key, `${key}-M1`));
      await ingest('Property', listing(key, 'Withdrawn'));
      expect(mediaKeys(await asScoped(`Media?$filter=ResourceRecordKey eq '${key}'`))).to.deep.equal([]);
      const mark = (await get(`${server.url}/Property('${key}')`)).json.ModificationTimestamp as string;
      await ingest('Property', listing(key, 'Active'));
      expect(mediaKeys(await asScoped(`Media?$filter=${encodeURIComponent(`ModificationTimestamp gt ${odataString(mark)}`)}`))).to.include(`${key}-M1`);
    });
  });

  describe('one clock: the database\'s', () => {
    it('a writer whose host clock runs 60 s fast does not move ModificationTimestamp', async () => {
      const key = `TS${++seq}`;
      // The test process's Date.now runs a minute ahead; the wall time is taken from a clock it does not touch.
      const wall = () => performance.timeOrigin + performance.now();
      const realNow = Date.now;
      Date.now = () => realNow() + 60_000;
      try {
        await ingest('Property', listing(key, 'Active'));
      } finally {
        Date.now = realNow;
      }
      const stamped = Date.parse((await get(`${server.url}/Property('${key}')`)).json.ModificationTimestamp);
      expect(Math.abs(stamped - wall()), 'milliseconds between the timestamp and the wall clock').to.be.below(10_000);
    });

    it('a burst of transactions in one millisecond gets strictly increasing, millisecond-precise timestamps in commit order', async () => {
      const keys = Array.from({ length: 12 }, () => `TS${++seq}`);
      // Concurrent ingests: the writers' lock orders them; each takes a timestamp after the last one handed out.
      await Promise.all(keys.map((k) => ingest('Property', listing(k, 'Active'))));
      const stamps = (await storedRecords(server.service, 'Property')).filter((r) => keys.includes(r.ListingKey)).map((r) => r.ModificationTimestamp as string);
      expect(stamps).to.have.length(keys.length);
      for (const s of stamps) expect(s).to.match(TIMESTAMP);
      expect(new Set(stamps).size, 'one timestamp per transaction').to.equal(keys.length);
      const clock = Number(await server.service.settings.get('modification-clock'));
      expect(Math.max(...stamps.map((s) => Date.parse(s)))).to.equal(clock);
    });
  });

  describe('PhotosChangeTimestamp whatever the order of arrival', () => {
    it('a listing created after its photos gets PhotosChangeTimestamp (and its photos its timestamp)', async () => {
      const key = `TS${++seq}`;
      await ingest('Media', photo(key, `${key}-M1`), photo(key, `${key}-M2`));
      await ingest('Property', { ...listing(key, 'Active'), PhotosChangeTimestamp: null, DocumentsChangeTimestamp: null });
      const l = (await get(`${server.url}/Property('${key}')`)).json;
      const media = (await get(`${server.url}/Media?$filter=ResourceRecordKey eq '${key}'`)).json.value;
      expect({ photos: l.PhotosChangeTimestamp, documents: l.DocumentsChangeTimestamp ?? null, media: media.map((m: Rec) => m.ModificationTimestamp) })
        .to.deep.equal({ photos: l.ModificationTimestamp, documents: null, media: [l.ModificationTimestamp, l.ModificationTimestamp] });
    });

    it('a listing created before its photos gets PhotosChangeTimestamp when they arrive', async () => {
      const key = `TS${++seq}`;
      await ingest('Property', { ...listing(key, 'Active'), PhotosChangeTimestamp: null });
      expect((await get(`${server.url}/Property('${key}')`)).json.PhotosChangeTimestamp ?? null).to.equal(null);
      await ingest('Media', photo(key, `${key}-M1`));
      const l = (await get(`${server.url}/Property('${key}')`)).json;
      const m = (await get(`${server.url}/Media('${key}-M1')`)).json;
      expect([l.PhotosChangeTimestamp, l.ModificationTimestamp]).to.deep.equal([m.ModificationTimestamp, m.ModificationTimestamp]);
    });
  });
});

describeEachDatabase('When the operator changes what a client may see (scope epochs)', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  const token = 'epoch-client-token';
  const asClient = (url: string) => get(url, { Authorization: `Bearer ${token}`, Prefer: 'odata.maxpagesize=2' });
  const since = (base: string, mark: string) => `${base}/Media?$filter=${encodeURIComponent(`ModificationTimestamp gt ${odataString(mark)}`)}`;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
    await seedDemoData(server.service, { listings: 5 });
    const { client } = await server.service.clients.add({ id: 'epoch-client', name: 'Epoch', scope: "MlsStatus ne 'Withdrawn'" });
    await server.service.clients.issueToken(client.id, undefined, token);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  it('after `clients scope`, an older mark and an older nextLink answer 400 ScopeChanged naming the epoch; a new walk and marks from it work', async () => {
    const walk = await asClient(`${server.url}/Media`);
    const mark = walk.json.value[0].ModificationTimestamp as string;
    const oldNext = walk.json['@odata.nextLink'] as string;
    expect((await asClient(since(server.url, mark))).status, 'before the change, the mark is fine').to.equal(200);

    await server.service.clients.setScope('epoch-client', "MlsStatus ne 'Pending'");
    const refused = await asClient(since(server.url, mark));
    expect(refused.status).to.equal(400);
    expect(refused.json.error.code).to.equal('ScopeChanged');
    expect(refused.json.error.target).to.equal('$filter');
    const epoch = /changed at (\S+)/.exec(refused.json.error.message)![1];
    expect(epoch).to.match(TIMESTAMP);
    expect(epoch > mark).to.equal(true);
    const stale = await asClient(oldNext);
    expect([stale.status, stale.json.error.code, stale.json.error.target]).to.deep.equal([400, 'ScopeChanged', '$skiptoken']);

    const again = await asClient(`${server.url}/Media`);
    expect(again.status).to.equal(200);
    expect((await asClient(again.json['@odata.nextLink'])).status, 'a nextLink of the new walk').to.equal(200);
    expect((await asClient(since(server.url, epoch))).status, 'a mark at the epoch').to.equal(200);
    // Another client's marks are not affected.
    expect((await get(since(server.url, mark))).status).to.equal(200);
  });

  it('a server started with another FEED_SCOPE refuses marks from before it', async function () {
    this.timeout(60_000);
    const mark = (await get(`${server.url}/Media`)).json.value[0].ModificationTimestamp as string;
    expect((await get(since(server.url, mark))).status).to.equal(200);
    const other = await startTestServer(serviceModel, db.url, { feedScope: "MlsStatus ne 'Closed'" });
    try {
      const refused = await get(since(other.url, mark));
      expect([refused.status, refused.json.error.code]).to.deep.equal([400, 'ScopeChanged']);
      expect((await get(`${other.url}/Media`)).status).to.equal(200);
    } finally {
      await other.close();
    }
  });
});
