/**
 * Query fuzzing over HTTP: generated and mutated $filter/$orderby/$select/$expand/$top/$count strings, page
 * sizes and $skiptokens (followed from nextLinks, and forged with the known PAGING_SECRET), seeded and
 * deterministic, sent to a real server configured at the largest FILTER_MAX_LENGTH and MAX_PAGE_SIZE the service
 * accepts. Whatever the input, the service answers 200, 400, 403, 404, 413 or 501 — never 5xx — with a JSON body
 * (an OData error body when not 200), keeps answering simple requests while it is being fuzzed, and afterwards.
 * ≥ 10,000 requests on each database (MariaDB with MYSQL_URL); a failure prints the seed (FUZZ_SEED=n reruns
 * with another). How promptly it answers them is measured by bench/responsiveness.ts, not asserted here.
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { serviceModel } from '../generated';
import { configFromEnv } from '../src/config/config';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { DatabaseTarget, describeEachDatabase, TestDatabase } from './support/databases';
import { startTestServer, TEST_TOKEN } from './support/http';
import { plantEdgeCases } from './support/query-data';
import { digestOf, forgedPosition, sealToken } from './support/forged-skiptokens';
import { EdgeGenerator, encodeQueryValue, ExpressionGenerator, mutate, Rng } from './support/query-fuzz-gen';

/** The largest FILTER_MAX_LENGTH and MAX_PAGE_SIZE configFromEnv accepts (checked in the suite). */
const MAX_FILTER = 512 * 1024;
const MAX_PAGE = 10_000;
const PAGING_SECRET = 'fuzz-paging-secret';
const ALLOWED = new Set([200, 400, 403, 404, 413, 501]);
const CONCURRENCY = 16;
/** While fuzzing, a simple request goes out after every this many answers. */
const HEARTBEAT_EVERY = 250;
/** Longest wait for an answer before it counts as none (a hang guard, not a measure of speed). */
const NO_ANSWER_MS = 30_000;

interface Answer { url: string; status: number; text: string; contentType: string; error?: string }
/** A request: its URL under the service root, and a Prefer header to send with it. */
interface FuzzRequest { readonly url: string; readonly prefer?: string }
interface Problem { url: string; why: string; status: number; body: string }

/** Requests sent so far (all suites in this file). */
let sent = 0;

async function send(base: string, url: string, prefer?: string): Promise<Answer> {
  sent++;
  try {
    const headers: Record<string, string> = { Authorization: `Bearer ${TEST_TOKEN}`, ...(prefer ? { Prefer: prefer } : {}) };
    const res = await fetch(`${base}${url}`, { signal: AbortSignal.timeout(NO_ANSWER_MS), headers });
    const text = await res.text();
    return { url, status: res.status, text, contentType: res.headers.get('content-type') ?? '' };
  } catch (e) {
    return { url, status: 0, text: '', contentType: '', error: String((e as Error)?.message ?? e) };
  }
}

/**
 * A request whose `written` resolves once it has been handed to the socket, so that another can be sent
 * while this one is surely in flight.
 */
function sendInFlight(base: string, url: string): { written: Promise<void>; answer: Promise<Answer> } {
  sent++;
  let written!: () => void;
  const writtenP = new Promise<void>((r) => { written = r; });
  const answer = new Promise<Answer>((resolve) => {
    const req = httpRequest(`${base}${url}`, { headers: { Authorization: `Bearer ${TEST_TOKEN}` }, timeout: NO_ANSWER_MS }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ url, status: res.statusCode ?? 0, text, contentType: String(res.headers['content-type'] ?? '') }));
    });
    req.on('finish', written);
    req.on('timeout', () => req.destroy(new Error('no answer')));
    req.on('error', (e) => { written(); resolve({ url, status: 0, text: '', contentType: '', error: e.message }); });
    req.end();
  });
  return { written: writtenP, answer };
}

