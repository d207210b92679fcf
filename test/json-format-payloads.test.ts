/**
 * OData JSON Format 4.01 payloads as the client negotiates them: a full entity carries every property it may
 * see, nulls as null (§4.5, §17), unless it prefers `omit-values=nulls` (Protocol §8.2.8.6); `metadata=full`
 * writes each entity's control information (§3.1.2, §4.5); `IEEE754Compatible=true` writes Int64 and Decimal
 * values, and the count, as strings (§3.2); a 4.0 client gets 4.0 forms (§4.5, Protocol §10.10).
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { EntitySetSpec } from '../src/model/service-model';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { RECORD_SHAPE } from '../src/storage/migrations/record-migration';
import { PREPARED_FOR } from '../src/process/startup';
import { withoutNulls } from '../src/storage/records/record-codec';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';
import { walkPages } from './support/next-links';

const set = (name: string): EntitySetSpec => serviceModel.entitySets.find((s) => s.name === name)!;
const PROPERTY = set('Property');
const MEDIA = set('Media');
const fieldNames = (s: EntitySetSpec) => s.fields.map((f) => f.name);
const dataKeys = (o: object) => Object.keys(o).filter((k) => !k.includes('@'));
const nulls = (o: Record<string, unknown>) => Object.keys(o).filter((k) => o[k] === null);
const FULL = 'application/json;odata.metadata=full';

describeEachDatabase('JSON format: payloads', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let key: string;
  let base: string;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageBatchSize: 2 });
    await seedDemoData(server.service, { listings: 8 });
    base = server.url;
    key = (await get(`${base}/Property?$top=1&$expand=Media`)).json.value[0].ListingKey;
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  describe('§4.5, §17: a full entity has every property, a null one as null', () => {
    it('a record by key: every field of the set, in dictionary order, some of them null', async () => {
      const r = await get(`${base}/Property('${key}')`);
      expect(r.status).to.equal(200);
      expect(dataKeys(r.json)).to.deep.equal(fieldNames(PROPERTY));
      expect(nulls(r.json).length).to.be.greaterThan(0);
      expect(r.headers.get('preference-applied')).to.equal(null);
    });

    it('a page (written in parts), and the records it expands', async () => {
      const r = await get(`${base}/Property?$expand=Media`, { Prefer: 'odata.maxpagesize=5' });
      expect(r.status).to.equal(200);
      expect(r.json.value).to.have.length(5);
      for (const rec of r.json.value) {
        expect(dataKeys(rec)).to.deep.equal([...fieldNames(PROPERTY), 'Media']);
        for (const m of rec.Media) expect(dataKeys(m)).to.deep.equal(fieldNames(MEDIA));
      }
      expect(r.headers.get('preference-applied')).to.equal('odata.maxpagesize=5');
    });

    it('a hidden field stays absent, never a null that tells it exists, and the client\'s $metadata agrees', async () => {
      const hidden = PROPERTY.fields.find((f) => f.nullable && f.name !== PROPERTY.key && !f.restricted)!.name;
      await server.service.clients.register({ id: 'hides-one', name: 'hides one', hiddenFields: [hidden] });
      const token = await server.service.clients.issueToken('hides-one', 3600);
      const auth = { Authorization: `Bearer ${token}` };
      const r = await get(`${base}/Property('${key}')`, auth);
      expect(r.status).to.equal(200);
      expect(dataKeys(r.json)).to.deep.equal(fieldNames(PROPERTY).filter((n) => n !== hidden));
      const page = await get(`${base}/Property?$top=3`, auth);
      for (const rec of page.json.value) expect(rec).to.not.have.property(hidden);
      const metadata = await get(`${base}/$metadata`, auth);
      expect(metadata.text).to.not.contain(`Name="${hidden}"`);
      expect(metadata.text).to.contain(`Name="${fieldNames(PROPERTY).find((n) => n !== hidden && n !== PROPERTY.key)}"`);
    });

    it('$select gives the selected properties, null ones as null', async () => {
      const r = await get(`${base}/Property('${key}')?$select=ListingKey,ModificationTimestamp`);
      expect(dataKeys(r.json)).to.deep.equal(['ListingKey', 'ModificationTimestamp']);
    });
  });

  describe('Prefer: omit-values=nulls (Protocol §8.2.8.6)', () => {
    it('leaves null properties out of records and expansions, and says so in Preference-Applied', async () => {
      const full = await get(`${base}/Property('${key}')?$expand=Media`);
      const r = await get(`${base}/Property('${key}')?$expand=Media`, { Prefer: 'omit-values=nulls' });
      expect(r.status).to.equal(200);
      expect(r.headers.get('preference-applied')).to.equal('omit-values=nulls');
      const withoutNulls = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));
      expect(r.json).to.deep.equal({ ...withoutNulls(full.json), Media: full.json.Media.map(withoutNulls) });
      expect(nulls(r.json)).to.deep.equal([]);
    });

    it('combines with odata.maxpagesize in Preference-Applied, on every page', async () => {
      const prefer = { Prefer: 'odata.maxpagesize=3, omit-values=nulls' };
      const { pages, records } = await walkPages(`${base}/Property`, { headers: prefer });
      for (const r of pages) expect(r.headers.get('preference-applied')).to.equal('odata.maxpagesize=3, omit-values=nulls');
      for (const rec of records) expect(nulls(rec)).to.deep.equal([]);
      expect(pages).to.have.length(3);
    });
  });

  describe('§3.1.2 metadata=full: each entity\'s control information', () => {
    it('type, id and readLink (read-only: no editLink), property types, links to the navigations the service follows', async () => {
      const r = await get(`${base}/Property?$top=2`, { Accept: FULL });
      expect(r.status).to.equal(200);
      expect(r.headers.get('content-type')).to.equal('application/json; odata.metadata=full; charset=utf-8');
      for (const rec of r.json.value) {
        const url = `${base}/Property('${rec.ListingKey}')`;
        expect(rec).to.include({ '@odata.type': '#org.reso.metadata.Property', '@odata.id': url, '@odata.readLink': url });
        expect(Object.keys(rec).slice(0, 3)).to.deep.equal(['@odata.type', '@odata.id', '@odata.readLink']);
        expect(rec).to.not.have.property('@odata.editLink');
        expect(rec['ModificationTimestamp@odata.type']).to.equal('DateTimeOffset');
        expect(rec).to.not.have.property('ListingKey@odata.type');
        const links = Object.keys(rec).filter((k) => k.endsWith('@odata.navigationLink'));
        expect(links).to.deep.equal(PROPERTY.navigations.filter((n) => n.followable).map((n) => `${n.name}@odata.navigationLink`));
        expect(dataKeys(rec)).to.deep.equal(fieldNames(PROPERTY));
      }
    });

    it('its links lead where they say: the id and a navigation link answer 200', async () => {
      const rec = (await get(`${base}/Property('${key}')`, { Accept: FULL })).json;
      const self = await get(rec['@odata.id']);
      expect(self.status).to.equal(200);
      expect(self.json.ListingKey).to.equal(key);
      const media = await get(rec['Media@odata.navigationLink']);
      expect(media.status).to.equal(200);
      expect(media.json.value.length).to.be.greaterThan(0);
    });

    it('expanded entities carry their own, with a link for the single-valued navigation the service follows (Media\'s Listing)', async () => {
      const r = await get(`${base}/Property('${key}')?$expand=Media`, { Accept: FULL });
      expect(r.json['Media@odata.navigationLink']).to.equal(`${base}/Property('${key}')/Media`);
      const keys = Object.keys(r.json);
      expect(keys.indexOf('Media@odata.navigationLink')).to.equal(keys.indexOf('Media') - 1);
      expect(r.json.Media.length).to.be.greaterThan(0);
      for (const m of r.json.Media) {
        expect(m['@odata.type']).to.equal('#org.reso.metadata.Media');
        expect(m['@odata.id']).to.equal(`${base}/Media('${m.MediaKey}')`);
        expect(Object.keys(m).filter((k) => k.endsWith('@odata.navigationLink'))).to.deep.equal(['Listing@odata.navigationLink']);
        expect(m['Listing@odata.navigationLink']).to.equal(`${base}/Media('${m.MediaKey}')/Listing`);
        const listing = await get(m['Listing@odata.navigationLink']);
        expect(listing.status).to.equal(200);
        expect(listing.json.ListingKey).to.equal(key);
      }
    });

    it('a 4.0 client gets 4.0 primitive type names (#DateTimeOffset)', async () => {
      const r = await get(`${base}/Property('${key}')`, { Accept: FULL, 'OData-MaxVersion': '4.0' });
      expect(r.headers.get('odata-version')).to.equal('4.0');
      expect(r.json['ModificationTimestamp@odata.type']).to.equal('#DateTimeOffset');
      expect(r.json['@odata.type']).to.equal('#org.reso.metadata.Property');
    });

    it('metadata=full (without the odata. prefix) and omit-values=nulls together', async () => {
      const r = await get(`${base}/Property('${key}')`, { Accept: 'application/json;metadata=full', Prefer: 'omit-values=nulls' });
      expect(r.headers.get('content-type')).to.equal('application/json; odata.metadata=full; charset=utf-8');
      expect(r.headers.get('preference-applied')).to.equal('omit-values=nulls');
      expect(nulls(r.json)).to.deep.equal([]);
      for (const k of Object.keys(r.json).filter((k) => k.endsWith('@odata.type') && k !== '@odata.type')) {
        expect(r.json, k).to.have.property(k.slice(0, -'@odata.type'.length));
      }
    });
  });

  describe('§3.2 IEEE754Compatible=true: Int64 and Decimal as strings', () => {
    const sensitive = PROPERTY.fields.filter((f) => f.type === 'Edm.Int64' || f.type === 'Edm.Decimal').map((f) => f.name);

    for (const how of ['Accept', '$format'] as const) {
      it(`in ${how}: values and the count as strings, echoed in the Content-Type; everything else unchanged`, async () => {
        const media = 'application/json;IEEE754Compatible=true';
        const url = `${base}/Property?$top=4&$count=true${how === '$format' ? `&$format=${encodeURIComponent(media)}` : ''}`;
        const plain = await get(`${base}/Property?$top=4&$count=true`);
        const r = await get(url, how === 'Accept' ? { Accept: media } : {});
        expect(r.status).to.equal(200);
        expect(r.headers.get('content-type')).to.equal('application/json; odata.metadata=minimal; IEEE754Compatible=true; charset=utf-8');
        expect(r.json['@odata.count']).to.equal(String(plain.json['@odata.count']));
        let seen = 0;
        r.json.value.forEach((rec: Record<string, unknown>, i: number) => {
          const before = plain.json.value[i];
          for (const [k, v] of Object.entries(rec)) {
            if (sensitive.includes(k) && before[k] !== null) {
              expect(v, k).to.be.a('string');
              expect(Number(v), k).to.equal(before[k]);
              seen++;
            } else {
              expect(v, k).to.deep.equal(before[k]);
            }
          }
        });
        expect(seen).to.be.greaterThan(0);
      });
    }

    it('without it, numbers stay numbers', async () => {
      const r = await get(`${base}/Property('${key}')`, { Accept: 'application/json;IEEE754Compatible=false' });
      expect(r.headers.get('content-type')).to.equal('application/json; odata.metadata=minimal; charset=utf-8');
      for (const k of sensitive) if (r.json[k] !== null) expect(r.json[k], k).to.be.a('number');
    });
  });

  describe('OData-MaxVersion: 4.0 gets 4.0 forms', () => {
    const cases = [
      ['$expand=Media', '#Property(Media())', '#Property'],
      ['$select=ListingKey&$expand=Media', '#Property(ListingKey,Media())', '#Property(ListingKey)'],
      ['$expand=Media($select=MediaKey)', '#Property(Media(MediaKey))', '#Property(Media(MediaKey))'],
    ] as const;
    for (const [query, v401, v40] of cases) {
      it(`${query}: context URL ${v401} in 4.01, ${v40} in 4.0 (no empty parentheses)`, async () => {
        const r401 = await get(`${base}/Property?$top=1&${query}`);
        const r40 = await get(`${base}/Property?$top=1&${query}`, { 'OData-MaxVersion': '4.0' });
        expect(r401.json['@odata.context']).to.equal(`${base}/$metadata${v401}`);
        expect(r40.headers.get('odata-version')).to.equal('4.0');
        expect(r40.json['@odata.context']).to.equal(`${base}/$metadata${v40}`);
        const e40 = await get(`${base}/Property('${key}')?${query}`, { 'OData-MaxVersion': '4.0' });
        expect(e40.json['@odata.context']).to.equal(`${base}/$metadata${v40}/$entity`);
      });
    }

    it('$metadata in XML declares Version="4.01" only to a client that asks for 4.01; "4.0" otherwise, as a saved EDMX is read', async () => {
      const r40 = await get(`${base}/$metadata`, { 'OData-MaxVersion': '4.0' });
      expect(r40.headers.get('odata-version')).to.equal('4.0');
      expect(r40.text).to.contain('<edmx:Edmx Version="4.0" ');
      const unasked = await get(`${base}/$metadata`);
      expect(unasked.headers.get('odata-version'), 'the protocol version the service speaks, which 4.01 clients check').to.equal('4.01');
      expect(unasked.text).to.contain('<edmx:Edmx Version="4.0" ');
      for (const max of ['4.01', '4.02', '5.0']) expect((await get(`${base}/$metadata`, { 'OData-MaxVersion': max })).text).to.contain('<edmx:Edmx Version="4.01" ');
      expect((await get(`${base}/$metadata`, { 'OData-Version': '4.01' })).text, 'a request written in 4.01').to.contain('<edmx:Edmx Version="4.01" ');
      expect((await get(`${base}/$metadata`, { 'OData-Version': '4.0' })).text).to.contain('<edmx:Edmx Version="4.0" ');
      expect((await get(`${base}/$metadata`, { 'OData-Version': '4.01', 'OData-MaxVersion': '4.0' })).text).to.contain('<edmx:Edmx Version="4.0" ');
    });

    it('control information keeps its odata. prefix and the Content-Type its odata.metadata, for 4.0 and 4.01 alike', async () => {
      for (const max of ['4.0', '4.01']) {
        const r = await get(`${base}/Property?$count=true`, { 'OData-MaxVersion': max, Prefer: 'odata.maxpagesize=2' });
        expect(Object.keys(r.json)).to.deep.equal(['@odata.context', '@odata.count', 'value', '@odata.nextLink']);
        expect(r.headers.get('content-type')).to.equal('application/json; odata.metadata=minimal; charset=utf-8');
      }
    });
  });

  describe('a database written before nulls were stored', () => {
    it('has its records rewritten with every field at start-up, their timestamps kept', async function () {
      this.timeout(120_000);
      const old = await target.create();
      const servers: RunningServer[] = [];
      try {
        const first = await startTestServer(serviceModel, old.url);
        servers.push(first);
        await seedDemoData(first.service, { listings: 3 });
        const one = (await get(`${first.url}/Property?$top=1`)).json.value[0].ListingKey;
        const before = (await get(`${first.url}/Property('${one}')`)).json;
        // As the previous version stored it: the record's text without its null fields, and no record-fields mark.
        const store = first.service.store(PROPERTY);
        const encoded = store.encode(Object.fromEntries(Object.entries(before).filter(([k]) => !k.startsWith('@'))));
        const stripped = withoutNulls(encoded.json);
        await first.service.writer.transaction((tx) => tx.upsert(PROPERTY, [{ ...encoded, json: stripped, row: [...encoded.row.slice(0, -1), stripped] }]));
        await first.service.settings.remove(RECORD_SHAPE + PROPERTY.name);
        await first.service.settings.remove(PREPARED_FOR);
        expect(nulls((await get(`${first.url}/Property('${one}')`)).json)).to.deep.equal([]);
        await servers.pop()!.close();
        const second = await startTestServer(serviceModel, old.url);
        servers.push(second);
        const after = (await get(`${second.url}/Property('${one}')`)).json;
        expect(after).to.deep.equal({ ...before, '@odata.context': after['@odata.context'] });
        expect(dataKeys(after)).to.deep.equal(fieldNames(PROPERTY));
      } finally {
        for (const s of servers) await s.close();
        await old.drop();
      }
    });
  });
});
