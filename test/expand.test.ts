/**
 * Spec §2 (related resources) and §4 "Expansion rules for Property": $expand of Media, OpenHouse,
 * historyTransactional, PropertyRooms and PropertyUnits, with nested options, on collections, key fetches and
 * nextLink pages; navigation paths; one batched query per navigation per page. And every single-valued
 * navigation the dictionary declares (Media's, OpenHouse's, … `Listing`): expanded as the one record or null,
 * read in one statement per page, under the client's licence, charged only where the dictionary says.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import * as mysql from 'mysql2/promise';
import { describeEachDatabase, mariadbTarget, MYSQL_URL, TestDatabase } from './support/databases';
import { DictionaryVersions } from './support/dictionary-versions';
import { listingFixtures } from './support/listing-fixtures';
import { get, odataError, startTestServer, TEST_TOKEN } from './support/http';
import { walkPages } from './support/next-links';
import { storedRecords } from './support/replication-writer';

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
  let reads: { read(): number };

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: 20 });
    await seedDemoData(server.service, { listings: 45 });
    base = server.url;
    reads = countDataReads(server);
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
    let before = reads.read();
    const counted = async () => {
      perPage.push(reads.read() - before);
      before = reads.read();
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

/**
 * Counts the data reads the service sends from now on: what `read()` answers. They go through `all`; the meter
 * applies its usage journal in its own transactions.
 */
function countDataReads(server: RunningServer): { read(): number } {
  let statements = 0;
  const database = server.service.db as unknown as { all: (sql: string, ...a: unknown[]) => Promise<unknown> };
  const original = database.all.bind(database);
  database.all = (sql: string, ...a: unknown[]) => {
    // Token lookups (cached, but the cache expires), usage statements and the webhook worker's polls are not data reads.
    if (/^\s*select/i.test(sql) && !/reso_(tokens|clients|server_settings|usage|webhooks)/.test(sql)) statements++;
    return original(sql, ...a);
  };
  return { read: () => statements };
}

/** A client's transactions by class, as the admin API reports them. */
async function usageOf(base: string, client: string): Promise<{ A: number; B: number }> {
  const r = await get(`${base.replace(/\/odata$/, '')}/admin/usage`);
  expect(r.status, r.text.slice(0, 200)).to.equal(200);
  const mine = (r.json.value as { client: string; class: 'A' | 'B'; count: number }[]).filter((u) => u.client === client);
  const sum = (c: 'A' | 'B') => mine.filter((u) => u.class === c).reduce((n, u) => n + u.count, 0);
  return { A: sum('A'), B: sum('B') };
}

/** Requests `path` (a cost each) as `client`, expecting 200, and the transactions each adds to its usage. */
async function expectCharges(base: string, client: { id: string; token: string }, cases: readonly [string, { A: number; B: number }][]): Promise<void> {
  for (const [path, cost] of cases) {
    const before = await usageOf(base, client.id);
    expect((await get(`${base}/${path}`, { Authorization: `Bearer ${client.token}` })).status, path).to.equal(200);
    expect(await usageOf(base, client.id), path).to.deep.equal({ A: before.A + cost.A, B: before.B + cost.B });
  }
}

/** A client added with this licence, and a token of it. */
async function licensedClient(server: RunningServer, spec: Parameters<RunningServer['service']['clients']['add']>[0]): Promise<{ id: string; token: string }> {
  const { client } = await server.service.clients.add(spec);
  return { id: client.id, token: await server.service.clients.issueToken(client.id, 3600) };
}

/** A response's record without its context URL: what an expansion carries of the record another URL answers. */
const withoutContext = (json: Record<string, unknown>) => Object.fromEntries(Object.entries(json).filter(([k]) => k !== '@odata.context'));

