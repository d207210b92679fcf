/**
 * The admin API the console uses (issue 14): clients listed, added (secret and static token shown once),
 * scoped, rotated and revoked through the same operations as `reso-server clients`; licences checked with the
 * service's own parser and binder (its error inside ScopeInvalid); usage by hour, day and month with CSV, as
 * `reso-server usage --by`; and no console data or admin route reachable without a valid (admin) token.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { HttpResult, request, startTestServer, TEST_TOKEN } from './support/http';
import { originOf, requestToken, runCli } from './support/licence-http';

/** An admin request with a JSON body (or none); `token` null sends no Authorization. */
function admin(server: RunningServer, path: string, method = 'GET', body?: unknown, token: string | null = TEST_TOKEN): Promise<HttpResult> {
  return request(`${originOf(server.url)}${path}`, {
    token: token ?? undefined, method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  });
}

function expectError(r: HttpResult, status: number, code: string): { code: string; message: string; target?: string; details: any[] } {
  expect(r.status, r.text).to.equal(status);
  expect(r.json?.error?.code, r.text).to.equal(code);
  expect(r.json.error.details).to.be.an('array');
  return r.json.error;
}

/** Every route the console reads or changes data through, with a body where it takes one. */
const ADMIN_ROUTES: readonly [string, string, unknown?][] = [
  ['GET', '/admin/clients'], ['POST', '/admin/clients', { name: 'x' }], ['GET', '/admin/clients/demo'],
  ['PUT', '/admin/clients/demo/scope', { scope: null }], ['POST', '/admin/clients/demo/rotate'], ['POST', '/admin/clients/demo/revoke'],
  ['POST', '/admin/licence-check', { scope: '' }], ['GET', '/admin/usage'], ['GET', '/admin/usage/periods?by=day'],
  ['GET', '/admin/usage/periods?by=month&format=csv'], ['GET', '/admin/webhooks'],
];

