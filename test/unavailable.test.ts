/**
 * While the database is unreachable, requests get 503 with Retry-After and an OData error body;
 * the server recovers by itself when the database comes back: at start, by trying its start-up work again
 * in the background until it is done; later, as soon as queries succeed again. Run against MariaDB through a proxy
 * that really drops the connections (the embedded SQLite file cannot go away in the same sense).
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { startServer, RunningServer } from '../src/process/server';
import { MYSQL_URL, mariadbTarget, TestDatabase } from './support/databases';
import { get, odataError, testConfig } from './support/http';
import { proxiedDatabase, TcpProxy } from './support/tcp-proxy';

(MYSQL_URL ? describe : describe.skip)('§7 Database unavailable: 503 and recovery (MariaDB)', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let proxy: TcpProxy;
  let server: RunningServer;
  let viaProxy: string;

  before(async () => {
    db = await mariadbTarget.create();
    ({ proxy, url: viaProxy } = await proxiedDatabase(db.url));
  });
  after(async () => {
    await server?.close();
    await proxy?.stop();
    await db?.drop();
  });

  const expect503 = async (url: string) => {
    const r = await get(url);
    expect(r.status, `${url}: ${r.text}`).to.equal(503);
    expect(r.headers.get('retry-after')).to.match(/^\d+$/);
    expect(r.headers.get('odata-version')).to.equal('4.01');
    expect(odataError(r).code).to.equal('ServiceUnavailable');
  };

  it('starts while the database is down and answers 503 instead of failing', async () => {
    await proxy.stop();
    server = await startServer(serviceModel, testConfig(viaProxy, { pageSize: 10 }));
    await expect503(`${server.url}/Property`);
    await expect503(`${server.url}/Property('x')`);
  });

  it('recovers by itself when the database comes back (and creates the schema then)', async () => {
    await proxy.start();
    // The start-up work is tried again in the background; nothing needs to ask for it.
    await server.service.readiness.whenReady();
    expect(server.service.readiness.ready).to.equal(true);
    const r = await get(`${server.url}/Property`);
    expect(r.status, r.text).to.equal(200);
    expect(r.json.value).to.deep.equal([]);
  });

  it('answers 503 when the database goes away mid-service, and recovers again', async () => {
    expect((await get(`${server.url}/Member`)).status).to.equal(200);
    await proxy.stop();
    await expect503(`${server.url}/Member`);
    await expect503(`${server.url}/Property('x')`);
    await proxy.start();
    const r = await get(`${server.url}/Member`);
    expect(r.status, r.text).to.equal(200);
  });

  it('metadata and the service document stay available without the database', async () => {
    await proxy.stop();
    expect((await get(`${server.url}/$metadata`)).status).to.equal(200);
    expect((await get(`${server.url}/`)).status).to.equal(200);
    await proxy.start();
  });

  it('/ready answers 503 within its bound while the database is away, /health 200; ready again once it is back', async () => {
    const root = server.url.replace(/\/odata$/, '');
    await proxy.stop();
    const started = Date.now();
    const r = await get(`${root}/ready`, { Authorization: '' });
    expect(r.status, r.text).to.equal(503);
    expect(odataError(r).code).to.equal('ServiceUnavailable');
    expect((await get(`${root}/health`, { Authorization: '' })).status).to.equal(200);
    await proxy.start();
    expect((await get(`${root}/ready`, { Authorization: '' })).status).to.equal(200);
    // A stalled database (connections open, nothing answers): the probe still answers within about a second.
    proxy.stall();
    const stalledAt = Date.now();
    expect((await get(`${root}/ready`, { Authorization: '' })).status).to.equal(503);
    expect(Date.now() - stalledAt).to.be.below(2500);
    proxy.resume();
    expect(Date.now() - started).to.be.below(20_000);
  });
});
