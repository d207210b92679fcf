/**
 * Stored records kept in memory by revision (RECORD_CACHE_MB, src/storage/record-cache.ts): a record read again
 * is taken from memory only at the revision its row holds, so every write is served at once (an ingest, a
 * listing's timestamp moved by its photo, a write of another instance on the same database), what a licence
 * hides stays hidden, and the memory kept stays under its bound.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { ListingService } from '../src/process/service';
import { seedDemoData } from '../src/demo/demo-data';
import { openDatabase } from '../src/storage/db/open-database';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, HttpResult, startTestServer } from './support/http';
import { ListingFixtures, listingFixtures } from './support/listing-fixtures';
import { walkPages } from './support/next-links';
import { storedRecords } from './support/replication-writer';

const SCOPED_TOKEN = 'record-cache-scoped-token';

describeEachDatabase('Stored records kept in memory by revision (RECORD_CACHE_MB)', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let fixtures: ListingFixtures;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    // fetch asks for gzip: with no page kept whole (gzip-kept-pages.test.ts), every page is read through this cache.
    server = await startTestServer(serviceModel, db.url, { gzipPageCacheBytes: 0 });
    await seedDemoData(server.service, { listings: 20 });
    fixtures = await listingFixtures(server.service, 'RC');
    const { client } = await server.service.clients.add({ id: 'record-cache-scoped', name: 'Scoped', scope: "MlsStatus ne 'Withdrawn'" });
    await server.service.clients.issueToken(client.id, undefined, SCOPED_TOKEN);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  const byKey = (key: string, token?: string) => get(`${server.url}/Property('${key}')`, token ? { Authorization: `Bearer ${token}` } : {});
  const page = (key: string, token?: string) => get(`${server.url}/Property?$filter=${encodeURIComponent(`ListingKey eq '${key}'`)}`, token ? { Authorization: `Bearer ${token}` } : {});
  const only = (r: HttpResult) => {
    expect(r.status).to.equal(200);
    expect(r.json.value).to.have.length(1);
    return r.json.value[0];
  };
  const hits = () => server.service.recordCache.stats().hits;

  describe('a record read again', () => {
    it('comes from memory (a key fetch and a page alike), and the same bytes as read from the database', async () => {
      await fixtures.ingest('Property', fixtures.listing('RC1', 'Active'));
      const first = [await byKey('RC1'), await page('RC1')];
      const before = hits();
      const again = [await byKey('RC1'), await page('RC1')];
      expect(hits()).to.be.greaterThan(before);
      expect(again.map((r) => r.text)).to.deep.equal(first.map((r) => r.text));
      expect(again[0].headers.get('etag')).to.equal(first[0].headers.get('etag'));
    });

    it('changed by an ingest is served changed at once', async () => {
      await fixtures.ingest('Property', fixtures.listing('RC2', 'Active'));
      for (let i = 0; i < 3; i++) expect(only(await page('RC2')).MlsStatus).to.equal('Active');
      await fixtures.ingest('Property', { ...fixtures.listing('RC2', 'Pending'), PublicRemarks: 'changed' });
      const [key, listed] = [(await byKey('RC2')).json, only(await page('RC2'))];
      expect([key.MlsStatus, key.PublicRemarks, listed.MlsStatus, listed.PublicRemarks]).to.deep.equal(['Pending', 'changed', 'Pending', 'changed']);
    });

    it('whose change timestamp the database moved in its stored text (a photo added) is served with the new timestamp', async () => {
      await fixtures.ingest('Property', fixtures.listing('RC3', 'Active'));
      const was = only(await page('RC3'));
      expect(only(await page('RC3'))).to.deep.equal(was);
      await fixtures.ingest('Media', fixtures.photo('RC3', 'RC3-M1'));
      const [key, listed] = [(await byKey('RC3')).json, only(await page('RC3'))];
      expect(listed.ModificationTimestamp > was.ModificationTimestamp).to.equal(true);
      expect(key.ModificationTimestamp).to.equal(listed.ModificationTimestamp);
      expect(listed).to.deep.equal((await storedRecords(server.service, 'Property')).find((r) => r.ListingKey === 'RC3'));
    });

    it('written by another instance on the same database is served changed at once', async () => {
      await fixtures.ingest('Property', fixtures.listing('RC4', 'Active'));
      for (let i = 0; i < 3; i++) expect((await byKey('RC4')).json.MlsStatus).to.equal('Active');
      const other = new ListingService(serviceModel, openDatabase(db.url));
      try {
        await other.prepare();
        const theirs = await listingFixtures(other, 'RC');
        await theirs.ingest('Property', { ...theirs.listing('RC4', 'Closed'), PublicRemarks: 'written elsewhere' });
      } finally {
        await other.close();
      }
      const r = await byKey('RC4');
      expect([r.json.MlsStatus, r.json.PublicRemarks]).to.deep.equal(['Closed', 'written elsewhere']);
      expect(only(await page('RC4')).PublicRemarks).to.equal('written elsewhere');
    });
  });

  describe('related records read again (an expansion)', () => {
    const expanded = (key: string, token?: string) => get(
      `${server.url}/Property?$filter=${encodeURIComponent(`ListingKey eq '${key}'`)}&$expand=Media`, token ? { Authorization: `Bearer ${token}` } : {},
    );
    const mediaKeys = (r: HttpResult) => (only(r).Media as { MediaKey: string }[]).map((m) => m.MediaKey);
    const storedMedia = async (listing: string) => (await storedRecords(server.service, 'Media'))
      .filter((m) => m.ResourceRecordKey === listing).sort((a, b) => Number(a.Order) - Number(b.Order) || (a.MediaKey < b.MediaKey ? -1 : 1));

    it('come from memory, by page and by key, the same bytes as read from the database', async () => {
      await fixtures.ingest('Property', fixtures.listing('RC10', 'Active'));
      await fixtures.ingest('Media', { ...fixtures.photo('RC10', 'RC10-M1'), Order: 1 }, { ...fixtures.photo('RC10', 'RC10-M2'), Order: 2 });
      const byKeyExpanded = () => get(`${server.url}/Property('RC10')?$expand=Media`);
      const first = [await expanded('RC10'), await byKeyExpanded(), await expanded('RC10'), await byKeyExpanded()];
      const before = hits();
      const again = [await expanded('RC10'), await byKeyExpanded()];
      expect(hits() - before).to.be.at.least(2 * 3);
      expect(again.map((r) => r.text)).to.deep.equal(first.slice(2).map((r) => r.text));
      expect(only(again[0]).Media).to.deep.equal(await storedMedia('RC10'));
    });

    it('are served changed at once when one of them is added, changed or removed', async () => {
      await fixtures.ingest('Property', fixtures.listing('RC11', 'Active'));
      await fixtures.ingest('Media', { ...fixtures.photo('RC11', 'RC11-M1'), Order: 1 }, { ...fixtures.photo('RC11', 'RC11-M2'), Order: 2 });
      for (let i = 0; i < 3; i++) expect(mediaKeys(await expanded('RC11'))).to.deep.equal(['RC11-M1', 'RC11-M2']);
      await fixtures.ingest('Media', { ...fixtures.photo('RC11', 'RC11-M3'), Order: 3 });
      expect(mediaKeys(await expanded('RC11'))).to.deep.equal(['RC11-M1', 'RC11-M2', 'RC11-M3']);
      await fixtures.ingest('Media', { ...fixtures.photo('RC11', 'RC11-M2'), Order: 4, ShortDescription: 'moved last' });
      const changed = only(await expanded('RC11')).Media;
      expect(changed.map((m: { MediaKey: string }) => m.MediaKey)).to.deep.equal(['RC11-M1', 'RC11-M3', 'RC11-M2']);
      expect(changed[2].ShortDescription).to.equal('moved last');
      await fixtures.ingest('Media', { MediaKey: 'RC11-M1', '@delete': true });
      expect(mediaKeys(await expanded('RC11'))).to.deep.equal(['RC11-M3', 'RC11-M2']);
      expect(only(await expanded('RC11')).Media).to.deep.equal(await storedMedia('RC11'));
    });

    it('written by another instance on the same database are served changed at once', async () => {
      await fixtures.ingest('Property', fixtures.listing('RC12', 'Active'));
      await fixtures.ingest('Media', { ...fixtures.photo('RC12', 'RC12-M1'), Order: 1 });
      for (let i = 0; i < 3; i++) expect(mediaKeys(await expanded('RC12', SCOPED_TOKEN))).to.deep.equal(['RC12-M1']);
      const other = new ListingService(serviceModel, openDatabase(db.url));
      try {
        await other.prepare();
        const theirs = await listingFixtures(other, 'RC');
        await theirs.ingest('Media', { ...theirs.photo('RC12', 'RC12-M1'), Order: 1, ShortDescription: 'written elsewhere' });
      } finally {
        await other.close();
      }
      const [scoped, admin] = [only(await expanded('RC12', SCOPED_TOKEN)), only(await expanded('RC12'))];
      expect([scoped.Media[0].ShortDescription, admin.Media[0].ShortDescription]).to.deep.equal(['written elsewhere', 'written elsewhere']);
    });

    it('of a walk are kept for its first page only; pages larger than a batch are written whole', async () => {
      const walker = await startTestServer(serviceModel, db.url, { pageBatchSize: 3 });
      try {
        const walk = await walkPages(`${walker.url}/Property?$orderby=ListingKey&$expand=Media`, { headers: { Prefer: 'odata.maxpagesize=7' } });
        expect(walk.pages.length).to.be.greaterThan(2);
        for (const listing of walk.records) expect(listing.Media).to.deep.equal(await storedMedia(listing.ListingKey));
        const firstPage = JSON.stringify(walk.pages[0].json.value).length;
        expect(walker.service.recordCache.stats().bytes).to.be.within(firstPage / 2, 2 * firstPage);
      } finally {
        await walker.close();
      }
    });
  });

  describe('a licence', () => {
    it('that no longer admits a record kept in memory is not served it, by key or in a page', async () => {
      await fixtures.ingest('Property', fixtures.listing('RC5', 'Active'));
      for (let i = 0; i < 3; i++) {
        expect((await byKey('RC5', SCOPED_TOKEN)).status).to.equal(200);
        only(await page('RC5', SCOPED_TOKEN));
      }
      await fixtures.ingest('Property', fixtures.listing('RC5', 'Withdrawn'));
      expect((await byKey('RC5', SCOPED_TOKEN)).status).to.equal(404);
      const listed = await page('RC5', SCOPED_TOKEN);
      expect([listed.status, listed.json.value]).to.deep.equal([200, []]);
      expect((await byKey('RC5')).json.MlsStatus).to.equal('Withdrawn');
    });
  });

  describe('the bound', () => {
    it('holds while every listing is fetched by key, again and again; what is served is what is stored', async function () {
      this.timeout(120_000);
      const bound = 64 * 1024;
      const small = await startTestServer(serviceModel, db.url, { recordCacheBytes: bound });
      try {
        const stored = await storedRecords(small.service, 'Property');
        expect(stored.reduce((n, r) => n + JSON.stringify(r).length, 0)).to.be.greaterThan(2 * bound);
        for (let i = 0; i < 3; i++) {
          for (const record of stored) expect((await get(`${small.url}/Property('${record.ListingKey}')`)).json).to.deep.include(record);
          const kept = small.service.recordCache.stats();
          expect(kept.bytes).to.be.greaterThan(0).and.at.most(bound);
        }
      } finally {
        await small.close();
      }
    });

    it('a walk keeps only its first page: its later pages are read once, and would push the first pages out', async () => {
      const walker = await startTestServer(serviceModel, db.url);
      try {
        const stored = (await storedRecords(walker.service, 'Property')).sort((a, b) => (a.ListingKey < b.ListingKey ? -1 : 1));
        const walk = await walkPages(`${walker.url}/Property?$orderby=ListingKey`, { headers: { Prefer: 'odata.maxpagesize=7' } });
        expect(walk.pages.length).to.be.greaterThan(2);
        expect(walk.records).to.deep.equal(stored);
        const firstPage = walk.pages[0].json.value.reduce((n: number, r: object) => n + JSON.stringify(r).length, 0);
        expect(walker.service.recordCache.stats().bytes).to.be.within(firstPage, 2 * firstPage);
      } finally {
        await walker.close();
      }
    });

    it('0 keeps nothing, and every read reads the database', async () => {
      const none = await startTestServer(serviceModel, db.url, { recordCacheBytes: 0 });
      try {
        for (let i = 0; i < 2; i++) expect((await get(`${none.url}/Property('RC1')`)).json.ListingKey).to.equal('RC1');
        expect(none.service.recordCache.stats()).to.deep.equal({ hits: 0, misses: 0, bytes: 0 });
      } finally {
        await none.close();
      }
    });
  });
});
