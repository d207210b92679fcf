/**
 * Spec §2 (related resources) and §4 "Expansion rules for Property": $expand of Media, OpenHouse,
 * historyTransactional, PropertyRooms and PropertyUnits, with nested options, on collections, key fetches and
 * nextLink pages; navigation paths; one batched query per navigation per page.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/server';
import { seedDemoData } from '../src/demo/demo-data';
import * as mysql from 'mysql2/promise';
import { describeEachDatabase, mariadbTarget, MYSQL_URL, TestDatabase } from './support/databases';
import { listingFixtures } from './support/listing-fixtures';
import { get, odataError, startTestServer } from './support/http';
import { walkPages } from './support/next-links';

const NAVS: [string, string, string][] = [
  ['Media', 'Media', 'ResourceRecordKey'],
  ['OpenHouse', 'OpenHouse', 'ListingKey'],
  ['historyTransactional', 'HistoryTransactional', 'ResourceRecordKey'],
  ['PropertyRooms', 'PropertyRooms', 'ListingKey'],
  ['PropertyUnits', 'PropertyUnitTypes', 'ListingKey'],
];

/** Every record of a query, following nextLink. */
const all = async (url: string): Promise<any[]> => (await walkPages(url, { headers: { Prefer: 'odata.maxpagesize=1000' } })).records;

describeEachDatabase('§4 Expansion rules for Property', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  let statements = 0;

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: 20 });
    await seedDemoData(server.service, { listings: 45 });
    base = server.url;
    // Count the data reads the service sends (they go through `all`; the meter applies its usage journal in its own transactions).
    const database = server.service.db as unknown as { all: (sql: string, ...a: unknown[]) => Promise<unknown> };
    const original = database.all.bind(database);
    database.all = (sql: string, ...a: unknown[]) => {
      // Token lookups (cached, but the cache expires), usage statements and the webhook worker's polls are not data reads.
      if (/^\s*select/i.test(sql) && !/reso_(tokens|clients|server_settings|usage|webhooks)/.test(sql)) statements++;
      return original(sql, ...a);
    };
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  for (const [nav, set, fk] of NAVS) {
    it(`1. $expand=${nav}: each listing carries exactly what ${set}?$filter=${fk} eq '<key>' returns`, async () => {
      const listings = await all(`${base}/Property?$select=ListingKey&$expand=${nav}`);
      expect(listings.length).to.equal(45);
      const related = await all(`${base}/${set}`);
      for (const l of listings) {
        expect(l[nav], l.ListingKey).to.be.an('array');
        const expected = related.filter((r) => r[fk] === l.ListingKey);
        expect(l[nav].map((r: any) => JSON.stringify(r)).sort(), `${nav} of ${l.ListingKey}`)
          .to.deep.equal(expected.map((r) => JSON.stringify(r)).sort());
      }
    });

    it(`navigation path Property('<key>')/${nav} returns the same records as the expansion`, async () => {
      const [l] = (await get(`${base}/Property?$top=1&$expand=${nav}`)).json.value;
      const r = await get(`${base}/Property('${l.ListingKey}')/${nav}`);
      expect(r.status).to.equal(200);
      expect(r.json['@odata.context']).to.equal(`${base}/$metadata#${set}`);
      expect(r.json.value).to.deep.equal(l[nav]);
    });
  }

  it('empty collections serialise as []', async () => {
    const listings = await all(`${base}/Property?$select=ListingKey&$expand=PropertyUnits,OpenHouse`);
    expect(listings.some((l) => l.PropertyUnits.length === 0)).to.equal(true);
    for (const l of listings) expect(l.PropertyUnits).to.be.an('array');
  });

  it('Media is in its display order by default (Order, then MediaKey)', async () => {
    const listings = await all(`${base}/Property?$select=ListingKey&$expand=Media($select=MediaKey,Order)`);
    for (const l of listings) {
      const orders = l.Media.map((m: any) => m.Order);
      expect(orders, l.ListingKey).to.deep.equal([...orders].sort((a: number, b: number) => a - b));
    }
  });

  it('several expansions at once, with nested $select, $filter, $orderby and $top', async () => {
    const url = `${base}/Property?$select=ListingKey&$expand=Media($select=MediaKey;$orderby=MediaKey desc;$top=2),`
      + "OpenHouse($filter=ModificationTimestamp gt '2000-01-01T00:00:00Z';$select=OpenHouseKey),PropertyRooms($top=1)";
    const r = await get(url);
    expect(r.status, r.text.slice(0, 300)).to.equal(200);
    expect(r.json['@odata.context']).to.equal(`${base}/$metadata#Property(ListingKey,Media(MediaKey),OpenHouse(OpenHouseKey),PropertyRooms())`);
    for (const l of r.json.value) {
      expect(Object.keys(l)).to.deep.equal(['ListingKey', 'Media', 'OpenHouse', 'PropertyRooms']);
      expect(l.Media.length).to.be.at.most(2);
      const keys = l.Media.map((m: any) => m.MediaKey);
      expect(keys).to.deep.equal([...keys].sort().reverse());
      for (const m of l.Media) expect(Object.keys(m)).to.deep.equal(['MediaKey']);
      expect(l.PropertyRooms.length).to.be.at.most(1);
    }
  });

  it('works on a key fetch, with the expansion in the context URL', async () => {
    const [l] = (await get(`${base}/Property?$top=1&$select=ListingKey`)).json.value;
    const r = await get(`${base}/Property('${l.ListingKey}')?$expand=Media($select=MediaKey)`);
    expect(r.status).to.equal(200);
    expect(r.json['@odata.context']).to.equal(`${base}/$metadata#Property(Media(MediaKey))/$entity`);
    expect(r.json.Media.length).to.be.at.least(5);
  });

  it('works on nextLink pages, and the number of queries per page is constant (one per navigation)', async () => {
    const perPage: number[] = [];
    let before = statements;
    const counted = async () => {
      perPage.push(statements - before);
      before = statements;
    };
    const walk = await walkPages(`${base}/Property?$expand=Media,OpenHouse,historyTransactional,PropertyRooms,PropertyUnits`, { between: counted });
    await counted();
    for (const l of walk.records) expect(l.Media.length).to.be.within(5, 30);
    expect(perPage.length).to.equal(3); // 45 listings, 20 a page
    // the page itself plus one per navigation, whatever the number of listings on the page
    expect(new Set(perPage)).to.deep.equal(new Set([1 + NAVS.length]));
  });

  it('an unknown navigation answers 400; a navigation path of a missing listing 404', async () => {
    const r = await get(`${base}/Property?$expand=Photos`);
    expect(r.status).to.equal(400);
    expect(odataError(r).target).to.equal('Photos');
    const m = await get(`${base}/Property('no-such-listing')/Media`);
    expect(m.status).to.equal(404);
    odataError(m);
  });
});