/** What every answer must be, whatever the request. Returns the reason it is not, or undefined. */
function judge(a: Answer): string | undefined {
  if (a.error) return `no answer: ${a.error}`;
  if (!ALLOWED.has(a.status)) return `status ${a.status}`;
  const countPath = /^\/[A-Za-z]+\/\$count(\?|$)/.test(a.url);
  if (a.status === 200 && countPath) {
    if (!/^text\/plain/.test(a.contentType)) return `content-type ${a.contentType} for /$count`;
    return /^\d+$/.test(a.text) ? undefined : 'a /$count body that is not a number';
  }
  if (!/^application\/json/.test(a.contentType)) return `content-type ${a.contentType}`;
  let body: any;
  try {
    body = JSON.parse(a.text);
  } catch {
    return 'a body that is not JSON';
  }
  if (a.status === 200) {
    if (/^\/[A-Za-z]+\(/.test(a.url)) return body && typeof body === 'object' && !Array.isArray(body) ? undefined : 'an entity that is not an object';
    return Array.isArray(body?.value) ? undefined : 'a 200 collection without a value array';
  }
  const e = body?.error;
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || e.message === '' || !Array.isArray(e.details)) return 'not an OData error body';
  return undefined;
}

/**
 * Sends every request with at most `limit` in flight; returns the answers in order. `onAnswer`: told the count so
 * far. With `follow`, every third answer that has a nextLink has it followed too, and that answer is added.
 */
async function sendAll(base: string, requests: readonly (string | FuzzRequest)[], limit = CONCURRENCY,
  onAnswer?: (answered: number) => void, follow = false): Promise<Answer[]> {
  const out: Answer[] = new Array(requests.length);
  const followed: Answer[] = [];
  let next = 0;
  let answered = 0;
  const worker = async () => {
    while (next < requests.length) {
      const i = next++;
      const req = typeof requests[i] === 'string' ? { url: requests[i] as string } : requests[i] as FuzzRequest;
      out[i] = await send(base, req.url, req.prefer);
      onAnswer?.(++answered);
      const link = follow && i % 3 === 0 ? nextLinkOf(out[i]) : undefined;
      if (link?.startsWith(base)) followed.push(await send(base, link.slice(base.length), req.prefer));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, requests.length) }, worker));
  return [...out, ...followed];
}

function nextLinkOf(a: Answer): string | undefined {
  if (a.status !== 200 || !a.text.includes('@odata.nextLink')) return undefined;
  try {
    return JSON.parse(a.text)['@odata.nextLink'];
  } catch {
    return undefined;
  }
}

function problems(answers: readonly Answer[]): Problem[] {
  const out: Problem[] = [];
  for (const a of answers) {
    const why = judge(a);
    if (why) out.push({ url: a.url, why, status: a.status, body: a.text.slice(0, 200) });
  }
  return out;
}

/** A readable report: the first few problems, each with its exact request (decoded, then as sent). */
function report(ps: readonly Problem[], n = 8): string {
  const byWhy = new Map<string, number>();
  for (const p of ps) byWhy.set(p.why, (byWhy.get(p.why) ?? 0) + 1);
  const lines = ps.slice(0, n).map((p) => {
    let decoded = p.url;
    try { decoded = decodeURIComponent(p.url); } catch { /* as sent */ }
    return `  ${p.why}: GET ${decoded.slice(0, 300)}\n    sent as ${p.url.slice(0, 300)}\n    → ${p.body}`;
  });
  return `${ps.length} bad answer(s) (${[...byWhy].map(([w, c]) => `${c}× ${w}`).join('; ')}):\n${lines.join('\n')}`;
}

const q = (path: string, options: readonly (readonly [string, string])[]) =>
  `${path}${options.length ? `?${options.map(([k, v]) => `${encodeQueryValue(k)}=${encodeQueryValue(v)}`).join('&')}` : ''}`;

/**
 * One random request: a path, a random set of options (generated, often mutated; now and then one at the
 * configuration's edges), a page size, sometimes a forged $skiptoken or a broken query string.
 */
