/**
 * Issue 13, item 2: the HTTP conventions of a production service. Compression negotiated by Accept-Encoding
 * (decoded bodies equal to the identity body; a streamed page still streams), CORS, strong ETags with 304, Cache-Control,
 * HEAD with the GET's headers, and the bind address. Real HTTP (node:http, which shows the bytes as sent) over both databases.
 */
import { expect } from 'chai';
import { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { until } from './support/poll';
import { request, startTestServer, TEST_TOKEN } from './support/http';

/** On the wire (nothing asked for but what the test says, the bytes as sent), with the test token unless `headers` has one. */
const onWire = (url: string, headers: Record<string, string> = {}, method = 'GET') =>
  request(url, { wire: true, method, headers, token: 'Authorization' in headers ? undefined : TEST_TOKEN });

const LISTINGS = 60;
const ORIGIN = 'https://portal.example';

describeEachDatabase('Issue 13 §2 HTTP conventions', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let plain: RunningServer;
  let hidingToken: string;

  before(async () => {
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: 50, pageBatchSize: 10, corsOrigins: [ORIGIN] });
    plain = await startTestServer(serviceModel, db.url, { compression: false });
    await seedDemoData(server.service, { listings: LISTINGS });
    const { client } = await server.service.clients.add({ name: 'Hiding Realty', hiddenFields: ['PublicRemarks'] });
    hidingToken = await server.service.clients.issueToken(client.id, 3600);
  });
  after(async () => {
    await Promise.all([server?.close(), plain?.close()]);
    await db?.drop();
  });

  describe('compression', () => {
    for (const coding of ['gzip', 'br'] as const) {
      it(`${coding}: a page, a record and $metadata decode to the identity body; Vary: Accept-Encoding`, async () => {
        for (const path of ['/Property?$top=5', "/Property('L000003')?$expand=Media", '/$metadata', '/$metadata?$format=json']) {
          const identity = await onWire(`${server.url}${path}`);
          const compressed = await onWire(`${server.url}${path}`, { 'Accept-Encoding': `${coding}, identity;q=0.5` });
          expect(compressed.status, path).to.equal(200);
          expect(compressed.headers.get('content-encoding'), path).to.equal(coding);
          expect(compressed.headers.get('vary'), path).to.match(/Accept-Encoding/);
          expect(identity.headers.get('content-encoding'), path).to.equal(null);
          expect(compressed.text, path).to.equal(identity.bytes.toString('utf8'));
          expect(compressed.bytes.length, path).to.be.below(identity.bytes.length / 2);
        }
      });
    }

    it('brotli when the client takes both equally, but gzip where records go as stored (issue 42: stitched from kept runs); none for identity, small bodies, or with COMPRESSION=off', async () => {
      expect((await onWire(`${server.url}/Property?$top=5&$select=ListingKey,PublicRemarks`, { 'Accept-Encoding': 'gzip, deflate, br' })).headers.get('content-encoding')).to.equal('br');
      expect((await onWire(`${server.url}/Property?$top=5`, { 'Accept-Encoding': 'gzip, deflate, br' })).headers.get('content-encoding')).to.equal('gzip');
      expect((await onWire(`${server.url}/Property?$top=5`, { 'Accept-Encoding': 'gzip;q=0, br' })).headers.get('content-encoding'), 'gzip refused').to.equal('br');
      const identity = await onWire(`${server.url}/Property?$top=5`, { 'Accept-Encoding': 'identity' });
      expect(identity.headers.get('content-encoding')).to.equal(null);
      expect(identity.headers.get('content-length'), 'a body sent whole keeps its length').to.equal(String(identity.bytes.length));
      expect(identity.headers.get('vary'), 'it still varies by Accept-Encoding, for caches between').to.match(/Accept-Encoding/);
      const none = await onWire(`${server.url}/Property?$top=10`, {});
      expect([none.headers.get('content-encoding'), none.headers.get('content-length')], 'no Accept-Encoding: sent whole, measured').to.deep.equal([null, String(none.bytes.length)]);
      expect(none.headers.get('vary')).to.match(/Accept-Encoding/);
      expect(JSON.parse(none.bytes.toString()).value).to.have.length(10);
      const small = await onWire(`${server.url}/Property/$count`, { 'Accept-Encoding': 'gzip' });
      expect(small.headers.get('content-encoding')).to.equal(null);
      expect(small.bytes.toString()).to.equal(String(LISTINGS));
      const off = await onWire(`${plain.url}/Property?$top=5`, { 'Accept-Encoding': 'gzip, br' });
      expect(off.headers.get('content-encoding')).to.equal(null);
      expect(off.headers.get('content-length')).to.equal(String(off.bytes.length));
    });

    for (const coding of ['gzip', 'br'] as const) {
      it(`${coding}: a page larger than a batch still streams (its first bytes arrive before its last batch is read)`, async () => {
        const db = server.service.db;
        const all = db.all.bind(db);
        let reads = 0;
        let release!: () => void;
        const gate = new Promise<void>((resolve) => { release = resolve; });
        // The page's 5th batch (of 5) waits until the client has seen the body begin.
        const batchRead = (sql: string) => /from `Property` .*limit \?/.test(sql);
        db.all = async (sql, params) => (batchRead(sql) && ++reads === 5 ? gate.then(() => all(sql, params)) : all(sql, params));
        let readsAtFirstBytes = -1;
        try {
          const r = await request(`${server.url}/Property`, {
            wire: true, token: TEST_TOKEN, headers: { 'Accept-Encoding': coding }, onFirstBytes: async () => {
              readsAtFirstBytes = reads;
              release();
            },
          });
          expect(r.headers.get('content-encoding')).to.equal(coding);
          expect(r.headers.get('transfer-encoding')).to.equal('chunked');
          expect(readsAtFirstBytes, 'batches read when the first bytes arrived').to.be.within(1, 5);
          // The same page as sent uncompressed (its nextLink's sealed token aside, which differs on every issue).
          const identity = JSON.parse((await onWire(`${server.url}/Property`)).bytes.toString('utf8'));
          const page = JSON.parse(r.text);
          expect(page.value).to.have.length(50);
          expect(page.value).to.deep.equal(identity.value);
          expect(page['@odata.nextLink']).to.be.a('string');
        } finally {
          release();
          db.all = all;
        }
      });
    }
  });

  describe('a page larger than a batch (docs/api.md "Limits")', () => {
    it('each batch is read while the one before it is written, never two ahead', async () => {
      const db = server.service.db;
      const all = db.all.bind(db);
      // Records handed to the response so far (a page without expansions: one ListingKey a record), at each batch read.
      let written = 0;
      const writtenAtRead: number[] = [];
      const batchRead = (sql: string) => /from `Property` .*limit \?/.test(sql);
      db.all = async (sql, params) => {
        if (batchRead(sql)) writtenAtRead.push(written);
        return all(sql, params);
      };
      const countWrites = (_req: IncomingMessage, res: ServerResponse) => {
        const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
        res.write = ((chunk: unknown, ...rest: unknown[]) => {
          written += String(chunk).match(/"ListingKey":/g)?.length ?? 0;
          return write(chunk, ...rest);
        }) as ServerResponse['write'];
      };
      server.server.on('request', countWrites);
      try {
        // 50 records in batches of 10: the second batch is read before anything is written, the k-th once k-2 are.
        const r = await onWire(`${server.url}/Property`);
        expect(r.status).to.equal(200);
        expect(r.headers.get('transfer-encoding')).to.equal('chunked');
        expect(JSON.parse(r.text).value).to.have.length(50);
        expect(written).to.equal(50);
        expect(writtenAtRead).to.deep.equal([0, 0, 10, 20, 30]);
      } finally {
        server.server.off('request', countWrites);
        db.all = all;
      }
    });
  });

  describe('the data path on node:http (docs/architecture.md, "The request path")', () => {
    it('a request under the service root is answered on node\'s own request and response; Express takes only the rest', async () => {
      // Express gives what it handles prototypes of its own (node's HTTP code is then slower on them): seen at the end.
      const seen: { url: string; nodeRequest: boolean; nodeResponse: boolean }[] = [];
      const watch = (req: IncomingMessage, res: ServerResponse) => {
        res.once('finish', () => seen.push({
          url: req.url!,
          nodeRequest: Object.getPrototypeOf(req) === IncomingMessage.prototype,
          nodeResponse: Object.getPrototypeOf(res) === ServerResponse.prototype,
        }));
      };
      server.server.on('request', watch);
      try {
        for (const path of ['/odata/', "/odata/Property?$top=1", '/odata/NoSuchSet', '/oauth2/token', '/console/']) {
          const r = await onWire(`${server.url.replace(/\/odata$/, '')}${path}`);
          expect(r.status, path).to.equal({ '/odata/NoSuchSet': 404, '/oauth2/token': 404, '/console/': 200 }[path] ?? 200);
        }
        expect(seen.map((s) => [s.url, s.nodeRequest && s.nodeResponse])).to.deep.equal([
          ['/odata/', true], ['/odata/Property?$top=1', true], ['/odata/NoSuchSet', true], ['/oauth2/token', false], ['/console/', false],
        ]);
      } finally {
        server.server.off('request', watch);
      }
    });

    it('a path that cannot be decoded, from a token not yet looked up (the bearer check answers later): 400, and the server goes on', async () => {
      const { client } = await server.service.clients.add({ name: 'First Request Realty' });
      const fresh = await server.service.clients.issueToken(client.id, 3600);
      const r = await onWire(`${server.url}/Property('%E0%A4%A')`, { Authorization: `Bearer ${fresh}` });
      expect(r.status).to.equal(400);
      expect(JSON.parse(r.text).error.code).to.equal('RequestMalformed');
      expect((await onWire(`${server.url}/Property?$top=1`)).status).to.equal(200);
    });
  });

  describe('requests in progress (MAX_CONCURRENT_REQUESTS)', () => {
    it('a client that closes its connection while its token is looked up holds no slot afterwards', async () => {
      const limited = await startTestServer(serviceModel, db.url, { maxConcurrentRequests: 1 });
      const clients = limited.service.clients;
      const byToken = clients.byToken.bind(clients);
      try {
        const { client } = await limited.service.clients.add({ name: 'Hasty Realty' });
        const token = await limited.service.clients.issueToken(client.id, 3600);
        // The lookup is held until the client has gone, as a slow database holds it.
        let gone!: () => void;
        let asked!: () => void;
        const closed = new Promise<void>((resolve) => { gone = resolve; });
        const lookingUp = new Promise<void>((resolve) => { asked = resolve; });
        clients.byToken = async (t) => { asked(); await closed; return byToken(t); };
        const port = (limited.server.address() as AddressInfo).port;
        const socket = connect(port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(`GET /odata/Property?$top=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n\r\n`);
        await lookingUp;
        socket.destroy();
        const connections = () => new Promise<number>((resolve, reject) => limited.server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
        await until('the server saw the connection close', async () => (await connections()) === 0, 5_000, 10);
        gone();
        clients.byToken = byToken;
        // With a slot held for ever, every later request of this client would be 429.
        await until('the server saw the close', async () => (await onWire(`${limited.url}/Property?$top=1`, { Authorization: `Bearer ${token}` })).status === 200, 5_000, 20);
        for (let i = 0; i < 3; i++) expect((await onWire(`${limited.url}/Property?$top=1`, { Authorization: `Bearer ${token}` })).status).to.equal(200);
      } finally {
        clients.byToken = byToken;
        await limited.close();
      }
    });
  });

  describe('CORS (CORS_ORIGINS)', () => {
    it('a preflight from an allowed origin: 204 with the methods, request headers and max age', async () => {
      const r = await onWire(`${server.url}/Property`, {
        Authorization: '', Origin: ORIGIN, 'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization, prefer, odata-maxversion',
      }, 'OPTIONS');
      expect(r.status).to.equal(204);
      expect(r.headers.get('access-control-allow-origin')).to.equal(ORIGIN);
      expect(r.headers.get('access-control-allow-methods')).to.include('GET');
      const allowed = r.headers.get('access-control-allow-headers')!.split(',');
      expect(allowed).to.include.members(['Authorization', 'Prefer', 'OData-MaxVersion', 'OData-Version', 'Content-Type']);
      expect(r.headers.get('access-control-max-age')).to.equal('600');
      expect(r.headers.get('vary')).to.match(/Origin/);
    });

    it('an allowed origin\'s request: the answer names it and exposes OData-Version, Preference-Applied, ETag, Retry-After', async () => {
      const r = await onWire(`${server.url}/Property?$top=1`, { Origin: ORIGIN, Prefer: 'odata.maxpagesize=1' });
      expect(r.status).to.equal(200);
      expect(r.headers.get('access-control-allow-origin')).to.equal(ORIGIN);
      expect(r.headers.get('access-control-expose-headers')!.split(',')).to.include.members(['OData-Version', 'Preference-Applied', 'ETag', 'Retry-After']);
      expect(r.headers.get('vary')!.split(/\s*,\s*/), 'by origin and by coding, for caches between').to.include.members(['Origin', 'Accept-Encoding']);
    });

    it('another origin: no CORS headers (the browser refuses), its preflight answered as any OPTIONS (405); off by default', async () => {
      const preflight = { Authorization: '', Origin: 'https://evil.example', 'Access-Control-Request-Method': 'GET' };
      const refused = await onWire(`${server.url}/Property`, preflight, 'OPTIONS');
      expect(refused.status).to.equal(405);
      expect(refused.headers.get('access-control-allow-origin')).to.equal(null);
      const get = await onWire(`${server.url}/Property?$top=1`, { Origin: 'https://evil.example' });
      expect(get.status).to.equal(200);
      expect(get.headers.get('access-control-allow-origin')).to.equal(null);
      const off = await onWire(`${plain.url}/Property`, { ...preflight, Origin: ORIGIN }, 'OPTIONS');
      expect(off.status).to.equal(405);
      expect(off.headers.get('access-control-allow-origin')).to.equal(null);
    });
  });

  describe('ETags and caching', () => {
    it('$metadata: a strong ETag per representation and licence; If-None-Match gives 304 without a body', async () => {
      const xml = await onWire(`${server.url}/$metadata`);
      const json = await onWire(`${server.url}/$metadata?$format=json`);
      const hiding = await onWire(`${server.url}/$metadata`, { Authorization: `Bearer ${hidingToken}` });
      const tags = [xml, json, hiding].map((r) => r.headers.get('etag'));
      for (const t of tags) expect(t).to.match(/^"[A-Za-z0-9_-]{32}"$/);
      expect(new Set(tags).size).to.equal(3);
      expect(xml.headers.get('cache-control')).to.equal('private, no-cache');
      const again = await onWire(`${server.url}/$metadata`, { 'If-None-Match': xml.headers.get('etag')! });
      expect(again.status).to.equal(304);
      expect(again.bytes.length).to.equal(0);
      expect(again.headers.get('etag')).to.equal(xml.headers.get('etag'));
      // Another licence's tag does not match this client's document.
      expect((await onWire(`${server.url}/$metadata`, { 'If-None-Match': hiding.headers.get('etag')! })).status).to.equal(200);
    });

    it('a compressed answer\'s tag names its coding, and either form revalidates', async () => {
      const identity = await onWire(`${server.url}/$metadata`);
      const br = await onWire(`${server.url}/$metadata`, { 'Accept-Encoding': 'br' });
      expect(br.headers.get('etag')).to.equal(`${identity.headers.get('etag')!.slice(0, -1)}-br"`);
      expect((await onWire(`${server.url}/$metadata`, { 'Accept-Encoding': 'br', 'If-None-Match': br.headers.get('etag')! })).status).to.equal(304);
      expect((await onWire(`${server.url}/$metadata`, { 'If-None-Match': `W/${br.headers.get('etag')}` })).status).to.equal(304);
    });

    it('a record by key: ETag, 304 on a match, still a class A transaction; another projection is another tag', async () => {
      const path = `${server.url}/Property('L000002')`;
      const first = await onWire(path);
      expect(first.headers.get('etag')).to.match(/^"[A-Za-z0-9_-]{32}"$/);
      expect(first.headers.get('cache-control')).to.equal('private, no-cache');
      await server.service.meter.flush();
      const before = await usageA(server);
      const again = await onWire(path, { 'If-None-Match': `"other", ${first.headers.get('etag')}` });
      expect(again.status).to.equal(304);
      expect(again.bytes.length).to.equal(0);
      await server.service.meter.flush();
      expect(await usageA(server)).to.equal(before + 1);
      const selected = await onWire(`${path}?$select=ListingKey`, { 'If-None-Match': first.headers.get('etag')! });
      expect(selected.status).to.equal(200);
      expect(selected.headers.get('etag')).to.not.equal(first.headers.get('etag'));
    });

    it('pages and the service document: private, no-cache and no ETag', async () => {
      for (const path of ['/', '/Property?$top=2', '/Property/$count']) {
        const r = await onWire(`${server.url}${path}`);
        expect(r.headers.get('cache-control'), path).to.equal('private, no-cache');
        expect(r.headers.get('etag'), path).to.equal(null);
      }
    });
  });

  describe('HEAD', () => {
    it('every GET route answers HEAD with the same status and headers, the Content-Length the GET body has, and no body', async () => {
      const paths = ['/', '/$metadata', '/$metadata?$format=json', "/Property('L000001')", '/Property?$top=3', '/Property/$count',
        "/Property('L000001')/Media", "/Property('nope')"];
      for (const path of paths) {
        const get = await onWire(`${plain.url}${path}`);
        const head = await onWire(`${plain.url}${path}`, {}, 'HEAD');
        expect(head.status, path).to.equal(get.status);
        expect(head.bytes.length, path).to.equal(0);
        expect(head.headers.get('content-length'), path).to.equal(String(get.bytes.length));
        for (const h of ['content-type', 'odata-version', 'etag', 'cache-control']) expect(head.headers.get(h), `${path} ${h}`).to.equal(get.headers.get(h));
      }
      const probe = await request(`${plain.url.replace(/\/odata$/, '')}/health`, { wire: true, method: 'HEAD' });
      expect(probe.status).to.equal(200);
      expect(probe.headers.get('content-length')).to.equal(String('{"status":"up"}'.length));
    });
  });

  it('binds loopback by default (HOST), and says so in its URL', () => {
    expect((server.server.address() as AddressInfo).address).to.equal('127.0.0.1');
    expect(server.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/odata$/);
  });
});

async function usageA(server: RunningServer): Promise<number> {
  const rows = await server.service.meter.usage({ client: 'demo' });
  return rows.filter((r) => r.class === 'A').reduce((n, r) => n + r.count, 0);
}
