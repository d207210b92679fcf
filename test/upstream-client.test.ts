/**
 * Issue 41, the HTTP client of an upstream (src/pull/upstream-client.ts) as src/pull/upstream.ts promises it:
 * against a real reso-server (a token from its CLI, OAuth2 client credentials from its own token endpoint), through
 * a proxy that injects an upstream's faults, and against SAP CAP (a generic OData v4 server paging by `$skip`).
 * Waits go through an injected sleep that moves a manual clock: backoff and Retry-After are measured, not slept.
 */
import { expect } from 'chai';
import { createUpstream } from '../src/pull/upstream-client';
import { Upstream, UpstreamEvent, UpstreamFault, UpstreamOptions } from '../src/pull/upstream';
import { CapUpstream, requireCap, startCapUpstream } from './support/cap-upstream';
import { sqliteTarget, TestDatabase } from './support/databases';
import { FaultProxy } from './support/fault-proxy';
import { request } from './support/http';
import { parseCredentials, runCli } from './support/licence-http';
import { ManualClock } from './support/manual-clock';
import { ServerProcess, spawnServer } from './support/server-process';
import { walk } from './support/upstream-walk';

const LISTINGS = 120;
const PAGE = 25;
const QUERY = 'Property?$select=ListingKey,ModificationTimestamp,ListPrice&$orderby=ListingKey';

interface Harness {
  readonly upstream: Upstream;
  readonly clock: ManualClock;
  /** Every wait the client asked for, in order. */
  readonly waits: number[];
  readonly events: UpstreamEvent[];
}

function harness(baseUrl: string, auth: UpstreamOptions['auth'], overrides: Partial<UpstreamOptions> = {}): Harness {
  const clock = new ManualClock();
  const waits: number[] = [];
  const events: UpstreamEvent[] = [];
  const upstream = createUpstream({
    baseUrl,
    auth,
    requestsPerSecond: Number.POSITIVE_INFINITY,
    timeoutMs: 5_000,
    maxResponseBytes: 1_000_000,
    retry: { attempts: 3, firstWaitMs: 200, maxWaitMs: 5_000 },
    clock,
    sleep: async (ms) => { waits.push(ms); clock.advance(ms); },
    onEvent: (e) => events.push(e),
    ...overrides,
  });
  return { upstream, clock, waits, events };
}

async function fault(work: Promise<unknown>): Promise<UpstreamFault> {
  try {
    await work;
  } catch (e) {
    if (e instanceof UpstreamFault) return e;
    throw e;
  }
  throw new Error('no UpstreamFault');
}