function randomRequest(r: Rng, gen: ExpressionGenerator, edge: EdgeGenerator): FuzzRequest {
  const path = r.weighted<string>([[78, '/Property'], [6, '/Property/$count'], [3, '/Members'], [3, '/Media'], [2, '/Lookup'],
    [2, '/OpenHouses'], [2, "/Property('L000001')"], [1, '/NoSuchSet'], [1, '/property'], [2, '/Office']]);
  const maybeMutate = (s: string) => (r.chance(0.4) ? mutate(r, s) : s);
  const opts: [string, string][] = [];
  if (r.chance(0.8)) {
    const filter = r.chance(0.007) ? edge.largeFilter() : r.chance(0.04) ? edge.deep() : maybeMutate(gen.filter());
    opts.push([r.chance(0.97) ? '$filter' : r.pick(['filter', '$FILTER', '$Filter']), filter]);
  }
  if (r.chance(0.1)) opts.push(['$expand', maybeMutate(edge.expand())]);
  if (r.chance(0.3)) opts.push(['$orderby', maybeMutate(gen.orderby())]);
  if (r.chance(0.25)) opts.push(['$select', maybeMutate(gen.select())]);
  if (r.chance(0.2)) opts.push(['$top', r.pick(['0', '1', '5', '1000', '-1', 'abc', '1.5', '', '99999999999999999999', ' 3', '0x10', '1e3'])]);
  if (r.chance(0.15)) opts.push(['$count', r.pick(['true', 'false', 'TRUE', 'yes', ''])]);
  if (r.chance(0.05)) {
    opts.push([r.pick(['$skip', '$expand', '$search', '$apply', '$compute', '$skiptoken', '$format', '$frob', '$levels', 'skiptoken', 'foo', '$', '$index']),
      r.pick(['1', 'Media', 'OpenHouse($select=ListingKey)', 'Media($expand=Listing)', '*', 'x', 'json', 'xml', '', 'eyJ2IjoxfQ.abc', 'a.b.c', gen.filter()])]);
  }
  if (r.chance(0.04)) {
    // Sealed with the server's secret for this client, path and options: it opens, and its position is checked.
    const texts = Object.fromEntries(opts.filter(([k]) => k.startsWith('$')).map(([k, v]) => [k.slice(1), v]));
    opts.push(['$skiptoken', sealToken(PAGING_SECRET, digestOf(path, texts), forgedPosition(r))]);
  }
  if (r.chance(0.02) && opts.length > 0) opts.push(opts[0]);
  let url = q(path, opts);
  if (r.chance(0.03) && url.includes('?')) {
    const at = r.int(url.indexOf('?') + 1, url.length);
    url = url.slice(0, at) + r.pick(['%', '%E0%A4%A', '%FF', '%C3', '&', '&&', '=', '%00', '%2', '%ZZ', '+', '%2B']) + url.slice(at);
  }
  return { url, prefer: r.chance(0.15) ? edge.prefer() : undefined };
}

