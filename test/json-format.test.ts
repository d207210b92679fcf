/**
 * OData JSON Format 4.01 and protocol versioning, as a client negotiates them: JSON only for data (406 for
 * an Accept that admits none), `odata.metadata=none` without context URLs, and OData-MaxVersion honoured
 * (4.0 answered as 4.0, below 4.0 refused).
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, odataError, startTestServer } from './support/http';

const NONE = 'application/json;odata.metadata=none';

describeEachDatabase('JSON format and versions', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let key: string;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    // Small batches, so a page of five is written in parts (the streamed path) as well as whole.
    server = await startTestServer(serviceModel, db.url, { pageBatchSize: 2 });
    await seedDemoData(server.service, { listings: 8 });
    key = (await get(`${server.url}/Property?$top=1`)).json.value[0].ListingKey;
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  describe('media types: data is JSON', () => {
    for (const accept of ['application/xml', 'text/html', 'application/atom+xml, text/plain;q=0.5', 'application/json;q=0']) {
      it(`Accept: ${accept} on data answers 406 MediaTypeNotAcceptable, as an OData error`, async () => {
        for (const path of ['/Property', `/Property('${key}')`, '/']) {
          const r = await get(`${server.url}${path}`, { Accept: accept });
          expect(r.status, path).to.equal(406);
          expect(odataError(r).code).to.equal('MediaTypeNotAcceptable');
        }
      });
    }

    for (const accept of ['application/json', '*/*', 'application/*', 'text/html, application/json;q=0.5', 'application/json;odata.metadata=minimal']) {
      it(`Accept: ${accept} answers JSON with its context URL (odata.metadata=minimal)`, async () => {
        const r = await get(`${server.url}/Property?$top=2`, { Accept: accept });
        expect(r.status).to.equal(200);
        expect(r.headers.get('content-type')).to.equal('application/json; odata.metadata=minimal; charset=utf-8');
        expect(r.json['@odata.context']).to.match(/\/\$metadata#Property$/);
      });
    }

    it('$metadata still answers XML to Accept: application/xml', async () => {
      const r = await get(`${server.url}/$metadata`, { Accept: 'application/xml' });
      expect(r.status).to.equal(200);
      expect(r.headers.get('content-type')).to.match(/^application\/xml/);
    });
  });

  describe('odata.metadata=none: no context URL, the rest unchanged', () => {
    it('a collection page (written in parts), with $count and nextLink', async () => {
      const minimal = await get(`${server.url}/Property?$count=true`, { Prefer: 'odata.maxpagesize=5' });
      const none = await get(`${server.url}/Property?$count=true`, { Prefer: 'odata.maxpagesize=5', Accept: NONE });
      expect(none.status).to.equal(200);
      expect(none.headers.get('content-type')).to.equal('application/json; odata.metadata=none; charset=utf-8');
      expect(Object.keys(none.json)).to.deep.equal(['@odata.count', 'value', '@odata.nextLink']);
      // The same page; only the context URL is gone (each nextLink carries a token of its own).
      const { '@odata.context': context, '@odata.nextLink': link, ...rest } = minimal.json;
      expect(context).to.be.a('string');
      expect(none.json['@odata.nextLink']).to.be.a('string').and.match(/\$skiptoken=/);
      expect(link).to.be.a('string');
      expect({ ...none.json, '@odata.nextLink': undefined }).to.deep.equal({ ...rest, '@odata.nextLink': undefined });
      const next = await get(none.json['@odata.nextLink'], { Prefer: 'odata.maxpagesize=5', Accept: NONE });
      expect(next.status).to.equal(200);
      expect(next.json.value).to.have.length(3);
    });

    it('a record by key, and the service document', async () => {
      const record = await get(`${server.url}/Property('${key}')?$select=ListingKey`, { Accept: NONE });
      expect(record.status).to.equal(200);
      expect(record.json).to.deep.equal({ ListingKey: key });
      const root = await get(`${server.url}/`, { Accept: NONE });
      expect(root.json['@odata.context']).to.equal(undefined);
      expect(root.json.value.length).to.equal(serviceModel.entitySets.length);
    });

    it('also as $format=application/json;odata.metadata=none, which wins over Accept', async () => {
      const r = await get(`${server.url}/Property?$top=1&$format=${encodeURIComponent(NONE)}`, { Accept: 'application/json' });
      expect(r.status).to.equal(200);
      expect(r.json['@odata.context']).to.equal(undefined);
      expect(r.json.value).to.have.length(1);
    });
  });

  describe('OData-MaxVersion', () => {
    for (const [max, version] of [['4.0', '4.0'], ['4.01', '4.01'], ['5.0', '4.01']] as const) {
      it(`OData-MaxVersion: ${max} is answered with OData-Version: ${version}`, async () => {
        const r = await get(`${server.url}/Property?$top=1`, { 'OData-MaxVersion': max });
        expect(r.status).to.equal(200);
        expect(r.headers.get('odata-version')).to.equal(version);
      });
    }

    it('OData-MaxVersion below 4.0 answers 400 ProtocolVersionNotSupported', async () => {
      const r = await get(`${server.url}/Property?$top=1`, { 'OData-MaxVersion': '3.0' });
      expect(r.status).to.equal(400);
      expect(odataError(r)).to.include({ code: 'ProtocolVersionNotSupported', target: 'OData-MaxVersion' });
    });
  });
});
