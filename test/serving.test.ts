/**
 * Spec §1–§4 as served over HTTP: service document, metadata document, collection and key reads,
 * the Members/Offices/OpenHouses paths, RESO value formats, and the error responses of §7.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, odataError, startTestServer, testConfig } from './support/http';

const PAGE = 25;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

describeEachDatabase('Serving', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: PAGE });
    await seedDemoData(server.service, { listings: 40 });
    base = server.url;
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  describe('§4 Service document', () => {
    for (const path of ['', '/']) {
      it(`GET {base_url}${path} lists every entity set with name, kind and url`, async () => {
        const r = await get(`${base}${path}`);
        expect(r.status).to.equal(200);
        expect(r.headers.get('odata-version')).to.equal('4.01');
        expect(r.headers.get('content-type')).to.match(/^application\/json/);
        expect(r.json['@odata.context']).to.equal(`${base}/$metadata`);
        expect(r.json.value.map((v: any) => v.name)).to.have.members(serviceModel.entitySets.map((s) => s.name));
        for (const v of r.json.value) expect(v).to.deep.equal({ name: v.name, kind: 'EntitySet', url: v.name });
      });
    }
  });

  describe('§4 Metadata document', () => {
    it('is XML by default', async () => {
      const r = await get(`${base}/$metadata`);
      expect(r.status).to.equal(200);
      expect(r.headers.get('content-type')).to.match(/^application\/xml/);
      expect(r.text).to.equal(serviceModel.metadataXml);
    });
    for (const [label, query, headers] of [
      ['$format=json', '?$format=json', {}],
      ['$format=application/json', '?$format=application/json', {}],
      ['Accept: application/json', '', { accept: 'application/json' }],
    ] as const) {
      it(`is CSDL JSON for ${label}`, async () => {
        const r = await get(`${base}/$metadata${query}`, headers);
        expect(r.status).to.equal(200);
        expect(r.headers.get('content-type')).to.match(/^application\/json/);
        expect(r.json.$Version).to.equal('4.01');
        expect(r.json.$EntityContainer).to.equal('org.reso.metadata.Default');
      });
    }
    it('is XML for $format=xml and Accept: application/xml', async () => {
      expect((await get(`${base}/$metadata?$format=xml`)).headers.get('content-type')).to.match(/^application\/xml/);
      expect((await get(`${base}/$metadata`, { accept: 'application/xml' })).headers.get('content-type')).to.match(/^application\/xml/);
    });
    it('refuses an unknown $format with a 400 OData error', async () => {
      const r = await get(`${base}/$metadata?$format=atom`);
      expect(r.status).to.equal(400);
      expect(odataError(r).target).to.equal('$format');
    });
  });

  describe('§4 Query a resource set: GET {base_url}/Property', () => {
    let page: any;
    before(async () => { page = (await get(`${base}/Property`)).json; });

    it('returns a bounded page of records in value with a context URL', async () => {
      expect(page['@odata.context']).to.equal(`${base}/$metadata#Property`);
      expect(page.value).to.have.length(PAGE);
    });

    it('orders by ModificationTimestamp, then ListingKey', () => {
      const keys = page.value.map((r: any) => [r.ModificationTimestamp, r.ListingKey]);
      const sorted = [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
      expect(keys).to.deep.equal(sorted);
    });

    it('carries only fields the metadata declares, in RESO value formats', () => {
      const property = serviceModel.entitySets.find((s) => s.name === 'Property')!;
      for (const record of page.value) {
        for (const [name, value] of Object.entries(record)) {
          const f = property.fieldsByName[name];
          expect(f, `undeclared field ${name}`).to.exist;
          if (value === null) expect(f.nullable && !f.collection, `${name} is null`).to.equal(true);
          else if (f.collection) expect(value, name).to.be.an('array');
          else if (f.type === 'Edm.DateTimeOffset') expect(value, name).to.match(TIMESTAMP);
          else if (f.type === 'Edm.Date') expect(value, name).to.match(DATE);
          else if (f.type === 'Edm.Boolean') expect(value, name).to.be.a('boolean');
          else if (f.type === 'Edm.Int64' || f.type === 'Edm.Decimal') expect(value, name).to.be.a('number');
          else expect(value, name).to.be.a('string');
        }
        // Multi-value lookups are always present, [] when empty.
        for (const f of property.fields.filter((x) => x.collection)) expect(record[f.name], f.name).to.be.an('array');
      }
    });

    it('answers for the other resource sets too (Media, Lookup)', async () => {
      const media = await get(`${base}/Media`);
      expect(media.status).to.equal(200);
      expect(media.json['@odata.context']).to.equal(`${base}/$metadata#Media`);
      expect(media.json.value).to.have.length(PAGE);
      const lookup = await get(`${base}/Lookup`);
      expect(lookup.status).to.equal(200);
      expect(lookup.json.value[0]).to.have.keys('LookupKey', 'LookupName', 'LookupValue', 'StandardLookupValue', 'LegacyODataValue', 'ModificationTimestamp');
    });
  });

  describe('§4 Fetch by key: GET {base_url}/Property(\'<ListingKey>\')', () => {
    it('returns the record at top level with an entity context URL', async () => {
      const first = (await get(`${base}/Property`)).json.value[0];
      const r = await get(`${base}/Property('${encodeURIComponent(first.ListingKey)}')`);
      expect(r.status).to.equal(200);
      expect(r.json['@odata.context']).to.equal(`${base}/$metadata#Property/$entity`);
      const { ['@odata.context']: _, ...record } = r.json;
      expect(record).to.deep.equal(first);
    });

    it('accepts the named key form Property(ListingKey=\'…\')', async () => {
      const first = (await get(`${base}/Property`)).json.value[0];
      const r = await get(`${base}/Property(ListingKey='${first.ListingKey}')`);
      expect(r.status).to.equal(200);
      expect(r.json.ListingKey).to.equal(first.ListingKey);
    });

    it('answers 404 with an OData error body for an absent key', async () => {
      const r = await get(`${base}/Property('no-such-listing')`);
      expect(r.status).to.equal(404);
      expect(r.headers.get('odata-version')).to.equal('4.01');
      const e = odataError(r);
      expect(e.code).to.equal('RecordNotFound');
      expect(e.message).to.include('no-such-listing');
      expect(e.target).to.equal('ListingKey');
    });

    it('answers 404, not a match, for a key that differs only in case', async () => {
      const first = (await get(`${base}/Property`)).json.value[0];
      const r = await get(`${base}/Property('${first.ListingKey.toLowerCase()}')`);
      if (first.ListingKey.toLowerCase() !== first.ListingKey) expect(r.status).to.equal(404);
    });

    it('answers 400 for a key that is not a string literal', async () => {
      for (const bad of ['Property(abc)', "Property('abc)", "Property(Foo='x')"]) {
        const r = await get(`${base}/${bad}`);
        expect(r.status, bad).to.equal(400);
        odataError(r);
      }
    });

    it('reads a doubled quote inside the key as one quote', async () => {
      const r = await get(`${base}/Property('O''Brien')`);
      expect(r.status).to.equal(404);
      expect(odataError(r).message).to.include("O'Brien");
    });
  });

  describe('§2 Members, Offices, OpenHouses answer as the standard sets', () => {
    for (const [alias, set] of [['Members', 'Member'], ['Offices', 'Office'], ['OpenHouses', 'OpenHouse']]) {
      it(`GET {base_url}/${alias} equals GET {base_url}/${set}`, async () => {
        const a = await get(`${base}/${alias}`);
        const b = await get(`${base}/${set}`);
        expect(a.status).to.equal(200);
        // Same records and context; a nextLink keeps the path the client used.
        expect(a.json.value).to.deep.equal(b.json.value);
        expect(a.json['@odata.nextLink'] ?? '').to.include(`/odata/${alias}?`.slice(0, a.json['@odata.nextLink'] ? undefined : 0));
        expect(a.json['@odata.context']).to.equal(`${base}/$metadata#${set}`);
        expect(a.json.value.length).to.be.greaterThan(0);
        const key = serviceModel.entitySets.find((s) => s.name === set)!.key;
        const one = await get(`${base}/${alias}('${a.json.value[0][key]}')`);
        expect(one.status).to.equal(200);
        expect(one.json[key]).to.equal(a.json.value[0][key]);
      });
    }
    it('the aliases are not advertised in the service document', async () => {
      const names = (await get(`${base}/`)).json.value.map((v: any) => v.name);
      expect(names).not.to.include.members(['Members']);
      expect(names).not.to.include('Offices');
      expect(names).not.to.include('OpenHouses');
    });
  });

  describe('§7 Errors', () => {
    it('unknown paths answer 404 with an OData error body and OData-Version', async () => {
      for (const url of [`${base}/NoSuchSet`, `${base}/property`, `${base.replace('/odata', '')}/elsewhere`]) {
        const r = await get(url);
        expect(r.status, url).to.equal(404);
        expect(r.headers.get('odata-version')).to.equal('4.01');
        expect(odataError(r).code).to.equal('ResourceNotFound');
      }
    });
    it("a set answers by its whole name only: a prefix, a longer name or a name run into a segment's text is no path", async () => {
      for (const url of [`${base}/Propert`, `${base}/PropertyX`, `${base}/PropertyX('a')`, `${base}/Property$count`, `${base}/Memberss/$count`]) {
        const r = await get(url);
        expect(r.status, url).to.equal(404);
        expect(odataError(r).code, url).to.equal('ResourceNotFound');
      }
      expect((await get(`${base}/Property/`)).status, 'a trailing slash').to.equal(200);
      expect((await get(`${base}/Members/$count`)).text, 'an alias').to.equal((await get(`${base}/Member/$count`)).text);
    });
    it('$skip answers 501 and says to follow @odata.nextLink', async () => {
      const r = await get(`${base}/Property?$skip=10`);
      expect(r.status).to.equal(501);
      const e = odataError(r);
      expect(e.target).to.equal('$skip');
      expect(e.message).to.include('@odata.nextLink');
    });
    it('an unknown system query option answers 400', async () => {
      const r = await get(`${base}/Property?$frobnicate=1`);
      expect(r.status).to.equal(400);
      expect(odataError(r).target).to.equal('$frobnicate');
    });
    it('a repeated query option answers 400', async () => {
      const r = await get(`${base}/Property?$format=json&$format=json`);
      expect(r.status).to.equal(400);
      odataError(r);
    });
    it('writes answer 405: the service is read-only', async () => {
      const res = await fetch(`${base}/Property`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(res.status).to.equal(405);
      expect(res.headers.get('allow')).to.equal('GET, HEAD');
      expect(((await res.json()) as any).error.code).to.equal('MethodNotAllowed');
    });
    it('malformed percent-encoding answers 400, not 500', async () => {
      const r = await get(`${base}/Property('%E0%A4%A')`);
      expect(r.status).to.equal(400);
      odataError(r);
    });
    it('answers OData-Version 4.0 to a client whose OData-MaxVersion is 4.0', async () => {
      const r = await get(`${base}/`, { 'OData-MaxVersion': '4.0' });
      expect(r.headers.get('odata-version')).to.equal('4.0');
    });
  });
});

describeEachDatabase('Startup', (target) => {
  let db: TestDatabase;
  after(async () => { await db?.drop(); });

  it('seeds an empty database once, and a second start reuses the data', async function () {
    this.timeout(120_000);
    db = await target.create();
    const { startServer } = await import('../src/process/server');
    const config = testConfig(db.url, { seedListings: 12 });
    const first = await startServer(serviceModel, config);
    const before = (await get(`${first.url}/Property`)).json.value;
    await first.close();
    expect(before.length).to.be.greaterThan(0).and.at.most(12);
    const second = await startServer(serviceModel, config);
    try {
      expect((await get(`${second.url}/Property`)).json.value).to.deep.equal(before);
      expect(await second.service.store('Property').count()).to.equal(12);
    } finally {
      await second.close();
    }
  });
});