/** Inputs at the edges: deep nesting, just over the length limit, 10,000 or terms, huge lists. */
function specialRequests(): { label: string; url: string; expect?: number[] }[] {
  const F = (filter: string) => q('/Property', [['$filter', filter]]);
  const terms = (n: number, term: (i: number) => string, sep = ' or ') => Array.from({ length: n }, (_, i) => term(i)).join(sep);
  const key = (i: number) => `ListingKey eq 'L${String(i % 1_000_000).padStart(6, '0')}'`;
  return [
    { label: '5,000 ( around a comparison', url: F(`${'('.repeat(5000)}MlsStatus eq 'Active'${')'.repeat(5000)}`), expect: [400] },
    { label: '5,000 ( alone', url: F('('.repeat(5000)), expect: [400] },
    { label: '5,000 ) alone', url: F(')'.repeat(5000)), expect: [400] },
    { label: '5,000 not', url: F(`${'not '.repeat(5000)}true`), expect: [400] },
    { label: '5,000 unary minus', url: F(`${'-'.repeat(5000)}1 eq -1`), expect: [400, 501] },
    { label: '3,000 nested tolower(', url: F(`${'tolower('.repeat(3000)}MlsStatus${')'.repeat(3000)} eq 'x'`), expect: [400] },
    { label: '2,000 nested contains(', url: F(`${'contains('.repeat(2000)}MlsStatus${",'a')".repeat(2000)}`), expect: [400] },
    { label: '60 nested parentheses (allowed depth)', url: F(`${'('.repeat(60)}MlsStatus eq 'Active'${')'.repeat(60)}`), expect: [200] },
    { label: '70 nested parentheses', url: F(`${'('.repeat(70)}MlsStatus eq 'Active'${')'.repeat(70)}`), expect: [400] },
    { label: `$filter of ${MAX_FILTER + 1} x`, url: F('x'.repeat(MAX_FILTER + 1)), expect: [413] },
    { label: `valid $filter of ${MAX_FILTER + 1} characters`, url: F(`ListingKey eq '${'x'.repeat(MAX_FILTER + 1 - 16)}'`), expect: [413] },
    { label: `valid $filter of ${MAX_FILTER} characters`, url: F(`ListingKey eq '${'x'.repeat(MAX_FILTER - 16)}'`), expect: [200] },
    { label: `${MAX_FILTER} quotes`, url: F("'".repeat(MAX_FILTER)), expect: [400] },
    { label: `${MAX_FILTER} percent signs`, url: F('%'.repeat(MAX_FILTER)), expect: [400] },
    { label: '30,000 digits of a fraction', url: F(`ModificationTimestamp gt 2026-01-01T00:00:00.${'1'.repeat(30000)}Z`), expect: [400] },
    { label: '10,000 emoji', url: F('😀'.repeat(10000)), expect: [400] },
    { label: '10,000 NUL', url: F('\u0000'.repeat(10000)), expect: [400] },
    { label: '10,000 or terms', url: F(terms(10_000, key)), expect: [200] },
    { label: '10,000 or terms of true', url: F(terms(10_000, () => 'true')), expect: [200] },
    { label: '20,000 or terms (over the length limit)', url: F(terms(20_000, key)), expect: [413] },
    { label: 'in list of 6,000 values', url: F(`ListingKey in (${Array.from({ length: 6000 }, (_, i) => `'${i % 100}'`).join(',')})`), expect: [200] },
    { label: 'in list of 40,000 keys', url: F(`ListingKey in (${Array.from({ length: 40_000 }, (_, i) => `'L${String(i).padStart(6, '0')}'`).join(',')})`), expect: [200] },
    { label: 'in list up to the limit', url: F(`MlsStatus in (${Array.from({ length: Math.floor((MAX_FILTER - 16) / 4) }, () => "'a'").join(',')})`), expect: [200] },
    { label: 'not in list up to the limit', url: F(`not (PropertyType in (${Array.from({ length: Math.floor((MAX_FILTER - 24) / 6) }, (_, i) => `'${i % 999}'`).join(',')}))`), expect: [200] },
    { label: '10,000 $orderby keys', url: q('/Property', [['$orderby', Array.from({ length: 10_000 }, () => 'ListingKey').join(',')]]), expect: [400] },
    { label: '5,000 ( in $orderby', url: q('/Property', [['$orderby', `${'('.repeat(5000)}ListingKey${')'.repeat(5000)}`]]), expect: [400, 501] },
    { label: '20,000 $select items', url: q('/Property', [['$select', Array.from({ length: 20_000 }, () => 'ListingKey').join(',')]]), expect: [200] },
    { label: '3,000 nested $expand', url: q('/Property', [['$expand', `${'Media($expand='.repeat(3000)}Listing${')'.repeat(3000)}`]]), expect: [400, 501] },
    { label: '$top of 10,000 digits', url: q('/Property', [['$top', '9'.repeat(10_000)]]), expect: [400] },
    { label: '100,000-character custom option', url: q('/Property', [['foo', 'x'.repeat(100_000)]]), expect: [200] },
    { label: '2,000 query options', url: `/Property?${Array.from({ length: 2000 }, (_, i) => `o${i}=${i}`).join('&')}`, expect: [200] },
    { label: 'garbage $skiptoken', url: q('/Property', [['$skiptoken', 'not-a-token']]), expect: [400] },
    { label: 'forged $skiptoken', url: q('/Property', [['$skiptoken', `${Buffer.from('{"v":1,"l":["x"],"n":1}').toString('base64url')}.AAAA`]]), expect: [400] },
    { label: '$skiptoken of 50,000 characters', url: q('/Property', [['$skiptoken', 'A'.repeat(50_000)]]), expect: [400] },
  ];
}

