/**
 * Authentication: OAuth2 client credentials (POST /oauth2/token, RFC 6749 §4.4), bearer tokens (RFC 6750) in
 * front of every endpoint under the service root, static tokens, revocation, rotation, storage of secrets and
 * tokens as hashes only, and the operator CLI (`reso-server clients …`) driven as a child process.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { HttpResult, odataError, request, startTestServer, TEST_TOKEN } from './support/http';
import { originOf, parseCredentials, requestToken, runCli } from './support/licence-http';
import { walkPages } from './support/next-links';
import { ManualClock } from './support/manual-clock';

/** What every 401 from the resource endpoints must look like. */
function expectBearer401(r: HttpResult, label: string, error?: 'invalid_token'): void {
  expect(r.status, `${label}: ${r.text.slice(0, 200)}`).to.equal(401);
  const challenge = r.headers.get('www-authenticate') ?? '';
  expect(challenge, `${label}: WWW-Authenticate`).to.match(/^Bearer\b/);
  expect(challenge, `${label}: realm`).to.match(/realm="[^"]+"/);
  if (error) expect(challenge, `${label}: error`).to.match(new RegExp(`error="${error}"`));
  else expect(challenge, `${label}: a request without credentials gets no error code (RFC 6750 §3.1)`).not.to.match(/error=/);
  expect(r.headers.get('content-type') ?? '', label).to.match(/^application\/json/);
  const e = odataError(r);
  expect(e.message, label).to.be.a('string').and.not.equal('');
  expect(r.json, `${label}: no data in a 401`).not.to.have.property('value');
}

function expectTokenError(r: HttpResult, label: string, status: number, error: string): void {
  expect(r.status, `${label}: ${r.text.slice(0, 200)}`).to.equal(status);
  expect(r.headers.get('content-type') ?? '', label).to.match(/^application\/json/);
  expect(r.json?.error, `${label}: error code`).to.equal(error);
  expect(r.json, label).not.to.have.property('access_token');
}

function expectIssued(r: HttpResult, label: string): string {
  expect(r.status, `${label}: ${r.text.slice(0, 200)}`).to.equal(200);
  expect(r.headers.get('content-type') ?? '', label).to.match(/^application\/json/);
  expect(r.headers.get('cache-control'), `${label}: Cache-Control`).to.match(/no-store/);
  expect(r.json.token_type, label).to.equal('Bearer');
  expect(r.json.access_token, label).to.be.a('string').with.length.above(20);
  expect(r.json.expires_in, label).to.be.a('number').above(0);
  return r.json.access_token;
}