describe('The upstream client (issue 41) against a reso-server', () => {
  let db: TestDatabase;
  let server: ServerProcess;
  let proxy: FaultProxy;
  let credentials: { id: string; secret: string; token?: string };
  let bearer: UpstreamOptions['auth'];
  const open: Upstream[] = [];
  const use = (h: Harness) => { open.push(h.upstream); return h; };
  /** The page a client gets straight from the server, no proxy between. */
  const direct = async (url: string) => {
    const r = await request(new URL(url, `${server.url}/`).toString(), { token: credentials.token, headers: { Prefer: `odata.maxpagesize=${PAGE}` } });
    return (r.json as { value: unknown[] }).value;
  };

  before(async function () {
    this.timeout(60_000);
    db = await sqliteTarget.create();
    server = await spawnServer(db.url, { SEED_LISTINGS: String(LISTINGS) });
    const added = await runCli(db.url, ['clients', 'add', '--name', 'Puller', '--static-token']);
    expect(added.code, added.stderr).to.equal(0);
    credentials = parseCredentials(added.stdout);
    bearer = { kind: 'bearer', token: credentials.token! };
    proxy = new FaultProxy(server.url);
    await proxy.start();
  });
  afterEach(async () => {
    proxy.clear();
    await Promise.all(open.splice(0).map((u) => u.close()));
  });
  after(async () => {
    await proxy?.stop();
    await server?.stop();
    await db?.drop();
  });

  describe('pages', () => {
    it('walks every page by nextLink, each whole and at most odata.maxpagesize, gzip decoded, with the count', async () => {
      const { upstream, events } = use(harness(proxy.url, bearer));
      const before = proxy.served.length;
      const pages = await walk(upstream, `${QUERY}&$count=true`, PAGE);
      const keys = pages.flatMap((p) => p.records.map((r) => r.ListingKey));
      expect(keys).to.have.length(LISTINGS);
      expect(new Set(keys).size).to.equal(LISTINGS);
      expect(pages[0].count).to.equal(LISTINGS);
      expect(pages.slice(0, -1).every((p) => p.records.length === PAGE)).to.equal(true);
      expect(pages.every((p) => !p.nextLink || p.nextLink.startsWith(proxy.origin))).to.equal(true);
      expect(proxy.served.slice(before).every((s) => s.encoding === 'gzip')).to.equal(true);
      expect(events).to.have.length(pages.length);
      expect(events.every((e) => e.status === 200 && !e.fault && e.bytes! > 0)).to.equal(true);
    });

    for (const encoding of ['deflate', 'br'] as const) {
      it(`decodes ${encoding} bodies`, async () => {
        const { upstream } = use(harness(proxy.url, bearer));
        proxy.encoding = encoding;
        try {
          const before = proxy.served.length;
          expect((await upstream.page(QUERY, { maxPageSize: PAGE })).records).to.deep.equal(await direct(QUERY));
          expect(proxy.served.slice(before).map((s) => s.encoding)).to.deep.equal([encoding]);
        } finally {
          proxy.encoding = 'gzip';
        }
      });
    }

    it('reads $metadata as CSDL', async () => {
      const { upstream } = use(harness(server.url, bearer));
      expect(await upstream.metadata()).to.match(/<edmx:Edmx Version="4\.0"[^]*<EntitySet Name="Property"/);
    });

    it('a request the upstream refuses (400 on a query, not a nextLink) is `refused`, not retried', async () => {
      const { upstream, events } = use(harness(server.url, bearer));
      const f = await fault(upstream.page("Property?$filter=NoSuchField eq 'x'"));
      expect([f.kind, f.status]).to.deep.equal(['refused', 400]);
      expect(events.map((e) => e.retrying)).to.deep.equal([false]);
    });
  });

  describe('429 and Retry-After', () => {
    it('waits the Retry-After seconds asked, then gets the page', async () => {
      const { upstream, waits, events } = use(harness(proxy.url, bearer));
      proxy.queue({ kind: 'status', status: 429, retryAfter: '3' });
      const page = await upstream.page(QUERY, { maxPageSize: PAGE });
      expect(page.records).to.deep.equal(await direct(QUERY));
      expect(waits).to.deep.equal([3000]);
      expect(events.map((e) => [e.status, e.fault, e.retrying])).to.deep.equal([[429, 'rate-limited', true], [200, undefined, undefined]]);
    });

    it('reads a Retry-After HTTP date', async () => {
      const h = use(harness(proxy.url, bearer));
      proxy.queue({ kind: 'status', status: 429, retryAfter: new Date(h.clock.now() + 5000).toUTCString() });
      await h.upstream.page(QUERY);
      expect(h.waits).to.have.length(1);
      expect(h.waits[0]).to.be.within(4000, 5000);
    });

    it('a Retry-After longer than the longest wait allowed is not waited: `rate-limited` with retryAfterMs, at once', async () => {
      const { upstream, waits } = use(harness(proxy.url, bearer));
      proxy.queue({ kind: 'status', status: 429, retryAfter: '600' });
      const f = await fault(upstream.page(QUERY));
      expect([f.kind, f.status, f.retryAfterMs]).to.deep.equal(['rate-limited', 429, 600_000]);
      expect(waits).to.deep.equal([]);
    });

    it('429 past the retries is `rate-limited`, after exactly 1 + attempts requests', async () => {
      const { upstream, waits } = use(harness(proxy.url, bearer));
      const before = proxy.served.length;
      proxy.queue(...Array.from({ length: 5 }, () => ({ kind: 'status' as const, status: 429, retryAfter: '1' })));
      const f = await fault(upstream.page(QUERY));
      expect(f.kind).to.equal('rate-limited');
      expect(proxy.served.length - before).to.equal(4);
      expect(waits).to.deep.equal([1000, 1000, 1000]);
    });
  });

  describe('5xx, timeouts and dropped connections: bounded backoff with jitter', () => {
    it('503 is retried after waits that double (each between half and all of its ceiling), then the page is whole', async () => {
      const { upstream, waits } = use(harness(proxy.url, bearer));
      proxy.queue({ kind: 'status', status: 503 }, { kind: 'status', status: 500 }, { kind: 'status', status: 503 });
      const page = await upstream.page(QUERY, { maxPageSize: PAGE });
      expect(page.records).to.deep.equal(await direct(QUERY));
      expect(waits).to.have.length(3);
      [200, 400, 800].forEach((ceiling, i) => expect(waits[i]).to.be.within(ceiling / 2, ceiling));
    });

    it('5xx past the retries is `server-error`; no wait passes maxWaitMs', async () => {
      const { upstream, waits } = use(harness(proxy.url, bearer, { retry: { attempts: 6, firstWaitMs: 200, maxWaitMs: 1000 } }));
      proxy.queue(...Array.from({ length: 7 }, () => ({ kind: 'status' as const, status: 502 })));
      const f = await fault(upstream.page(QUERY));
      expect([f.kind, f.status]).to.deep.equal(['server-error', 502]);
      expect(waits).to.have.length(6);
      expect(Math.max(...waits)).to.be.at.most(1000);
    });

    it('a body dribbled past timeoutMs is a `timeout`, retried; the page then comes whole', async () => {
      const { upstream, events } = use(harness(proxy.url, bearer, { timeoutMs: 400 }));
      proxy.queue({ kind: 'slow', chunkBytes: 16, everyMs: 50 });
      const page = await upstream.page(QUERY, { maxPageSize: PAGE });
      expect(page.records).to.deep.equal(await direct(QUERY));
      expect(events.map((e) => [e.fault, e.retrying])).to.deep.equal([['timeout', true], [undefined, undefined]]);
      expect(events[0].ms).to.be.within(380, 2000);
    });

    it('a slow body within timeoutMs is read whole', async () => {
      const { upstream, events } = use(harness(proxy.url, bearer));
      proxy.queue({ kind: 'slow', chunkBytes: 256, everyMs: 10 });
      const page = await upstream.page(QUERY, { maxPageSize: PAGE });
      expect(page.records).to.deep.equal(await direct(QUERY));
      expect(events.map((e) => e.fault)).to.deep.equal([undefined]);
    });

    it('a connection dropped mid-body is `connection`, retried; never a partial page', async () => {
      const { upstream, events } = use(harness(proxy.url, bearer));
      proxy.queue({ kind: 'drop' }, { kind: 'drop' });
      const page = await upstream.page(QUERY, { maxPageSize: PAGE });
      expect(page.records).to.deep.equal(await direct(QUERY));
      expect(events.map((e) => [e.fault, e.retrying])).to.deep.equal([['connection', true], ['connection', true], [undefined, undefined]]);
    });

    it('a refused connection is `connection` after the retries', async () => {
      const closed = new FaultProxy(server.url);
      await closed.start();
      const url = closed.url;
      await closed.stop();
      const { upstream, waits } = use(harness(url, bearer, { retry: { attempts: 2, firstWaitMs: 10, maxWaitMs: 100 } }));
      const f = await fault(upstream.page(QUERY));
      expect(f.kind).to.equal('connection');
      expect(waits).to.have.length(2);
    });
  });

  describe('answers that are not a whole OData page: never retried, never a partial page', () => {
    const cases: [string, Parameters<FaultProxy['queue']>[0], string][] = [
      ['a page cut mid-JSON', { kind: 'cut' }, 'malformed'],
      ['an HTML error page with 200', { kind: 'html' }, 'not-odata'],
      ['a page without `value`', { kind: 'no-value' }, 'not-odata'],
      ['a body larger than maxResponseBytes', { kind: 'oversized', bytes: 2_000_000 }, 'too-large'],
    ];
    for (const [what, injected, kind] of cases) {
      it(`${what} is \`${kind}\``, async () => {
        const { upstream, events } = use(harness(proxy.url, bearer));
        const before = proxy.served.length;
        proxy.queue(injected);
        const f = await fault(upstream.page(QUERY));
        expect(f.kind).to.equal(kind);
        expect(proxy.served.length - before).to.equal(1);
        expect(events.map((e) => [e.fault, e.retrying])).to.deep.equal([[kind, false]]);
      });
    }

    it('a nextLink to another origin is `refused` and not followed: the credentials go to the upstream only', async () => {
      const { upstream } = use(harness(proxy.url, bearer));
      proxy.queue({ kind: 'elsewhere', origin: 'http://127.0.0.1:1' });
      const first = await upstream.page(QUERY, { maxPageSize: PAGE });
      expect(first.nextLink).to.match(/^http:\/\/127\.0\.0\.1:1\//);
      const f = await fault(upstream.page(first.nextLink!));
      expect(f.kind).to.equal('refused');
      expect(f.message).to.not.include(credentials.token!);
    });

    it('a record without its key is handed over as served (the puller judges records)', async () => {
      const { upstream } = use(harness(proxy.url, bearer));
      proxy.queue({ kind: 'keyless', key: 'ListingKey' });
      const page = await upstream.page(QUERY, { maxPageSize: PAGE });
      expect(page.records[0]).to.not.have.property('ListingKey');
      expect(page.records).to.have.length(PAGE);
    });
  });

  describe('expiring nextLinks', () => {
    it('a nextLink refused after its allowed uses is `link-expired` (410), not retried', async () => {
      const { upstream } = use(harness(proxy.url, bearer));
      proxy.expireLinks({ afterUses: 1, status: 410 });
      const first = await upstream.page(QUERY, { maxPageSize: PAGE });
      await upstream.page(first.nextLink!, { maxPageSize: PAGE });
      const before = proxy.served.length;
      const f = await fault(upstream.page(first.nextLink!, { maxPageSize: PAGE }));
      expect([f.kind, f.status]).to.deep.equal(['link-expired', 410]);
      expect(proxy.served.length - before).to.equal(1);
    });

    it('a nextLink refused after a time (400) is `link-expired`; the query it came from still answers', async () => {
      const { upstream } = use(harness(proxy.url, bearer));
      proxy.expireLinks({ afterMs: 0, status: 400 });
      const first = await upstream.page(QUERY, { maxPageSize: PAGE });
      const f = await fault(upstream.page(first.nextLink!, { maxPageSize: PAGE }));
      expect([f.kind, f.status]).to.deep.equal(['link-expired', 400]);
      expect((await upstream.page(QUERY, { maxPageSize: PAGE })).records).to.deep.equal(first.records);
    });
  });

  describe('request rate', () => {
    it('requests are spaced to requestsPerSecond, in sequence and concurrently', async () => {
      const { upstream, waits, clock } = use(harness(server.url, bearer, { requestsPerSecond: 5 }));
      const started = clock.now();
      for (let i = 0; i < 3; i++) await upstream.page(QUERY, { maxPageSize: 5 });
      await Promise.all(Array.from({ length: 4 }, () => upstream.page(QUERY, { maxPageSize: 5 })));
      expect(waits.reduce((a, b) => a + b, 0)).to.equal(6 * 200);
      expect(waits.every((w) => w <= 200)).to.equal(true);
      expect(clock.now() - started).to.equal(6 * 200);
    });
  });

  describe('authentication', () => {
    const tokenRequests = () => proxy.served.filter((s) => s.method === 'POST' && s.url === '/oauth2/token');
    const oauth = (secret = credentials.secret): UpstreamOptions['auth'] => ({ kind: 'client-credentials', tokenUrl: `${proxy.origin}/oauth2/token`, clientId: credentials.id, clientSecret: secret });

    it('OAuth2 client credentials: one token from the token endpoint serves every page until shortly before it expires', async () => {
      const { upstream, clock } = use(harness(proxy.url, oauth()));
      const before = tokenRequests().length;
      expect((await walk(upstream, QUERY, PAGE)).flatMap((p) => p.records)).to.have.length(LISTINGS);
      expect(tokenRequests().length - before).to.equal(1);
      clock.advance(59 * 60_000);
      await upstream.page(QUERY);
      expect(tokenRequests().length - before).to.equal(2);
    });

    it('a 401 fetches a token again once; a second 401 is `credentials-refused`', async () => {
      const { upstream } = use(harness(proxy.url, oauth()));
      await upstream.page(QUERY);
      const before = tokenRequests().length;
      proxy.when(/^\/odata\/Property/, { kind: 'status', status: 401 }, 1);
      expect((await upstream.page(QUERY)).records).to.have.length.above(0);
      expect(tokenRequests().length - before).to.equal(1);
      proxy.when(/^\/odata\/Property/, { kind: 'status', status: 401 }, 2);
      const f = await fault(upstream.page(QUERY));
      expect([f.kind, f.status]).to.deep.equal(['credentials-refused', 401]);
      expect(tokenRequests().length - before).to.equal(2);
    });

    it('a token endpoint refusing the client is `credentials-refused` after one request, the secret in no message nor event', async () => {
      const secret = 'wrong-secret-9c1f0e7a';
      const { upstream, events } = use(harness(proxy.url, oauth(secret)));
      const before = tokenRequests().length;
      const f = await fault(upstream.page(QUERY));
      expect([f.kind, f.status]).to.deep.equal(['credentials-refused', 401]);
      expect(f.message).to.match(/invalid_client/);
      expect(tokenRequests().length - before).to.equal(1);
      expect(`${f.message} ${f.stack} ${JSON.stringify(events)}`).to.not.include(secret);
    });

    it('a bearer token refused is `credentials-refused` at once, the token in no message nor event', async () => {
      const token = 'not-a-token-4e1d8b2c';
      const { upstream, events, waits } = use(harness(proxy.url, { kind: 'bearer', token }));
      const f = await fault(upstream.page(QUERY));
      expect([f.kind, f.status]).to.deep.equal(['credentials-refused', 401]);
      expect(waits).to.deep.equal([]);
      expect(`${f.message} ${f.stack} ${JSON.stringify(events)}`).to.not.include(token);
    });
  });
});

describe('The upstream client (issue 41) against SAP CAP, a generic OData v4 server', () => {
  const records = Array.from({ length: 57 }, (_, i) => ({
    ListingKey: `CAP${String(i).padStart(4, '0')}`,
    ModificationTimestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    StandardStatus: 'Active',
    ListPrice: 100_000 + i,
    City: 'Capton',
  }));
  let cap: CapUpstream;
  let upstream: Upstream;

  before(async function () {
    this.timeout(120_000);
    requireCap(this);
    cap = await startCapUpstream(records, 10);
    upstream = harness(cap.url, { kind: 'none' }).upstream;
  });
  after(async () => {
    await upstream?.close();
    await cap?.stop();
  });

  it('walks $skip-based nextLinks to every record, with the count, at the page size CAP allows', async () => {
    const pages = await walk(upstream, 'Property?$count=true&$orderby=ModificationTimestamp,ListingKey', 25);
    expect(pages.map((p) => p.records.length)).to.deep.equal([10, 10, 10, 10, 10, 7]);
    expect(pages[0].count).to.equal(records.length);
    expect(pages[0].nextLink).to.match(/^http:\/\/127\.0\.0\.1:\d+\/odata\/Property\?.*skiptoken=10\b/);
    expect(pages.flatMap((p) => p.records.map((r) => [r.ListingKey, r.ModificationTimestamp, r.ListPrice])))
      .to.deep.equal(records.map((r) => [r.ListingKey, r.ModificationTimestamp, r.ListPrice]));
  });

  it('sees records changed and removed while CAP runs', async () => {
    cap.upsert([{ ...records[3], ListPrice: 1, ModificationTimestamp: new Date(Date.UTC(2026, 1, 1)).toISOString() }]);
    cap.remove([records[4].ListingKey]);
    const keys = (await walk(upstream, 'Property?$orderby=ListingKey')).flatMap((p) => p.records);
    expect(keys).to.have.length(records.length - 1);
    expect(keys.find((r) => r.ListingKey === records[3].ListingKey)?.ListPrice).to.equal(1);
    expect(keys.some((r) => r.ListingKey === records[4].ListingKey)).to.equal(false);
  });

  it('reads its $metadata (CSDL 4.0)', async () => {
    expect(await upstream.metadata()).to.match(/<edmx:Edmx Version="4\.0"/);
  });
});