/**
 * Long chains of and/or that still fit under the length limit (about 19,000 to 65,000 terms). Any status but 5xx
 * will do (a service may refuse a filter that is too complex).
 */
function longChainRequests(): { label: string; url: string }[] {
  const F = (filter: string) => q('/Property', [['$filter', filter]]);
  const fit = (sep: string, term: (i: number) => string) => {
    const parts: string[] = [];
    for (let i = 0, length = 0; ; i++) {
      const t = term(i);
      length += t.length + (i ? sep.length : 0);
      if (length > MAX_FILTER) return parts.join(sep);
      parts.push(t);
    }
  };
  return [
    { label: 'ListingKey eq … or …, up to the limit', url: F(fit(' or ', (i) => `ListingKey eq 'L${String(i).padStart(6, '0')}'`)) },
    { label: 'true or true …, up to the limit', url: F(fit(' or ', () => 'true')) },
    { label: 'length(MlsStatus) ne i and …, up to the limit', url: F(fit(' and ', (i) => `length(MlsStatus) ne ${i}`)) },
    { label: 'MlsStatus eq … or …, 1,000 terms', url: F(Array.from({ length: 1000 }, () => "MlsStatus eq 'Active'").join(' or ')) },
    { label: 'not (…) and …, 1,000 terms', url: F(Array.from({ length: 1000 }, (_, i) => `not (ListingKey eq '${i}')`).join(' and ')) },
    { label: '999 or terms', url: F(Array.from({ length: 999 }, () => "MlsStatus eq 'Active'").join(' or ')) },
  ];
}

/** Valid filters F over the filterable fields, for the complement check count(F) + count(not (F)) = count. */
function validFilters(seed: number, n: number): string[] {
  const r = new Rng(seed);
  const gen = new ExpressionGenerator(r);
  return Array.from({ length: n }, () => gen.validFilter());
}