describeEachDatabase('Console: the admin API', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let reader: string;

  before(async () => {
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { usageApplyMs: 50 });
    await seedDemoData(server.service, { listings: 5 });
    const added = await admin(server, '/admin/clients', 'POST', { id: 'reader', name: 'Reader', staticToken: true });
    reader = added.json.staticToken;
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  it('no console data or admin route answers without a valid token (401), nor to a client that is not an admin (403)', async () => {
    for (const [method, path, body] of [...ADMIN_ROUTES, ['GET', '/console/api/explorer'] as [string, string]]) {
      expectError(await admin(server, path, method, body, null), 401, 'Unauthorized');
      expectError(await admin(server, path, method, body, 'not-a-token'), 401, 'Unauthorized');
    }
    for (const [method, path, body] of ADMIN_ROUTES) expectError(await admin(server, path, method, body, reader), 403, 'AdminRequired');
    // The refusals changed nothing: the demo client is as it was, and its token still works.
    expect((await admin(server, '/admin/clients/demo')).json).to.include({ id: 'demo', admin: true }).and.not.have.property('revokedAt');
  });

  it('the shell is public and holds no data; it and its assets carry a strict Content-Security-Policy', async () => {
    const origin = originOf(server.url);
    const page = await request(`${origin}/console/`);
    expect(page.status).to.equal(200);
    const csp = page.headers.get('content-security-policy')!;
    for (const d of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) expect(csp).to.include(d);
    expect(csp).not.to.match(/unsafe-inline|unsafe-eval|https?:/);
    expect(page.text).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>|\sstyle=|\son[a-z]+=/i);
    for (const src of page.text.match(/(?:src|href)="[^"#]+"/g)!) expect(src, 'every asset from this server').to.match(/="assets\//);
    for (const asset of ['main.js', 'console.css', 'chart.umd.min.js']) {
      const r = await request(`${origin}/console/assets/${asset}`);
      expect(r.status, asset).to.equal(200);
      expect(r.headers.get('content-security-policy'), asset).to.equal(csp);
    }
    expect((await request(`${origin}/console/assets/..%2F..%2Fpackage.json`)).status).to.equal(404);
    expect((await request(`${origin}/console/assets/tsconfig.json`)).status).to.equal(404);
  });

  it('adds a client: its secret and static token are in the answer once, never in the list; both work', async () => {
    const r = await admin(server, '/admin/clients', 'POST', { id: 'idx', name: 'IDX portal', scope: "MlsStatus eq 'Active'", hiddenFields: ['PrivateRemarks'], rateLimit: 600, staticToken: true });
    expect(r.status, r.text).to.equal(201);
    expect(r.json.client).to.include({ id: 'idx', name: 'IDX portal', scope: "MlsStatus eq 'Active'", rateLimit: 600, admin: false });
    expect(r.json.secret).to.match(/^[A-Za-z0-9_-]{43}$/);
    const list = await admin(server, '/admin/clients');
    expect(list.json.value.map((c: { id: string }) => c.id)).to.include('idx');
    expect(list.text).not.to.include(r.json.secret).and.not.to.include(r.json.staticToken).and.not.to.match(/hash/i);
    expect((await requestToken(server.url, { id: 'idx', secret: r.json.secret, via: 'basic' })).status).to.equal(200);
    expect((await request(`${server.url}/`, { token: r.json.staticToken })).status).to.equal(200);
    expectError(await admin(server, '/admin/clients', 'POST', { id: 'idx', name: 'again' }), 409, 'ClientExists');
  });

  it('refuses a bad scope with the service\'s own error inside ScopeInvalid, and a bad hidden field, before storing anything', async () => {
    const scope = "City eq 'Austin'";
    const service = await request(`${server.url}/Property?$filter=${encodeURIComponent(scope)}`, { token: TEST_TOKEN });
    const own = expectError(service, 501, 'FieldNotFilterable');
    for (const path of ['/admin/licence-check', '/admin/clients']) {
      const e = expectError(await admin(server, path, 'POST', { id: 'bad-scope', name: 'Bad', scope }), 400, 'ScopeInvalid');
      expect(e.target).to.equal('scope');
      expect(e.details).to.deep.equal([{ code: own.code, message: own.message, target: own.target }]);
    }
    const syntax = expectError(await admin(server, '/admin/licence-check', 'POST', { scope: 'MlsStatus eq' }), 400, 'ScopeInvalid');
    expect(syntax.details[0].code).to.equal('QuerySyntax');
    const hidden = expectError(await admin(server, '/admin/licence-check', 'POST', { hiddenFields: ['NoSuchField'] }), 400, 'HiddenFieldInvalid');
    expect([hidden.target, hidden.message]).to.deep.equal(['hiddenFields', 'hidden field NoSuchField is not a field of the dictionary']);
    expect((await admin(server, '/admin/licence-check', 'POST', { scope: "MlsStatus eq 'Active'", hiddenFields: ['PrivateRemarks'] })).json)
      .to.deep.equal({ valid: true, scope: "MlsStatus eq 'Active'", hiddenFields: ['PrivateRemarks'] });
    expectError(await admin(server, '/admin/clients/bad-scope'), 404, 'ClientNotFound');
  });

  it('refuses a malformed description with ClientSpecInvalid naming the part at fault', async () => {
    const cases: [unknown, string][] = [
      [{}, 'name'], [{ name: 'x', rateLimit: 0 }, 'rateLimit'], [{ name: 'x', rateLimit: '5' }, 'rateLimit'],
      [{ name: 'x', id: 'no spaces' }, 'id'], [{ name: 'x', hiddenFields: 'PrivateRemarks' }, 'hiddenFields'], [[1], 'body'],
    ];
    for (const [body, target] of cases) expect(expectError(await admin(server, '/admin/clients', 'POST', body), 400, 'ClientSpecInvalid').target).to.equal(target);
    const notJson = await request(`${originOf(server.url)}/admin/clients`, { token: TEST_TOKEN, method: 'POST', body: '{"name":', headers: { 'Content-Type': 'application/json' } });
    expectError(notJson, 400, 'RequestMalformed');
  });

  it('changes a scope, rotates (the old token ends, the new one works), revokes, and refuses to rotate a revoked client, as the CLI does', async () => {
    const { json: added } = await admin(server, '/admin/clients', 'POST', { id: 'feed', name: 'Feed', staticToken: true });
    const scoped = await admin(server, '/admin/clients/feed/scope', 'PUT', { scope: "MlsStatus ne 'Withdrawn'" });
    expect(scoped.json).to.include({ id: 'feed', scope: "MlsStatus ne 'Withdrawn'" }).and.have.property('scopeEpoch');
    expectError(await admin(server, '/admin/clients/feed/scope', 'PUT', { scope: 'Nope eq 1' }), 400, 'ScopeInvalid');
    const rotated = await admin(server, '/admin/clients/feed/rotate', 'POST');
    expect(rotated.json).to.have.keys('secret', 'staticToken', 'tokensEnded');
    expect(rotated.json.tokensEnded).to.equal(1);
    expectError(await request(`${server.url}/`, { token: added.staticToken }), 401, 'Unauthorized');
    expect((await request(`${server.url}/`, { token: rotated.json.staticToken })).status).to.equal(200);
    const revoked = await admin(server, '/admin/clients/feed/revoke', 'POST');
    expect(revoked.json.revokedAt).to.be.a('string');
    expectError(await request(`${server.url}/`, { token: rotated.json.staticToken }), 401, 'Unauthorized');
    const refused = expectError(await admin(server, '/admin/clients/feed/rotate', 'POST'), 409, 'ClientRevoked');
    expect(refused).to.include({ target: 'id', message: `client feed was revoked at ${revoked.json.revokedAt} and cannot be rotated: `
      + 'a revoked client\'s credentials are ended for good; add a new client instead' });
    const cli = await runCli(db.url, ['clients', 'list']);
    expect(cli.stdout).to.match(/^feed\s+Feed\s+revoked /m);
    for (const action of ['rotate', 'revoke']) expectError(await admin(server, `/admin/clients/nobody/${action}`, 'POST'), 404, 'ClientNotFound');
  });

  it('usage by hour, day and month adds up /admin/usage, and its CSV is what `reso-server usage --by day --csv` prints', async () => {
    const keys = (await request(`${server.url}/Property?$top=2&$select=ListingKey`, { token: reader })).json.value;
    for (const k of keys) await request(`${server.url}/Property('${k.ListingKey}')`, { token: reader });
    await request(`${server.url}/Property?$top=1&$expand=Media`, { token: reader });
    const hours = (await admin(server, '/admin/usage?client=reader')).json.value as { hour: string; class: 'A' | 'B'; count: number }[];
    const sum = (cls: string) => hours.filter((h) => h.class === cls).reduce((n, h) => n + h.count, 0);
    // Two key fetches (A); a query, and a query expanding Media (B, and one more B for the charged expansion).
    expect([sum('A'), sum('B')]).to.deep.equal([2, 3]);
    for (const by of ['hour', 'day', 'month']) {
      const periods = (await admin(server, `/admin/usage/periods?by=${by}&client=reader`)).json;
      expect(periods.by).to.equal(by);
      expect(periods.value.reduce((n: number, r: { A: number }) => n + r.A, 0), by).to.equal(2);
      expect(periods.value.reduce((n: number, r: { B: number }) => n + r.B, 0), by).to.equal(3);
      expect(periods.value[0].period, by).to.have.length(({ hour: 13, day: 10, month: 7 } as Record<string, number>)[by]);
    }
    const csv = await admin(server, '/admin/usage/periods?by=day&format=csv');
    expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).to.equal('attachment; filename="usage-by-day.csv"');
    expect(csv.text.split('\r\n')[0]).to.equal('day (UTC),client,class A,class B');
    expect((await runCli(db.url, ['usage', '--by', 'day', '--csv'])).stdout).to.equal(csv.text);
    expectError(await admin(server, '/admin/usage/periods?by=week'), 400, 'OptionValueInvalid');
    expectError(await admin(server, '/admin/usage/periods?format=xml'), 400, 'OptionValueInvalid');
  });

  it('tells any client what its $metadata does not say: restricted fields, charged expansions, request classes; nothing hidden from it', async () => {
    const { json: hider } = await admin(server, '/admin/clients', 'POST', { id: 'hider', name: 'Hider', hiddenFields: ['OwnerName'], staticToken: true });
    const policy = (await request(`${originOf(server.url)}/console/api/explorer`, { token: hider.staticToken })).json;
    expect(policy.client).to.deep.equal({ id: 'hider', name: 'Hider', admin: false });
    expect(policy.transactions).to.deep.equal({ keyFetch: 'A', query: 'B', chargedExpansion: 'B' });
    const listings = policy.sets.find((s: { name: string }) => s.name === 'Property');
    expect(listings.restricted).to.have.members(['PrivateRemarks', 'ShowingInstructions', 'LockBoxSerialNumber']);
    expect(listings.chargedNavigations).to.deep.equal(['Media', 'OpenHouse', 'historyTransactional']);
    expect(policy.lookups).to.deep.equal({ set: 'Lookup', nameField: 'LookupName', valueField: 'LookupValue' });
  });
});