describeEachDatabase('§4 Expansion: a listing with more media than one value of the database holds', (target) => {
  // Read as stored, a listing's media are joined by the database into one value (record-queries.ts). MariaDB cuts
  // such a value at max_allowed_packet with only a warning; here it is 1 MiB and the listing's media 1.3 MB, so
  // the server must notice the cut and read that listing's media a row each.
  const PACKET = 1024 * 1024;
  const PHOTOS = 1300;
  let db: TestDatabase;
  let server: RunningServer | undefined;
  let restorePacket = async () => {};

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    const seeding = await startTestServer(serviceModel, db.url);
    try {
      await seedDemoData(seeding.service, { listings: 3 });
      const f = await listingFixtures(seeding.service, 'many-');
      await f.ingest('Property', f.listing('MANY', 'Active'));
      const photos = Array.from({ length: PHOTOS }, (_, i) => ({ ...f.photo('MANY', `MANY-${String(i).padStart(4, '0')}`), Order: i % 7 }));
      expect(photos.reduce((n, p) => n + JSON.stringify(p).length + 1, 0)).to.be.above(PACKET);
      await f.ingest('Media', ...photos);
    } finally {
      await seeding.close();
    }
    if (target === mariadbTarget) restorePacket = await globalPacket(PACKET);
    server = await startTestServer(serviceModel, db.url);
  });
  after(async () => {
    await server?.close();
    await restorePacket();
    await db?.drop();
  });

  it('a key fetch expands every one of its media, in their display order', async () => {
    const r = await get(`${server!.url}/Property('MANY')?$expand=Media`);
    expect(r.status, r.text.slice(0, 300)).to.equal(200);
    const oracle = await all(`${server!.url}/Media?$filter=ResourceRecordKey eq 'MANY'&$orderby=Order,MediaKey`);
    expect(oracle.length).to.equal(PHOTOS);
    expect(r.json.Media).to.deep.equal(oracle);
  });

  it('a page expands them too, and $top within the expansion still cuts each listing\'s media', async () => {
    const page = await all(`${server!.url}/Property?$select=ListingKey&$expand=Media($top=1290)`);
    const many = page.find((l) => l.ListingKey === 'MANY');
    expect(many.Media.map((m: any) => m.MediaKey)).to.deep.equal(
      (await all(`${server!.url}/Media?$filter=ResourceRecordKey eq 'MANY'&$orderby=Order,MediaKey&$select=MediaKey`)).slice(0, 1290).map((m) => m.MediaKey));
    for (const l of page.filter((p) => p.ListingKey !== 'MANY')) expect(l.Media.length, l.ListingKey).to.be.within(5, 30);
  });
});

/** Sets MariaDB's max_allowed_packet for connections opened from now on; gives back what restores it. */
async function globalPacket(bytes: number): Promise<() => Promise<void>> {
  const c = await mysql.createConnection(MYSQL_URL!);
  try {
    const [[{ before }]] = await c.query('SELECT @@GLOBAL.max_allowed_packet AS `before`') as unknown as [[{ before: number }]];
    await c.query('SET GLOBAL max_allowed_packet = ?', [bytes]);
    return async () => {
      const r = await mysql.createConnection(MYSQL_URL!);
      try {
        await r.query('SET GLOBAL max_allowed_packet = ?', [before]);
      } finally {
        await r.end();
      }
    };
  } finally {
    await c.end();
  }
}