describeEachDatabase('Authentication (OAuth2 client credentials, bearer tokens)', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  let listingKey: string;
  let nextLink: string;
  let alpha: { id: string; secret: string };
  /** The server's clock for token lifetimes and the token cache: tests move it instead of waiting. */
  const clock = new ManualClock();

  const works = async (token: string, label: string) => {
    const r = await request(`${base}/Property?$top=1&$select=ListingKey`, { token });
    expect(r.status, `${label}: ${r.text.slice(0, 200)}`).to.equal(200);
    expect(r.json.value).to.have.length(1);
  };
  const refused = async (token: string, label: string) => expectBearer401(await request(`${base}/Property`, { token }), label, 'invalid_token');

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: 3 }, { clock });
    await seedDemoData(server.service, { listings: 8 });
    base = server.url;
    const page = await request(`${base}/Property?$select=ListingKey`, { token: TEST_TOKEN });
    listingKey = page.json.value[0].ListingKey;
    nextLink = page.json['@odata.nextLink'];
    const { client, secret } = await server.service.clients.add({ id: 'alpha', name: 'Alpha Realty' });
    alpha = { id: client.id, secret };
  });
  after(async function () {
    this.timeout(60_000);
    await server?.close();
    await db?.drop();
  });

  describe('every endpoint under the service root needs a bearer token', function () {
    this.timeout(60_000);
    const paths = () => [
      ['service document', `${base}/`],
      ['service document (no slash)', base],
      ['$metadata (XML)', `${base}/$metadata`],
      ['$metadata (JSON)', `${base}/$metadata?$format=json`],
      ['collection', `${base}/Property`],
      ['collection with options', `${base}/Property?$filter=${encodeURIComponent("MlsStatus eq 'Active'")}&$select=ListingKey&$top=2&$count=true`],
      ['key fetch', `${base}/Property('${listingKey}')`],
      ['key fetch of a missing key', `${base}/Property('NO-SUCH-KEY')`],
      ['/$count', `${base}/Property/$count`],
      ['navigation path', `${base}/Property('${listingKey}')/Media`],
      ['navigation path (rooms)', `${base}/Property('${listingKey}')/PropertyRooms`],
      ['nextLink page', nextLink],
      ['other resource sets', `${base}/Media`],
      ['path alias', `${base}/OpenHouses`],
      ['Members', `${base}/Members`],
      ['HistoryTransactional /$count', `${base}/HistoryTransactional/$count`],
      ['unknown resource (no routing information before authentication)', `${base}/NoSuchSet`],
    ];
    it('without a token: 401, WWW-Authenticate: Bearer realm=…, an OData error body and no data', async () => {
      expect(nextLink).to.be.a('string');
      for (const [label, url] of paths()) expectBearer401(await request(url), label);
    });
    it('the same requests with a valid token succeed (so the 401s above are about the token)', async () => {
      for (const [label, url] of paths()) {
        if (label.startsWith('unknown') || label.includes('missing')) continue;
        const r = await request(url, { token: TEST_TOKEN });
        expect(r.status, `${label}: ${r.text.slice(0, 200)}`).to.equal(200);
      }
    });
    it('GET /admin/usage without a token: 401 Bearer; with a non-admin client: 403; with an admin: 200', async () => {
      const url = `${originOf(base)}/admin/usage`;
      expectBearer401(await request(url), '/admin/usage');
      const token = await server.service.clients.issueToken(alpha.id, undefined);
      const r = await request(url, { token });
      expect(r.status, r.text).to.equal(403);
      odataError(r);
      const ok = await request(url, { token: TEST_TOKEN });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.json.value).to.be.an('array');
    });
  });

  describe('invalid bearer credentials: 401 with error="invalid_token"', function () {
    this.timeout(60_000);
    it('malformed Authorization headers', async () => {
      for (const header of ['Bearer', 'Bearer ', 'Bearertoken', 'Token abc', `Basic ${Buffer.from('demo:x').toString('base64')}`,
        'Bearer a b', 'Bearer tok"en', 'Bearer \u00e9t\u00e9', `${TEST_TOKEN}`]) {
        let r: HttpResult;
        try {
          r = await request(`${base}/Property`, { authorization: header });
        } catch (e) {
          continue; // fetch refuses to send some header values at all; nothing reaches the server then
        }
        expectBearer401(r, `Authorization: ${header}`, 'invalid_token');
      }
    });
    it('the scheme name is case-insensitive (RFC 7235): "bearer <token>" works', async () => {
      const r = await request(`${base}/Property?$top=1`, { authorization: `bearer ${TEST_TOKEN}` });
      expect(r.status, r.text.slice(0, 200)).to.equal(200);
    });
    it('an unknown token', async () => {
      await refused('no-such-token-0123456789', 'unknown token');
      await refused(`${TEST_TOKEN}x`, 'a valid token with a character appended');
      await refused(TEST_TOKEN.slice(0, -1), 'a valid token with its last character cut');
    });
    it('a token of any length works, asked again too, and is refused once its client is revoked', async () => {
      const { client } = await server.service.clients.add({ name: 'Long Token Realty' });
      const long = `${'L0ng-token.'.repeat(30)}end`;
      expect(await server.service.clients.issueToken(client.id, undefined, long)).to.equal(long);
      await works(long, 'a 333-character token');
      await works(long, 'the same token, asked again');
      await refused(`${long}x`, 'the long token with a character appended');
      await server.service.clients.revoke(client.id);
      await refused(long, 'the long token of a revoked client');
    });
    it('an expired token (issued with a one-second lifetime) stops working once it expires, even after use', async function () {
      this.timeout(10_000);
      const token = await server.service.clients.issueToken(alpha.id, 1);
      await works(token, 'fresh short-lived token');
      clock.advance(999);
      await works(token, 'a short-lived token just before it expires');
      clock.advance(1);
      await refused(token, 'expired token');
      await refused(token, 'expired token, asked again');
    });
    it('a token of a revoked client stops working at once (also one in the cache), and so does its secret', async () => {
      const { client, secret } = await server.service.clients.add({ name: 'Revoked Realty' });
      const cached = await server.service.clients.issueToken(client.id, undefined);
      const unused = await server.service.clients.issueToken(client.id, 3600);
      await works(cached, 'before revocation');
      await server.service.clients.revoke(client.id);
      await refused(cached, 'revoked, token used before');
      await refused(unused, 'revoked, token never used');
      expectTokenError(await requestToken(base, { id: client.id, secret, via: 'basic' }), 'revoked client at the token endpoint', 401, 'invalid_client');
    });
  });

  describe('POST /oauth2/token (client_credentials)', function () {
    this.timeout(60_000);
    it('HTTP Basic credentials: {access_token, token_type: Bearer, expires_in}, Cache-Control: no-store; the token works', async () => {
      const token = expectIssued(await requestToken(base, { ...alpha, via: 'basic' }), 'basic');
      await works(token, 'token from Basic credentials');
      const r = await request(`${base}/Property('${listingKey}')`, { token });
      expect(r.status).to.equal(200);
      expect(r.json.ListingKey).to.equal(listingKey);
    });
    it('form-body credentials (client_id, client_secret) work the same', async () => {
      const token = expectIssued(await requestToken(base, { ...alpha, via: 'form' }), 'form');
      await works(token, 'token from form credentials');
    });
    it('every request gets a new token, and both work', async () => {
      const a = expectIssued(await requestToken(base, { ...alpha, via: 'basic' }), 'first');
      const b = expectIssued(await requestToken(base, { ...alpha, via: 'form' }), 'second');
      expect(a).not.to.equal(b);
      await works(a, 'first');
      await works(b, 'second');
    });
    it('a wrong secret or an unknown client: 401 invalid_client (with WWW-Authenticate: Basic when Basic was used)', async () => {
      const cases = [
        ['wrong secret', { id: alpha.id, secret: `${alpha.secret}x` }],
        ['unknown client', { id: 'nobody', secret: alpha.secret }],
        ['empty secret', { id: alpha.id, secret: '' }],
      ] as const;
      for (const [label, creds] of cases) {
        const basic = await requestToken(base, { ...creds, via: 'basic' });
        expectTokenError(basic, `${label} (Basic)`, 401, 'invalid_client');
        expect(basic.headers.get('www-authenticate'), `${label} (Basic)`).to.match(/^Basic\b/);
        expectTokenError(await requestToken(base, { ...creds, via: 'form' }), `${label} (form)`, 401, 'invalid_client');
      }
      const none = await requestToken(base, { via: 'none' });
      expectTokenError(none, 'no credentials at all', 401, 'invalid_client');
      const garbled = await request(`${originOf(base)}/oauth2/token`, {
        method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` },
        body: 'grant_type=client_credentials',
      });
      expectTokenError(garbled, 'Basic without a colon', 401, 'invalid_client');
      expect(garbled.headers.get('www-authenticate')).to.match(/^Basic\b/);
    });
    it('a missing grant_type: 400 invalid_request; another grant type: 400 unsupported_grant_type', async () => {
      expectTokenError(await requestToken(base, { ...alpha, via: 'basic' }, {}), 'missing grant_type', 400, 'invalid_request');
      for (const grant of ['password', 'authorization_code', 'refresh_token', 'CLIENT_CREDENTIALS']) {
        expectTokenError(await requestToken(base, { ...alpha, via: 'basic' }, { grant_type: grant }), `grant_type=${grant}`, 400, 'unsupported_grant_type');
      }
    });
    it('a parameter sent twice (client_secret=a&client_secret=b, or grant_type twice): 400 invalid_request, never 500 (RFC 6749 §3.2)', async () => {
      const form = (extra: string) => request(`${originOf(base)}/oauth2/token`, {
        method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `grant_type=client_credentials&client_id=${encodeURIComponent(alpha.id)}&${extra}`,
      });
      const twice = await form(`client_secret=${encodeURIComponent(alpha.secret)}&client_secret=b`);
      expectTokenError(twice, 'client_secret twice', 400, 'invalid_request');
      expect(twice.json.error_description).to.match(/client_secret is sent more than once/);
      expectTokenError(await form(`client_secret=${encodeURIComponent(alpha.secret)}&grant_type=client_credentials`), 'grant_type twice', 400, 'invalid_request');
    });
    it('rotate: the old secret is refused, the new one works, and tokens issued before the rotation stop working at once', async () => {
      const { client, secret: old } = await server.service.clients.add({ name: 'Rotating Realty' });
      const before = expectIssued(await requestToken(base, { id: client.id, secret: old, via: 'basic' }), 'before rotation');
      await works(before, 'token issued before rotation, before it');
      const rotation = await server.service.clients.rotate(client.id);
      expect(rotation.secret).not.to.equal(old);
      expect(rotation.tokensEnded, 'the one token issued').to.equal(1);
      expect(rotation.staticToken, 'no static token before: none after').to.equal(undefined);
      expectTokenError(await requestToken(base, { id: client.id, secret: old, via: 'basic' }), 'old secret (Basic)', 401, 'invalid_client');
      expectTokenError(await requestToken(base, { id: client.id, secret: old, via: 'form' }), 'old secret (form)', 401, 'invalid_client');
      await works(expectIssued(await requestToken(base, { id: client.id, secret: rotation.secret, via: 'form' }), 'new secret'), 'token from the new secret');
      await refused(before, 'token issued before rotation (it was cached)');
    });
    it('rotate a client with a static token: a new static token replaces it, and the old one is refused', async () => {
      const { client } = await server.service.clients.add({ name: 'Static Rotating' });
      const oldStatic = await server.service.clients.issueToken(client.id, undefined);
      await works(oldStatic, 'static token before rotation');
      const rotation = await server.service.clients.rotate(client.id);
      expect(rotation.staticToken).to.be.a('string').and.not.equal(oldStatic);
      expect(rotation.tokensEnded).to.equal(1);
      await refused(oldStatic, 'old static token after rotation');
      await works(rotation.staticToken!, 'new static token');
    });
  });

  describe('storage', function () {
    this.timeout(60_000);
    it('secrets and tokens are stored only as hashes (reso_clients and reso_tokens hold neither, in any common encoding)', async () => {
      const secrets: string[] = [alpha.secret];
      const tokens: string[] = [TEST_TOKEN];
      for (let i = 0; i < 3; i++) {
        const { client, secret } = await server.service.clients.add({ name: `Hash check ${i}` });
        secrets.push(secret, (await server.service.clients.rotate(client.id)).secret);
        tokens.push(await server.service.clients.issueToken(client.id, undefined));
        tokens.push(await server.service.clients.issueToken(client.id, 60));
        const issued = await requestToken(base, { id: client.id, secret: secrets[secrets.length - 1], via: 'basic' });
        tokens.push(expectIssued(issued, 'hash check'));
      }
      const dump = JSON.stringify([
        ...(await server.service.db.all('SELECT * FROM `reso_clients`')),
        ...(await server.service.db.all('SELECT * FROM `reso_tokens`')),
      ]);
      expect(dump).to.include('alpha'); // the tables were read
      for (const s of [...secrets, ...tokens]) {
        const forms = [s, Buffer.from(s).toString('base64'), Buffer.from(s).toString('base64url'), Buffer.from(s).toString('hex')];
        for (const f of forms) expect(dump.includes(f), `a secret or token (${s.slice(0, 6)}…) is stored in clear`).to.equal(false);
      }
    });
  });

  describe('operator CLI: reso-server clients add|list|rotate|scope|revoke', function () {
    this.timeout(60_000);
    let cli: { id: string; secret: string; token?: string };

    it('clients add --name X --static-token prints an id, a secret and a static token that work over HTTP', async function () {
      this.timeout(30_000);
      const r = await runCli(db.url, ['clients', 'add', '--name', 'CLI Brokerage', '--static-token']);
      expect(r.code, r.stderr).to.equal(0);
      cli = parseCredentials(r.stdout);
      expect(cli.token).to.be.a('string');
      await works(cli.token!, 'static token from the CLI');
      await works(expectIssued(await requestToken(base, { id: cli.id, secret: cli.secret, via: 'basic' }), 'CLI secret'), 'token from the CLI secret');
    });
    it('clients add --id chooses the id; clients list shows the clients', async function () {
      this.timeout(30_000);
      const r = await runCli(db.url, ['clients', 'add', '--name', 'Named Client', '--id', 'named-client.1']);
      expect(r.code, r.stderr).to.equal(0);
      const named = parseCredentials(r.stdout);
      expect(named.id).to.equal('named-client.1');
      expect(named.token).to.equal(undefined);
      const list = await runCli(db.url, ['clients', 'list']);
      expect(list.code, list.stderr).to.equal(0);
      for (const id of ['named-client.1', cli.id, 'alpha', 'demo']) expect(list.stdout).to.include(id);
      expect(list.stdout).not.to.include(cli.secret);
    });
    it('clients add refuses a scope that is not a filter on Property, a hidden key and a bad rate, and creates nothing', async function () {
      this.timeout(30_000);
      for (const args of [['--scope', 'NoSuchField eq 1'], ['--scope', "MlsStatus eq 'Active' and"], ['--hide', 'ListingKey'],
        ['--hide', 'NoSuchField'], ['--rate', '0'], ['--rate', 'many']]) {
        const r = await runCli(db.url, ['clients', 'add', '--name', 'Refused', '--id', 'refused-client', ...args]);
        expect(r.code, `${args.join(' ')}: ${r.stdout}`).not.to.equal(0);
        expect(r.stderr, args.join(' ')).to.match(/\S/);
      }
      expect(await server.service.clients.get('refused-client')).to.equal(undefined);
    });
    it('clients rotate <id> (another process): new secret and static token work; the old ones, and old tokens, are refused within 1 s', async function () {
      this.timeout(30_000);
      const issued = expectIssued(await requestToken(base, { id: cli.id, secret: cli.secret, via: 'basic' }), 'before CLI rotate');
      await works(issued, 'OAuth token before CLI rotate');
      await works(cli.token!, 'static token before CLI rotate');
      const r = await runCli(db.url, ['clients', 'rotate', cli.id]);
      expect(r.code, r.stderr).to.equal(0);
      const rotated = parseCredentials(r.stdout);
      expect(rotated.id).to.equal(cli.id);
      expect(rotated.token, 'a static-token client gets a new static token').to.be.a('string').and.not.equal(cli.token);
      expect(r.stdout).to.match(/old secret no longer works/);
      expect(r.stdout).to.match(/old static token, which no longer works/);
      expect(r.stdout).to.match(/3 access tokens issued before the rotation no longer work \(on running servers within 1 s\)/);
      expectTokenError(await requestToken(base, { id: cli.id, secret: cli.secret, via: 'basic' }), 'old secret after CLI rotate', 401, 'invalid_client');
      await works(expectIssued(await requestToken(base, { id: cli.id, secret: rotated.secret, via: 'form' }), 'rotated secret'), 'rotated');
      await works(rotated.token!, 'new static token');
      // Another process rotated: this server forgets its cached lookups when it next reads the credentials mark.
      clock.advance(1_000);
      await refused(cli.token!, 'old static token 1 s after CLI rotate');
      await refused(issued, 'OAuth token issued before CLI rotate, 1 s after');
      cli = { ...cli, secret: rotated.secret, token: rotated.token };
    });
    it('clients scope <id> --scope F changes the listings it sees and stamps a scope epoch; a bad filter or id changes nothing', async function () {
      this.timeout(30_000);
      const r = await runCli(db.url, ['clients', 'scope', cli.id, '--scope', "MlsStatus eq 'Active'"]);
      expect(r.code, r.stderr).to.equal(0);
      const changed = await server.service.clients.get(cli.id);
      expect(changed?.scope).to.equal("MlsStatus eq 'Active'");
      expect(changed?.scopeEpoch).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      for (const args of [[cli.id, '--scope', 'NoSuchField eq 1'], ['no-such-client', '--scope', "MlsStatus eq 'Active'"]]) {
        const refusedChange = await runCli(db.url, ['clients', 'scope', ...args]);
        expect(refusedChange.code, args.join(' ')).not.to.equal(0);
      }
      expect(await server.service.clients.get(cli.id)).to.deep.equal(changed);
      const all = await runCli(db.url, ['clients', 'scope', cli.id]);
      expect(all.code, all.stderr).to.equal(0);
      expect((await server.service.clients.get(cli.id))?.scope).to.equal(undefined);
    });
    it('clients revoke <id> (another process): tokens are refused within 1 s, unused ones at once', async function () {
      this.timeout(30_000);
      const unused = await server.service.clients.issueToken(cli.id, undefined);
      await works(cli.token!, 'before CLI revoke');
      const r = await runCli(db.url, ['clients', 'revoke', cli.id]);
      expect(r.code, r.stderr).to.equal(0);
      await refused(unused, 'token never used, after CLI revoke');
      expect((await server.service.clients.get(cli.id))?.revokedAt, 'the revocation is in the database').to.be.a('string');
      // Another process revoked it: this server learns of it when it next reads the credentials mark, 1 s at most.
      const cached = await request(`${base}/Property?$top=1`, { token: cli.token });
      expect(cached.status, 'the used token, within the bound (cached or refused)').to.be.oneOf([200, 401]);
      clock.advance(1_000);
      const res = await request(`${base}/Property?$top=1`, { token: cli.token });
      expectBearer401(res, 'cached token 1 s after CLI revoke', 'invalid_token');
      expectTokenError(await requestToken(base, { id: cli.id, secret: cli.secret, via: 'basic' }), 'secret after CLI revoke', 401, 'invalid_client');
      const list = await runCli(db.url, ['clients', 'list']);
      expect(list.stdout.split('\n').find((l) => l.startsWith(cli.id))).to.match(/revoked/);
    });
  });

  describe('static tokens', function () {
    this.timeout(60_000);
    it('work, and survive a server restart (a new server on the same database); refused tokens stay refused', async function () {
      this.timeout(60_000);
      const { client, secret } = await server.service.clients.add({ id: 'static-client', name: 'Static' });
      const staticToken = await server.service.clients.issueToken(client.id, undefined);
      const chosen = await server.service.clients.issueToken(client.id, undefined, 'chosen-static-token-42');
      expect(chosen).to.equal('chosen-static-token-42');
      const expiring = await server.service.clients.issueToken(client.id, 1);
      await works(staticToken, 'static token');
      await works(chosen, 'chosen static token');
      const { client: gone } = await server.service.clients.add({ name: 'Gone' });
      const goneToken = await server.service.clients.issueToken(gone.id, undefined);
      await server.service.clients.revoke(gone.id);

      await server.close();
      server = await startTestServer(serviceModel, db.url, { pageSize: 3 }, { clock });
      base = server.url;
      clock.advance(1_000);
      await works(staticToken, 'static token after restart');
      await works(chosen, 'chosen static token after restart');
      await works(TEST_TOKEN, 'demo token after restart');
      await works(expectIssued(await requestToken(base, { id: client.id, secret, via: 'basic' }), 'after restart'), 'secret after restart');
      await refused(goneToken, 'revoked client token after restart');
      await refused(expiring, 'expired token after restart');
      const pages = await walkPages(`${base}/Property?$select=ListingKey`, { token: staticToken, endAtError: true });
      expect(pages.pages.every((p) => p.status === 200)).to.equal(true);
      expect(pages.records).to.have.length(8);
    });
  });
});