describeEachDatabase('§2 Single-valued navigations: $expand=Listing is the one listing, or null', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  let reads: { read(): number };
  /** A seeded listing, its first photo, and the tokens of the licensed clients below. */
  let listingKey: string;
  let photoKey: string;
  let priceHiding: string;
  let ownerHiding: string;
  let metered: { id: string; token: string };
  const as = (token: string) => ({ Authorization: `Bearer ${token}` });

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: 20 });
    await seedDemoData(server.service, { listings: 45 });
    base = server.url;
    const f = await listingFixtures(server.service, 'one-');
    const photo = (await storedRecords(server.service, 'Media')).find((m) => m.ResourceName === 'Property')!;
    ({ MediaKey: photoKey, ResourceRecordKey: listingKey } = photo as { MediaKey: string; ResourceRecordKey: string });
    await f.ingest('Media',
      // A member's photo under a listing's key: its Listing is none.
      { ...f.photo(listingKey, 'ONE-MEMBER'), ResourceName: 'Member' },
      // A photo whose listing the service does not hold.
      f.photo('ONE-NO-SUCH-LISTING', 'ONE-ORPHAN'),
      // A photo written before resources were named: a listing's, as a navigation path reads it.
      { ...f.photo(listingKey, 'ONE-UNNAMED'), ResourceName: null });
    priceHiding = (await licensedClient(server, { name: 'Price hiding', hiddenFields: ['ListPrice'] })).token;
    ownerHiding = (await licensedClient(server, { name: 'Owner hiding', hiddenFields: ['Media.ResourceName'] })).token;
    metered = await licensedClient(server, { name: 'Metered' });
    reads = countDataReads(server);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  describe('on a key fetch', () => {
    it('Media(key)?$expand=Listing carries the listing as Property(key) answers it, an object, named in the context URL', async () => {
      const r = await get(`${base}/Media('${photoKey}')?$expand=Listing`);
      expect(r.status, r.text.slice(0, 300)).to.equal(200);
      expect(r.headers.get('content-type')).to.equal('application/json; odata.metadata=minimal; charset=utf-8');
      expect(r.json['@odata.context']).to.equal(`${base}/$metadata#Media(Listing())/$entity`);
      const direct = await get(`${base}/Property('${listingKey}')`);
      expect(r.json.Listing).to.deep.equal(withoutContext(direct.json));
      expect(withoutContext(r.json)).to.deep.equal({ ...withoutContext((await get(`${base}/Media('${photoKey}')`)).json), Listing: r.json.Listing });
    });

    it('$select inside: Listing($select=ListingKey,ListPrice) carries those fields alone, and says so in the context URL', async () => {
      const r = await get(`${base}/Media('${photoKey}')?$select=MediaKey&$expand=Listing($select=ListingKey,ListPrice)`);
      expect(r.status, r.text.slice(0, 300)).to.equal(200);
      const price = (await get(`${base}/Property('${listingKey}')/ListPrice`)).json.value;
      expect(r.json).to.deep.equal({
        '@odata.context': `${base}/$metadata#Media(MediaKey,Listing(ListingKey,ListPrice))/$entity`,
        MediaKey: photoKey,
        Listing: { ListingKey: listingKey, ListPrice: price },
      });
    });

    it("null, never an array, when the record names no listing the client may see: a listing not held, a member's photo", async () => {
      for (const [key, listing] of [['ONE-ORPHAN', null], ['ONE-MEMBER', null], ['ONE-UNNAMED', listingKey]] as const) {
        const r = await get(`${base}/Media('${key}')?$select=MediaKey&$expand=Listing($select=ListingKey)`);
        expect(r.status, key).to.equal(200);
        expect(r.json.Listing, key).to.deep.equal(listing === null ? null : { ListingKey: listing });
        // The navigation path agrees: 204 where the expansion is null.
        expect((await get(`${base}/Media('${key}')/Listing`)).status, key).to.equal(listing === null ? 204 : 200);
      }
    });
  });

  describe('on pages', () => {
    it('every record of every page of a walk carries its listing or null, read in one statement per page', async () => {
      const listings = new Map((await walkPages(`${base}/Property?$select=ListingKey,MlsStatus`, { headers: { Prefer: 'odata.maxpagesize=1000' } }))
        .records.map((l) => [l.ListingKey, l]));
      const perPage: number[] = [];
      let before = reads.read();
      const counted = async () => {
        perPage.push(reads.read() - before);
        before = reads.read();
      };
      const walk = await walkPages(`${base}/Media?$select=MediaKey,ResourceRecordKey,ResourceName&$expand=Listing($select=ListingKey,MlsStatus)`,
        { headers: { Prefer: 'odata.maxpagesize=100' }, between: counted });
      await counted();
      expect(walk.pages.length).to.be.above(3);
      for (const page of walk.pages) expect(page.json['@odata.context']).to.match(/\/\$metadata#Media\([A-Za-z,]+,Listing\(ListingKey,MlsStatus\)\)$/);
      const media = (await walkPages(`${base}/Media?$select=MediaKey`, { headers: { Prefer: 'odata.maxpagesize=1000' } })).records;
      expect(walk.records.map((m) => m.MediaKey)).to.deep.equal(media.map((m) => m.MediaKey));
      for (const m of walk.records) {
        const owned = m.ResourceName === 'Property' || m.ResourceName === null;
        expect(m.Listing, m.MediaKey).to.deep.equal(owned ? listings.get(m.ResourceRecordKey) ?? null : null);
      }
      expect(walk.records.filter((m) => m.Listing !== null).length).to.be.above(walk.records.length - 3);
      // The page itself and one read of its listings, whatever the number of records on it.
      expect(new Set(perPage)).to.deep.equal(new Set([2]));
    });

    it('every single-valued navigation the dictionary declares expands so (OpenHouse, HistoryTransactional, PropertyRooms, PropertyUnitTypes)', async () => {
      const singles = serviceModel.entitySets.flatMap((s) => s.navigations.filter((n) => !n.collection).map((n) => ({ set: s, nav: n })));
      expect(singles.map(({ set, nav }) => `${set.name}.${nav.name}`)).to.have.members(
        ['OpenHouse.Listing', 'Media.Listing', 'HistoryTransactional.Listing', 'PropertyRooms.Listing', 'PropertyUnitTypes.Listing']);
      for (const { set, nav } of singles) {
        const link = nav.join!.referencedKey;
        const r = await get(`${base}/${set.name}?$top=10&$select=${set.key},${link}&$expand=${nav.name}($select=ListingKey)`);
        expect(r.status, `${set.name}: ${r.text.slice(0, 200)}`).to.equal(200);
        expect(r.json.value.length, set.name).to.be.above(0);
        for (const rec of r.json.value) expect(rec[nav.name], `${set.name} ${rec[set.key]}`).to.deep.equal({ ListingKey: rec[link] });
      }
    });

    it('$filter inside: the listing when it passes, null when it does not; $orderby and $top inside a single record answer 501', async () => {
      const media = (await walkPages(`${base}/Media?$select=ResourceRecordKey&$expand=Listing($select=ListingKey,MlsStatus;$filter=MlsStatus eq 'Active')`,
        { headers: { Prefer: 'odata.maxpagesize=1000' } })).records;
      const statuses = new Map((await walkPages(`${base}/Property?$select=ListingKey,MlsStatus`)).records.map((l) => [l.ListingKey, l.MlsStatus]));
      const held = media.filter((m: any) => statuses.has(m.ResourceRecordKey));
      expect(new Set(held.map((m: any) => statuses.get(m.ResourceRecordKey)))).to.include('Active').and.to.have.property('size').above(1);
      for (const m of held) {
        const active = statuses.get(m.ResourceRecordKey) === 'Active';
        expect(m.Listing).to.deep.equal(active ? { ListingKey: m.ResourceRecordKey, MlsStatus: 'Active' } : null);
      }
      for (const option of ['$orderby=ListingKey', '$top=1']) {
        const refused = await get(`${base}/Media?$expand=Listing(${option})`);
        expect(refused.status, option).to.equal(501);
        expect(odataError(refused)).to.include({ code: 'ExpandOptionNotSupported', target: 'Listing' });
      }
    });

    it('odata.metadata=full: the navigation link comes before the listing, which carries its own id and type', async () => {
      const r = await get(`${base}/Media('${photoKey}')?$select=MediaKey&$expand=Listing($select=ListingKey)`, { Accept: 'application/json;odata.metadata=full' });
      expect(r.status, r.text.slice(0, 300)).to.equal(200);
      const keys = Object.keys(r.json);
      expect(keys.indexOf('Listing@odata.navigationLink')).to.equal(keys.indexOf('Listing') - 1);
      expect(r.json['Listing@odata.navigationLink']).to.equal(`${base}/Media('${photoKey}')/Listing`);
      expect(r.json.Listing).to.include({ '@odata.type': '#org.reso.metadata.Property', '@odata.id': `${base}/Property('${listingKey}')`, ListingKey: listingKey });
    });
  });

  describe('licences and charges', () => {
    it('a hidden field stays hidden inside the listing: absent from it, and $select or $filter naming it answer as an unknown field', async () => {
      const r = await get(`${base}/Media('${photoKey}')?$expand=Listing`, as(priceHiding));
      expect(r.status).to.equal(200);
      expect(r.json.Listing.ListingKey).to.equal(listingKey);
      expect(r.json.Listing).to.not.have.property('ListPrice');
      for (const option of ['$select=ListPrice', '$filter=ListPrice gt 1']) {
        const hidden = await get(`${base}/Media?$expand=Listing(${option})`, as(priceHiding));
        const unknown = await get(`${base}/Media?$expand=Listing(${option.replace('ListPrice', 'ListPriceZq')})`, as(priceHiding));
        expect(hidden.status, option).to.equal(400);
        expect(hidden.text, option).to.equal(unknown.text.split('ListPriceZq').join('ListPrice'));
      }
    });

    it('a client from whom the field naming the listing is hidden (Media.ResourceName) gets null for every record, and 204 on the path', async () => {
      const page = await get(`${base}/Media?$top=50&$expand=Listing($select=ListingKey)&$count=true`, as(ownerHiding));
      expect(page.status).to.equal(200);
      expect(page.json.value.map((m: any) => m.Listing)).to.deep.equal(page.json.value.map(() => null));
      expect(page.json['@odata.count']).to.equal((await get(`${base}/Media/$count`)).json);
      expect((await get(`${base}/Media('${photoKey}')?$expand=Listing`, as(ownerHiding))).json.Listing).to.equal(null);
      expect((await get(`${base}/Media('${photoKey}')/Listing`, as(ownerHiding))).status).to.equal(204);
      // The same pages as for anyone else otherwise.
      const open = await get(`${base}/Media?$top=50&$select=MediaKey`);
      expect(page.json.value.map((m: any) => m.MediaKey)).to.deep.equal(open.json.value.map((m: any) => m.MediaKey));
    });

    it('charges (spec §8): Listing, which the dictionary does not charge, adds nothing to the request\'s class; Property\'s Media still adds one B', async () => {
      await expectCharges(base, metered, [
        [`Media('${photoKey}')?$expand=Listing`, { A: 1, B: 0 }],
        ['Media?$top=5&$expand=Listing', { A: 0, B: 1 }],
        ['Property?$top=1&$expand=Media', { A: 0, B: 2 }],
      ]);
    });
  });
});

