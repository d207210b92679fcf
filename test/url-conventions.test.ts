/**
 * OData 4.01 URL Conventions below one record, as generated clients call them (odata2ts offers each collection
 * property and navigation as a service of its own): a property (§4.6), its raw value (§4.7, `$value`), `$count` of a
 * collection property and of a navigation (§4.8), and the one record a single-valued navigation leads to (§4.4,
 * `Media('<key>')/Listing`), in JSON Format 4.01's shapes (§7 a property's value, §10 context URLs). Each answers 200,
 * 204 for a null value or a navigation that leads to no record, and never 404 for a name the set has; licences hold
 * (a hidden field answers as an unknown one, a record outside the scope as a missing one), transactions are
 * metered (spec §8: one record by key is class A, a navigation's count class B), ETags revalidate.
 * Also `$top` up to MAX_PAGE_SIZE in one page (docs/replication.md "Paging and replication").
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import type { RunningServer } from '../src/process/server';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, odataError, startTestServer, TEST_TOKEN } from './support/http';
import { walkPages } from './support/next-links';

const LISTINGS = [
  {
    ListingKey: 'UC1', ModificationTimestamp: '2026-01-01T00:00:00Z', MlsStatus: 'Active', City: 'Austin', ListPrice: 450000.5,
    BedroomsTotal: 3, NewConstructionYN: true, ListingContractDate: '2026-02-03', Appliances: ['Dishwasher', 'Refrigerator'],
    PrivateRemarks: "Owner's note",
  },
  { ListingKey: 'UC2', ModificationTimestamp: '2026-01-01T00:00:00Z', MlsStatus: 'Active' },
  { ListingKey: 'UC3', ModificationTimestamp: '2026-01-01T00:00:00Z', MlsStatus: 'Closed', City: 'Dallas' },
];
const media = (key: string, resourceName: string, recordKey: string) =>
  ({ MediaKey: key, ModificationTimestamp: '2026-01-01T00:00:00Z', ResourceName: resourceName, ResourceRecordKey: recordKey });
const MEDIA = [
  media('UC1-M1', 'Property', 'UC1'), media('UC1-M2', 'Property', 'UC1'), media('UC1-M3', 'Property', 'UC1'),
  media('UC3-M1', 'Property', 'UC3'),
  // A member's photo: its Listing navigation leads to no listing.
  media('MB1-M1', 'Member', 'UC1'),
  // A photo ingested before its listing: no listing's yet.
  media('UC9-M1', 'Property', 'UC9'),
];

describeEachDatabase('URL conventions below a record: properties, $value, $count, single-valued navigations', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  let scopedToken: string;
  let hidingToken: string;
  let meteredToken: string;
  let meteredId: string;

  const as = (token: string) => ({ Authorization: `Bearer ${token}` });

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: 10, maxPageSize: 40 });
    base = server.url;
    for (const [set, records] of [['Property', LISTINGS], ['Media', MEDIA]] as const) {
      const report = emptyReport();
      await ingestBatch(server.service, set, records.map((input, i) => ({ line: i + 1, input })), report);
      expect(report.errors, set).to.deep.equal([]);
    }
    const token = async (spec: Parameters<RunningServer['service']['clients']['add']>[0]) => {
      const { client } = await server.service.clients.add(spec);
      return { id: client.id, token: await server.service.clients.issueToken(client.id, 3600) };
    };
    scopedToken = (await token({ name: 'Active only', scope: "MlsStatus eq 'Active'" })).token;
    hidingToken = (await token({ name: 'Hiding', hiddenFields: ['City', 'Appliances', 'Media.ShortDescription'] })).token;
    ({ id: meteredId, token: meteredToken } = await token({ name: 'Metered' }));
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  describe('§4.6 a property', () => {
    it('a single value: {"@odata.context": "…#Set(key)/Property", "value": …}, with an ETag that revalidates', async () => {
      const r = await get(`${base}/Property('UC1')/City`);
      expect(r.status).to.equal(200);
      expect(r.headers.get('content-type')).to.equal('application/json; odata.metadata=minimal; charset=utf-8');
      expect(r.json).to.deep.equal({ '@odata.context': `${base}/$metadata#Property('UC1')/City`, value: 'Austin' });
      const again = await get(`${base}/Property('UC1')/City`, { 'If-None-Match': r.headers.get('etag')! });
      expect(again.status).to.equal(304);
      expect((await get(`${base}/Property('UC1')/ListPrice`)).json.value).to.equal(450000.5);
      expect((await get(`${base}/Property('UC1')/ListPrice`, { Accept: 'application/json;IEEE754Compatible=true' })).json.value).to.equal('450000.5');
      expect((await get(`${base}/Property('UC1')/NewConstructionYN`)).json.value).to.equal(true);
      expect((await get(`${base}/Property('UC1')/BedroomsTotal`, { Accept: 'application/json;odata.metadata=none' })).json).to.deep.equal({ value: 3 });
    });

    it('a collection: its items in "value"; empty when the record has none', async () => {
      const r = await get(`${base}/Property('UC1')/Appliances`);
      expect(r.status).to.equal(200);
      expect(r.json).to.deep.equal({ '@odata.context': `${base}/$metadata#Property('UC1')/Appliances`, value: ['Dishwasher', 'Refrigerator'] });
      expect((await get(`${base}/Property('UC2')/Appliances`)).json.value).to.deep.equal([]);
    });

    it('null → 204 No Content; a restricted field is read as any other (only filtering and ordering on it are refused)', async () => {
      const r = await get(`${base}/Property('UC2')/City`);
      expect(r.status).to.equal(204);
      expect(r.text).to.equal('');
      expect((await get(`${base}/Property('UC1')/PrivateRemarks`)).json.value).to.equal("Owner's note");
    });

    it('a name the set does not have → 404 PropertyNotFound; a missing record → 404 RecordNotFound; HEAD answers as GET', async () => {
      const r = await get(`${base}/Property('UC1')/Nope`);
      expect(r.status).to.equal(404);
      expect(odataError(r)).to.include({ code: 'PropertyNotFound', target: 'Nope' });
      expect(odataError(await get(`${base}/Property('NOPE')/City`))).to.include({ code: 'RecordNotFound' });
      const head = await fetch(`${base}/Property('UC1')/City`, { method: 'HEAD', headers: as(TEST_TOKEN) });
      expect(head.status).to.equal(200);
      expect(head.headers.get('etag')).to.be.a('string');
    });

    it('query options that do not apply to a value → 400 OptionNotApplicable', async () => {
      for (const q of ['$select=City', '$expand=Media', '$filter=City eq null', '$top=1']) {
        const r = await get(`${base}/Property('UC1')/City?${q}`);
        expect(r.status, q).to.equal(400);
        expect(odataError(r).code, q).to.equal('OptionNotApplicable');
      }
    });
  });

  describe('§4.7 a raw value: $value', () => {
    it('as text/plain: strings, numbers, booleans, dates as their literals', async () => {
      for (const [field, text] of [['ListingKey', 'UC1'], ['City', 'Austin'], ['ListPrice', '450000.5'], ['BedroomsTotal', '3'],
        ['NewConstructionYN', 'true'], ['ListingContractDate', '2026-02-03']]) {
        const r = await get(`${base}/Property('UC1')/${field}/$value`);
        expect(r.status, field).to.equal(200);
        expect(r.headers.get('content-type'), field).to.equal('text/plain; charset=utf-8');
        expect(r.text, field).to.equal(text);
      }
    });

    it('null → 204; a collection or a navigation has no raw value → 400', async () => {
      expect((await get(`${base}/Property('UC2')/City/$value`)).status).to.equal(204);
      for (const path of ['Appliances/$value', 'Media/$value']) {
        const r = await get(`${base}/Property('UC1')/${path}`);
        expect(r.status, path).to.equal(400);
        expect(odataError(r).code, path).to.equal('OptionNotApplicable');
      }
    });
  });

  describe('§4.8 $count of a collection and of a navigation', () => {
    it("a navigation's $count: the related records the path walks (and its $filter), as text/plain", async () => {
      const r = await get(`${base}/Property('UC1')/Media/$count`);
      expect(r.status).to.equal(200);
      expect(r.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
      const walked = await get(`${base}/Property('UC1')/Media`);
      expect(Number(r.text)).to.equal(walked.json.value.length).and.to.equal(3);
      expect((await get(`${base}/Property('UC1')/Media/$count?$filter=MediaKey eq 'UC1-M2'`)).text).to.equal('1');
      expect((await get(`${base}/Property('UC2')/Media/$count`)).text).to.equal('0');
    });

    it("a collection property's $count: its items; a single value or a single-valued navigation → 400", async () => {
      expect((await get(`${base}/Property('UC1')/Appliances/$count`)).text).to.equal('2');
      for (const path of ["Property('UC1')/City/$count", "Media('UC1-M1')/Listing/$count"]) {
        const r = await get(`${base}/${path}`);
        expect(r.status, path).to.equal(400);
        expect(odataError(r).code, path).to.equal('OptionNotApplicable');
      }
    });
  });

  describe('§4.4 a single-valued navigation: Media(key)/Listing', () => {
    it('the listing, as Property(key) answers it ($select, context URL, ETag); every single-valued navigation answers', async () => {
      const r = await get(`${base}/Media('UC1-M1')/Listing`);
      expect(r.status).to.equal(200);
      const direct = await get(`${base}/Property('UC1')`);
      expect(r.json).to.deep.equal(direct.json);
      expect(r.headers.get('etag')).to.equal(direct.headers.get('etag'));
      const selected = await get(`${base}/Media('UC1-M1')/Listing?$select=ListingKey,City`);
      expect(selected.json).to.deep.equal({ '@odata.context': `${base}/$metadata#Property(ListingKey,City)/$entity`, ListingKey: 'UC1', City: 'Austin' });
      for (const set of serviceModel.entitySets) {
        for (const nav of set.navigations.filter((n) => !n.collection)) expect(nav.navigable, `${set.name}/${nav.name}`).to.equal(true);
      }
    });

    it("204 No Content when it leads to no listing: a member's photo, a photo whose listing is not held", async () => {
      for (const key of ['MB1-M1', 'UC9-M1']) {
        const r = await get(`${base}/Media('${key}')/Listing`);
        expect(r.status, key).to.equal(204);
      }
    });
  });

  describe('licences', () => {
    it('outside the scope is absent: the record, its properties, its navigations and their counts → 404 RecordNotFound', async () => {
      for (const path of ["Property('UC3')/City", "Property('UC3')/City/$value", "Property('UC3')/Media/$count", "Media('UC3-M1')/Listing"]) {
        const r = await get(`${base}/${path}`, as(scopedToken));
        expect(r.status, path).to.equal(404);
        expect(odataError(r).code, path).to.equal('RecordNotFound');
      }
      expect((await get(`${base}/Property('UC1')/Media/$count`, as(scopedToken))).text).to.equal('3');
      expect((await get(`${base}/Media('UC1-M1')/Listing`, as(scopedToken))).json.ListingKey).to.equal('UC1');
    });

    it('hidden means hidden: a hidden field answers exactly as one the set does not have (404 PropertyNotFound), whatever the record', async () => {
      for (const [path, name] of [["Property('UC1')/", 'City'], ["Property('UC1')/", 'Appliances'], ["Property('NOPE')/", 'City'],
        ["Media('UC1-M1')/", 'ShortDescription']] as const) {
        for (const suffix of ['', '/$value', '/$count']) {
          const hidden = await get(`${base}/${path}${name}${suffix}`, as(hidingToken));
          const unknown = await get(`${base}/${path}${name}Zq${suffix}`, as(hidingToken));
          expect(hidden.status, `${path}${name}${suffix}`).to.equal(404);
          expect(odataError(hidden).code).to.equal('PropertyNotFound');
          expect(hidden.text, `${path}${name}${suffix}`).to.equal(unknown.text.split(`${name}Zq`).join(name));
        }
      }
      expect((await get(`${base}/Property('UC1')/ListingKey/$value`, as(hidingToken))).text).to.equal('UC1');
    });
  });

  it('metering (spec §8): a property, $value, a collection\'s $count and a single-valued navigation are class A; a navigation\'s $count class B', async () => {
    const usage = async () => {
      const r = await get(`${base.replace(/\/odata$/, '')}/admin/usage`);
      const mine = (r.json.value as { client: string; class: 'A' | 'B'; count: number }[]).filter((u) => u.client === meteredId);
      return { A: mine.filter((u) => u.class === 'A').reduce((n, u) => n + u.count, 0), B: mine.filter((u) => u.class === 'B').reduce((n, u) => n + u.count, 0) };
    };
    const before = await usage();
    for (const path of ["Property('UC1')/City", "Property('UC1')/City/$value", "Property('UC1')/Appliances/$count", "Media('UC1-M1')/Listing", "Media('MB1-M1')/Listing"]) {
      expect((await get(`${base}/${path}`, as(meteredToken))).status, path).to.be.oneOf([200, 204]);
    }
    expect((await get(`${base}/Property('UC1')/Media/$count`, as(meteredToken))).status).to.equal(200);
    expect(await usage()).to.deep.equal({ A: before.A + 5, B: before.B + 1 });
  });
});

describeEachDatabase('$top up to MAX_PAGE_SIZE in one page (docs/replication.md "Paging and replication")', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  const KEYS = Array.from({ length: 60 }, (_, i) => `TP${String(i).padStart(3, '0')}`);

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    // PAGE_SIZE 10, MAX_PAGE_SIZE 40.
    server = await startTestServer(serviceModel, db.url, { pageSize: 10, maxPageSize: 40 });
    const report = emptyReport();
    await ingestBatch(server.service, 'Property', KEYS.map((ListingKey, i) => ({ line: i + 1, input: { ListingKey, ModificationTimestamp: '2026-01-01T00:00:00Z' } })), report);
    expect(report.errors).to.deep.equal([]);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  async function walk(url: string, headers: Record<string, string> = {}): Promise<{ sizes: number[]; keys: string[] }> {
    const { pages, records } = await walkPages(url, { headers, maxPages: 20 });
    return { sizes: pages.map((p) => p.json.value.length), keys: records.map((v) => v.ListingKey as string) };
  }

  it('$top=25 (more than PAGE_SIZE, within MAX_PAGE_SIZE): 25 records in one response, no nextLink', async () => {
    expect(await walk(`${server.url}/Property?$top=25&$orderby=ListingKey&$select=ListingKey`)).to.deep.equal({ sizes: [25], keys: KEYS.slice(0, 25) });
  });

  it('$top=50 (more than MAX_PAGE_SIZE): a page of MAX_PAGE_SIZE, then the rest by nextLink; $top stays the total', async () => {
    expect(await walk(`${server.url}/Property?$top=50&$orderby=ListingKey&$select=ListingKey`)).to.deep.equal({ sizes: [40, 10], keys: KEYS.slice(0, 50) });
  });

  it('odata.maxpagesize asks for smaller pages and wins; no $top: PAGE_SIZE pages to the end', async () => {
    expect((await walk(`${server.url}/Property?$top=25&$orderby=ListingKey&$select=ListingKey`, { Prefer: 'odata.maxpagesize=10' })).sizes).to.deep.equal([10, 10, 5]);
    const all = await walk(`${server.url}/Property?$orderby=ListingKey&$select=ListingKey`);
    expect(all).to.deep.equal({ sizes: [10, 10, 10, 10, 10, 10], keys: KEYS });
  });
});