describeEachDatabase('Query fuzz at the largest FILTER_MAX_LENGTH and MAX_PAGE_SIZE: generated and mutated options over HTTP', (target: DatabaseTarget) => {
  const sqlite = target.label === 'SQLite';
  const RANDOM = 10_500;
  const SEED = Number(process.env.FUZZ_SEED) || (sqlite ? 20260101 : 20260202);
  const COMPLEMENT = sqlite ? 400 : 100;
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  let total = 0;
  let sentBefore = 0;

  before(async function () {
    this.timeout(180_000);
    for (const [name, max] of [['FILTER_MAX_LENGTH', MAX_FILTER], ['MAX_PAGE_SIZE', MAX_PAGE]] as const) {
      expect(configFromEnv({ [name]: String(max) }), `${name}=${max} is allowed`).to.be.an('object');
      expect(() => configFromEnv({ [name]: String(max + 1) }), `${name}=${max + 1} is not`).to.throw(name);
    }
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, {
      // The workers' requests and the heartbeats sent beside them: more than CONCURRENCY may be in flight at once.
      pageSize: 20, maxFilterLength: MAX_FILTER, maxPageSize: MAX_PAGE, pagingSecret: PAGING_SECRET, maxConcurrentRequests: CONCURRENCY + 4,
    });
    await seedDemoData(server.service, { listings: 30 });
    await plantEdgeCases(server.service);
    base = server.url;
    sentBefore = sent;
    total = Number((await send(base, '/Property/$count')).text);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  it(`${RANDOM} generated requests: every answer is 200/400/403/404/413/501 with a JSON body (an OData error body when not 200), and simple requests among them are answered`, async function () {
    this.timeout(180_000);
    const r = new Rng(SEED);
    const gen = new ExpressionGenerator(r);
    const edge = new EdgeGenerator(r, gen, MAX_FILTER);
    const requests = Array.from({ length: RANDOM }, () => randomRequest(r, gen, edge));
    // A heartbeat: every HEARTBEAT_EVERY answers, a simple request goes out beside the fuzzing and must be answered.
    const beats: Promise<Answer>[] = [];
    const answers = await sendAll(base, requests, CONCURRENCY, (n) => {
      if (n % HEARTBEAT_EVERY === 0) beats.push(send(base, '/Property?$top=1&$select=ListingKey'));
    }, true);
    const heartbeats = await Promise.all(beats);
    const bad = problems(answers);
    const statuses = answers.reduce<Record<number, number>>((m, a) => ({ ...m, [a.status]: (m[a.status] ?? 0) + 1 }), {});
    console.log(`      seed ${SEED}; statuses: ${JSON.stringify(statuses)}; ${answers.length - RANDOM} nextLinks followed; heartbeat ${heartbeats.length}×`);
    expect(bad, `seed ${SEED} (FUZZ_SEED=${SEED} reruns it): ${report(bad)}`).to.deep.equal([]);
    // The mix reaches the evaluator, not only the parser: a fair share of successes and of each refusal.
    expect(statuses[200] ?? 0, 'successful requests').to.be.greaterThan(RANDOM * 0.05);
    expect(statuses[400] ?? 0, '400s').to.be.greaterThan(RANDOM * 0.1);
    expect(statuses[501] ?? 0, '501s').to.be.greaterThan(RANDOM * 0.02);
    expect(statuses[403] ?? 0, '403s').to.be.greaterThan(RANDOM * 0.01);
    for (const b of heartbeats) expect(b.status, `heartbeat ${b.text.slice(0, 200)}`).to.equal(200);
    expect(heartbeats.length, 'heartbeats sent while the fuzzing ran').to.equal(Math.floor(RANDOM / HEARTBEAT_EVERY));
  });

  it('edge inputs: 5,000-deep nesting, just over FILTER_MAX_LENGTH, 10,000 or terms, in lists up to the limit, huge options — each answered as expected', async function () {
    this.timeout(60_000);
    const specials = specialRequests();
    const answers = await sendAll(base, specials.map((x) => x.url), 4);
    const bad = problems(answers);
    expect(bad, report(bad)).to.deep.equal([]);
    const unexpected = specials
      .map((s, i) => ({ s, a: answers[i] }))
      .filter(({ s, a }) => s.expect && !s.expect.includes(a.status))
      .map(({ s, a }) => `${s.label}: expected ${s.expect!.join('/')}, got ${a.status} ${a.text.slice(0, 160)}`);
    expect(unexpected, unexpected.join('\n')).to.deep.equal([]);
  });

  it('a $filter of 20,000 or terms is answered (413: over the length limit), and a simple request sent while it is in flight too', async function () {
    this.timeout(60_000);
    const filter = Array.from({ length: 20_000 }, (_, i) => `ListingKey eq 'L${String(i).padStart(6, '0')}'`).join(' or ');
    const big = sendInFlight(base, q('/Property', [['$filter', filter], ['$count', 'true']]));
    await big.written;
    const simple = await send(base, '/Property?$top=1');
    const answer = await big.answer;
    expect(judge(answer), `${answer.status} ${answer.text.slice(0, 200)}`).to.equal(undefined);
    expect(answer.status, 'the long filter').to.equal(413);
    expect(simple.status, 'the concurrent simple request').to.equal(200);
    expect(JSON.parse(simple.text).value, 'the concurrent simple request').to.have.length(1);
  });

  it('and/or chains of 1,000+ terms under the length limit: answered without 5xx, alone and eight at once, while a simple request is answered', async function () {
    this.timeout(60_000);
    const chains = longChainRequests();
    const failures: string[] = [];
    for (const c of chains) {
      const big = sendInFlight(base, c.url);
      await big.written;
      const simple = await send(base, '/Property?$top=1');
      const a = await big.answer;
      const why = judge(a);
      if (why) failures.push(`${c.label}: ${why} → ${a.text.slice(0, 160)}`);
      if (simple.status !== 200) failures.push(`simple request beside ${c.label}: ${simple.status} ${simple.text.slice(0, 160)}`);
    }
    const many = Array.from({ length: 8 }, () => send(base, chains[0].url));
    const simple = await send(base, '/Property?$top=1');
    for (const a of await Promise.all(many)) {
      const why = judge(a);
      if (why) failures.push(`eight at once: ${why} → ${a.text.slice(0, 160)}`);
    }
    if (simple.status !== 200) failures.push(`simple request among eight: ${simple.status} ${simple.text.slice(0, 160)}`);
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it(`complement: for ${COMPLEMENT} generated valid filters F, count(F) + count(not (F)) = count, with null change timestamps too`, async function () {
    this.timeout(60_000);
    const { violations } = await complement(validFilters(sqlite ? 7 : 8, COMPLEMENT));
    expect(violations, `${violations.length} filters:\n${violations.slice(0, 6).join('\n')}`).to.deep.equal([]);
  });

  /** Filters for which count(F) + count(not F) is not the total, or either count was not answered. */
  async function complement(filters: string[]): Promise<{ violations: string[] }> {
    const urls = filters.flatMap((f) => [q('/Property/$count', [['$filter', f]]), q('/Property/$count', [['$filter', `not (${f})`]])]);
    const answers = await sendAll(base, urls);
    const bad = problems(answers);
    expect(bad, report(bad)).to.deep.equal([]);
    const violations: string[] = [];
    filters.forEach((f, i) => {
      const a = answers[2 * i];
      const b = answers[2 * i + 1];
      if (a.status !== 200 || b.status !== 200) {
        violations.push(`${a.status}/${b.status} for a valid filter: ${f} → ${a.text.slice(0, 150)} ${b.text.slice(0, 150)}`);
        return;
      }
      const sum = Number(a.text) + Number(b.text);
      if (sum !== total) violations.push(`count(F) ${a.text} + count(not F) ${b.text} ≠ ${total} for F = ${f}`);
    });
    return { violations };
  }

  it('the server still answers a simple request afterwards (after ≥ 10,000 requests)', async () => {
    const a = await send(base, "/Property?$filter=MlsStatus eq 'Active'&$top=3");
    expect(a.status, a.text.slice(0, 300)).to.equal(200);
    expect(JSON.parse(a.text).value.length).to.be.within(1, 3);
    console.log(`      ${sent - sentBefore} requests sent to this server`);
    expect(sent - sentBefore, 'requests sent').to.be.at.least(10_000);
  });

  if (!sqlite) {
    it('more distinct query shapes than MariaDB\'s max_prepared_stmt_count: the server keeps answering', async function () {
      this.timeout(240_000);
      const limit = Number((await server.service.db.all("SHOW VARIABLES LIKE 'max_prepared_stmt_count'"))[0].Value);
      const n = limit + 1_500;
      // Distinct SQL texts: 90 filter atoms × 63 column sets × 12 orders = 68,040 shapes.
      const atoms: string[] = [];
      for (const f of ['ListingKey', 'MlsStatus', 'PropertyType']) {
        for (const fn of ['', 'tolower', 'toupper', 'trim', 'length']) {
          for (const op of ['eq', 'ne', 'gt', 'ge', 'lt', 'le']) atoms.push(fn === 'length' ? `length(${f}) ${op} 3` : fn ? `${fn}(${f}) ${op} 'x'` : `${f} ${op} 'x'`);
        }
      }
      const columns = ['ListingKey', 'ModificationTimestamp', 'DocumentsChangeTimestamp', 'MlsStatus', 'PhotosChangeTimestamp', 'PropertyType'];
      const subsets = Array.from({ length: 63 }, (_, m) => columns.filter((_, b) => ((m + 1) >> b) & 1).join(','));
      const orders = ['ListingKey', 'ModificationTimestamp', 'MlsStatus', 'PropertyType', 'PhotosChangeTimestamp', 'DocumentsChangeTimestamp']
        .flatMap((f) => [`${f} asc`, `${f} desc`]);
      expect(atoms.length * subsets.length * orders.length).to.be.greaterThan(n);
      const urls = Array.from({ length: n }, (_, k) => q('/Property', [
        ['$filter', atoms[k % atoms.length]],
        ['$select', subsets[Math.floor(k / atoms.length) % subsets.length]],
        ['$orderby', orders[Math.floor(k / (atoms.length * subsets.length)) % orders.length]],
      ]));
      const answers = await sendAll(base, urls);
      const after = await send(base, '/Property?$top=1');
      const bad = problems(answers);
      expect(bad, report(bad, 3)).to.deep.equal([]);
      expect(after.status, `a simple request afterwards: ${after.text.slice(0, 200)}`).to.equal(200);
    });
  }
});