/**
 * A dictionary in which a record that no listing owns names one (Member.FeaturedListing, joined by RESO's
 * `<Navigation>Key` convention, charged by Policy.ChargedExpansion): its members are visible to every client, its
 * listing only where the client's licence admits it.
 */
const FEATURED_LISTING = `<Property Name="FeaturedListingKey" Type="Edm.String" MaxLength="255"/>
        <NavigationProperty Name="FeaturedListing" Type="org.reso.metadata.Property">
          <Annotation Term="Policy.ChargedExpansion"/>
        </NavigationProperty>
      </EntityType>
      <EntityType Name="Office">`;

describeEachDatabase('§2 Single-valued navigations: the related record under the client\'s licence', (target) => {
  const versions = new DictionaryVersions();
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  let active: string;
  let deleted: string;
  let tokens: Record<'open' | 'activeOnly' | 'notDeleted', string>;
  let metered: { id: string; token: string };
  const as = (token: string) => ({ Authorization: `Bearer ${token}` });

  before(async function () {
    this.timeout(180_000);
    const v = versions.next((xml) => xml.replace('</EntityType>\n      <EntityType Name="Office">', FEATURED_LISTING));
    const member = v.model.entitySets.find((s) => s.name === 'Member')!;
    expect(member.navigations.find((n) => n.name === 'FeaturedListing')).to.deep.include({
      collection: false, join: { foreignKey: 'ListingKey', referencedKey: 'FeaturedListingKey' }, navigable: true, charged: true,
    });
    db = await target.create();
    server = await startTestServer(v.model, db.url, { pageSize: 20 });
    await seedDemoData(server.service, { listings: 30 });
    base = server.url;
    const listings = await storedRecords(server.service, 'Property');
    active = listings.find((l) => l.MlsStatus === 'Active')!.ListingKey;
    deleted = listings.find((l) => l.MlsStatus === 'Delete')!.ListingKey;
    const template = (await storedRecords(server.service, 'Member'))[0];
    const featuring = [['FEAT-ACTIVE', active], ['FEAT-DELETED', deleted], ['FEAT-MISSING', 'NO-SUCH-LISTING'], ['FEAT-NONE', null]] as const;
    const report = emptyReport();
    await ingestBatch(server.service, 'Member', featuring.map(([key, listing], i) => ({
      line: i + 1, input: { ...template, MemberKey: key, MemberMlsId: key, FeaturedListingKey: listing },
    })), report);
    expect(report.errors).to.deep.equal([]);
    tokens = {
      open: TEST_TOKEN,
      activeOnly: (await licensedClient(server, { name: 'Active only', scope: "MlsStatus eq 'Active'" })).token,
      notDeleted: (await licensedClient(server, { name: 'Not deleted', scope: "MlsStatus ne 'Delete'" })).token,
    };
    metered = await licensedClient(server, { name: 'Metered' });
  });
  after(async () => {
    await server?.close();
    await db?.drop();
    versions.remove();
  });

  const expected = (who: keyof typeof tokens): Record<string, string | null> => ({
    'FEAT-ACTIVE': active,
    // A removed listing (MlsStatus Delete, the dictionary's DeletedWhen) is there for a licence that admits it.
    'FEAT-DELETED': who === 'open' ? deleted : null,
    'FEAT-MISSING': null,
    'FEAT-NONE': null,
  });

  it('each client gets the listing its licence admits and null for any other; nothing else of the answer differs', async () => {
    const url = `${base}/Member?$filter=startswith(MemberKey,'FEAT-')&$select=MemberKey&$count=true&$expand=FeaturedListing($select=ListingKey)`;
    const answers = new Map<string, any>();
    for (const who of Object.keys(tokens) as (keyof typeof tokens)[]) {
      const r = await get(url, as(tokens[who]));
      expect(r.status, `${who}: ${r.text.slice(0, 300)}`).to.equal(200);
      const got = Object.fromEntries(r.json.value.map((m: any) => [m.MemberKey, m.FeaturedListing && m.FeaturedListing.ListingKey]));
      expect(got, who).to.deep.equal(expected(who));
      for (const m of r.json.value) if (m.FeaturedListing !== null) expect(m.FeaturedListing, who).to.deep.equal({ ListingKey: m.FeaturedListing.ListingKey });
      answers.set(who, { ...r.json, value: r.json.value.map((m: any) => m.MemberKey) });
    }
    // Counts, context and the records themselves are the same for every client: only the listings differ.
    expect(new Set([...answers.values()].map((a) => JSON.stringify(a))).size).to.equal(1);
    expect(answers.get('open')['@odata.count']).to.equal(4);
  });

  it('on a key fetch and on the path alike: null (204 on the path) where the licence does not admit the listing', async () => {
    for (const who of Object.keys(tokens) as (keyof typeof tokens)[]) {
      for (const [key, listing] of Object.entries(expected(who))) {
        const r = await get(`${base}/Member('${key}')?$select=MemberKey&$expand=FeaturedListing($select=ListingKey,MlsStatus)`, as(tokens[who]));
        expect(r.status, `${who} ${key}`).to.equal(200);
        expect(r.json.FeaturedListing?.ListingKey ?? null, `${who} ${key}`).to.equal(listing);
        const path = await get(`${base}/Member('${key}')/FeaturedListing?$select=ListingKey`, as(tokens[who]));
        expect(path.status, `${who} ${key}`).to.equal(listing === null ? 204 : 200);
      }
    }
  });

  it('a single-valued navigation the dictionary charges (Policy.ChargedExpansion) costs one class B more; $metadata offers it', async () => {
    await expectCharges(base, metered, [
      ["Member('FEAT-ACTIVE')?$expand=FeaturedListing", { A: 1, B: 1 }],
      ['Member?$top=5&$expand=FeaturedListing', { A: 0, B: 2 }],
      ['Member?$top=5', { A: 0, B: 1 }],
    ]);
    const metadata = await get(`${base}/$metadata?$format=json`);
    expect(metadata.json['org.reso.metadata'].Default.Member).to.not.have.property('@Capabilities.ExpandRestrictions');
    expect(metadata.json['org.reso.metadata'].Member.FeaturedListing).to.deep.include({ $Kind: 'NavigationProperty', $Type: 'org.reso.metadata.Property' });
  });
});
