/**
 * The console in real Chromium (issue 14), against `reso-server serve` as a process of its own on SQLite with
 * demo data: signing in, the operator's client views, the API explorer checked against the API's own JSON, and
 * the usage chart against the counts the API reports. Every page must load with no script error and no
 * Content-Security-Policy refusal. Screenshots of each view: docs/screenshots with UPDATE_SCREENSHOTS=1.
 */
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { sqliteTarget, TestDatabase } from './support/databases';
import { HttpResult, request, TEST_TOKEN } from './support/http';
import { originOf, requestToken, runCli } from './support/licence-http';
import { ServerProcess, spawnServer } from './support/server-process';
import { ConsolePage, launchChromium, openConsole, screenshot, signIn, tableHead, tableText } from './support/console-browser';

/** A value as the explorer's table shows it (explorer-result.ts). */
function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.every((x) => typeof x !== 'object' || x === null) ? v.join(', ') : `${v.length} record${v.length === 1 ? '' : 's'}`;
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** The table the explorer should show for a page of the API's JSON. */
function expectedTable(records: Record<string, unknown>[]): { head: string[]; rows: string[][] } {
  const head = [...new Set(records.flatMap((r) => Object.keys(r).filter((k) => !k.startsWith('@'))))];
  return { head, rows: records.map((r) => head.map((h) => cell(r[h]))) };
}

/** What the browser complained about, less the notes Chromium writes for every 4xx/5xx answer a page fetched. */
const complaintsOf = (c: ConsolePage) => c.complaints.filter((m) => !/^Failed to load resource: the server responded with a status of \d+/.test(m));

const waitForText = (page: Page, selector: string, pattern: RegExp) => page.waitForFunction(
  ([s, p]) => new RegExp(p).test(document.querySelector(s)?.textContent ?? ''), [selector, pattern.source] as const,
);

describe('Console in Chromium (SQLite, reso-server serve with demo data)', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let server: ServerProcess;
  let browser: Browser;
  let origin: string;
  let open: ConsolePage[] = [];

  const admin = (path: string, method = 'GET', body?: unknown): Promise<HttpResult> => request(`${origin}${path}`, {
    token: TEST_TOKEN, method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  });
  /** A client that is not an admin, with a static token. */
  const newClient = async (id: string) => (await admin('/admin/clients', 'POST', { id, name: `Client ${id}`, staticToken: true })).json.staticToken as string;
  const consolePage = async (width?: number) => {
    const c = await openConsole(browser, origin, width);
    open.push(c);
    return c;
  };

  before(async function () {
    browser = await launchChromium(this);
    db = await sqliteTarget.create();
    server = await spawnServer(db.url, { SEED_LISTINGS: '150', DEMO_TOKEN: TEST_TOKEN, USAGE_APPLY_MS: '50' });
    await server.waitFor(/ready/);
    origin = originOf(server.url);
  });
  afterEach(async () => {
    const pages = open;
    open = [];
    for (const c of pages) {
      const complaints = complaintsOf(c);
      await c.close();
      expect(complaints, 'script errors or Content-Security-Policy refusals').to.deep.equal([]);
    }
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await db?.drop();
  });

  it('signs in with a token held in memory only; a refused token shows the service\'s message', async () => {
    const c = await consolePage();
    await screenshot(c.page, 'sign-in');
    const refused = (await request(`${origin}/console/api/explorer`, { token: 'not-a-token' })).json.error.message;
    await c.page.fill('#token', 'not-a-token');
    await c.page.press('#token', 'Enter');
    await waitForText(c.page, '#sign-in-error', /./);
    expect(await c.page.textContent('#sign-in-error')).to.equal(refused);
    await signIn(c, TEST_TOKEN);
    expect(await c.page.textContent('#who')).to.equal('Signed in as Demo client (demo, admin)');
    const kept = await c.page.evaluate(() => [location.href, document.cookie, localStorage.length, sessionStorage.length]);
    expect(kept).to.deep.equal([`${origin}/console/`, '', 0, 0]);
    await c.page.reload();
    expect(await c.page.isVisible('#sign-in-form'), 'reloading signs out').to.equal(true);
  });

  it('clients: adds one with a scope (secret shown once, listed), and shows a bad scope\'s error from the service inline', async () => {
    const c = await consolePage();
    await signIn(c, TEST_TOKEN);
    const { page } = c;
    const scope = "City eq 'Austin'";
    const own = (await request(`${server.url}/Property?$filter=${encodeURIComponent(scope)}`, { token: TEST_TOKEN })).json.error;
    await page.fill('#c-name', 'Refused portal');
    await page.fill('#c-scope', scope);
    await waitForText(page, '#c-scope-error', /./);
    expect(await page.textContent('#c-scope-error')).to.equal(`${own.message} (${own.code})`);
    expect(await page.getAttribute('#c-scope', 'aria-invalid')).to.equal('true');
    await page.click('#add-client button[type=submit]');
    await screenshot(page, 'clients-bad-scope');
    expect((await admin('/admin/clients')).json.value.map((x: { name: string }) => x.name)).not.to.include('Refused portal');

    await page.fill('#c-name', 'IDX portal');
    await page.fill('#c-id', 'idx-portal');
    await page.fill('#c-scope', "MlsStatus eq 'Active'");
    await waitForText(page, '#c-scope-error', /^$/);
    await page.fill('#c-hidden', 'PrivateRemarks');
    await page.fill('#c-rate', '600');
    await page.click('#add-client button[type=submit]');
    await page.waitForSelector('#secret-box:not([hidden])');
    const secret = await page.textContent('[data-secret="client_secret"]');
    expect((await requestToken(server.url, { id: 'idx-portal', secret: secret!, via: 'basic' })).status).to.equal(200);
    const row = (await tableText(page, '#client-list')).find((r) => r[0] === 'idx-portal');
    expect(row?.slice(0, 7)).to.deep.equal(['idx-portal', 'IDX portal', 'active', 'client', "MlsStatus eq 'Active'", 'PrivateRemarks', '600/min']);
    await screenshot(page, 'clients');
    await page.click('#secret-done');
    expect(await page.$$eval('[data-secret]', (n) => n.length), 'the secret is gone from the page once hidden').to.equal(0);
  });

  it('clients: rotate shows the new secret once and ends the old token; revoke ends the client', async () => {
    const old = await newClient('rotated');
    const c = await consolePage();
    await signIn(c, TEST_TOKEN);
    await c.page.click('button[data-rotate="rotated"]');
    await c.page.waitForSelector('#secret-box:not([hidden]) [data-secret="static token"]');
    const fresh = (await c.page.textContent('[data-secret="static token"]'))!;
    expect((await request(`${server.url}/`, { token: old })).status, 'the old token').to.equal(401);
    expect((await request(`${server.url}/`, { token: fresh })).status, 'the new token').to.equal(200);
    await screenshot(c.page, 'clients-rotated');
    await c.page.click('button[data-revoke="rotated"]');
    await c.page.waitForFunction(() => [...document.querySelectorAll<HTMLTableRowElement>('#client-list tbody tr')]
      .some((r) => r.cells[0].textContent === 'rotated' && r.cells[2].textContent!.startsWith('revoked ')));
    expect((await request(`${server.url}/`, { token: fresh })).status, 'a revoked client\'s token').to.equal(401);
  });

  it('explorer: a filter on an indexed field, shown with its URL and class, and a table equal to the API\'s JSON', async () => {
    const token = await newClient('explorer-a');
    const c = await consolePage();
    await signIn(c, token);
    const { page } = c;
    await page.selectOption('#set', 'Property');
    await page.click('#add-condition');
    await page.selectOption('#c1-field', 'MlsStatus');
    await page.selectOption('#c1-op', 'eq');
    await page.fill('#c1-value', 'Active');
    await page.fill('#q-pagesize', '10');
    const url = `${server.url}/Property?$filter=MlsStatus%20eq%20'Active'`;
    expect(await page.inputValue('#q-url')).to.equal(url);
    expect(await page.textContent('#q-class')).to.equal('Transactions: 1 class B per page');
    await page.click('#run');
    await waitForText(page, '#result-status', /^Page 1: 10 records/);
    const api = await request(url, { token, headers: { Prefer: 'odata.maxpagesize=10' } });
    const want = expectedTable(api.json.value);
    expect(await tableHead(page, '#result-table')).to.deep.equal(want.head);
    expect(await tableText(page, '#result-table')).to.deep.equal(want.rows);
    // The same answer, but for the nextLink's sealed token, which differs from one issue to the next.
    const shown = JSON.parse((await page.textContent('#result-json'))!);
    expect(shown['@odata.nextLink']).to.match(/\$skiptoken=/);
    for (const body of [shown, api.json]) delete body['@odata.nextLink'];
    expect(shown).to.deep.equal(api.json);
    await screenshot(page, 'explorer');
  });

  it('explorer: a filter on a field that is not indexed shows the service\'s 501 error body', async () => {
    const token = await newClient('explorer-b');
    const c = await consolePage();
    await signIn(c, token);
    const url = `${server.url}/Property?$filter=City eq 'Austin'`;
    await c.page.fill('#q-url', url);
    await c.page.click('#run');
    await c.page.waitForSelector('#result-error .odata-error', { timeout: 5000 }).catch(async (e) => {
      throw new Error(`${e}: ${await c.page.textContent('#result-status')} ${await c.page.inputValue('#q-url')}`);
    });
    const own = (await request(url.replace(/ /g, '%20'), { token })).json.error;
    expect(await c.page.textContent('#result-error h4')).to.equal('501 FieldNotFilterable');
    expect(await c.page.textContent('#result-error [data-error-message]')).to.equal(own.message);
    await screenshot(c.page, 'explorer-error');
  });

  it('explorer: $expand=Media over three pages by nextLink, each table equal to the API\'s page', async () => {
    const token = await newClient('explorer-c');
    const c = await consolePage();
    await signIn(c, token);
    const { page } = c;
    await page.check('input[data-expand="Media"]');
    await page.fill('#q-pagesize', '5');
    const url = await page.inputValue('#q-url');
    expect(url).to.equal(`${server.url}/Property?$expand=Media`);
    expect(await page.textContent('#q-class')).to.equal('Transactions: 2 class B per page');
    await page.click('#run');
    for (let n = 1, next = url; n <= 3; n++) {
      if (n > 1) await page.click('#next-page');
      await waitForText(page, '#result-status', new RegExp(`^Page ${n}: 5 records`));
      const api = await request(next, { token, headers: { Prefer: 'odata.maxpagesize=5' } });
      next = api.json['@odata.nextLink'];
      const want = expectedTable(api.json.value);
      expect(await tableText(page, '#result-table'), `page ${n}`).to.deep.equal(want.rows);
      expect(want.head).to.include('Media');
    }
    await screenshot(page, 'explorer-expand-page-3');
  });

  it('usage: after a scripted mix of class A and B requests the chart shows the counts the API reports, and the CSV is the API\'s', async () => {
    const token = await newClient('metered');
    const keys = (await request(`${server.url}/Property?$top=3&$select=ListingKey`, { token })).json.value;
    for (const k of keys) await request(`${server.url}/Property('${k.ListingKey}')`, { token });
    await request(`${server.url}/Member?$top=2`, { token });
    await request(`${server.url}/Property?$top=1&$expand=Media`, { token });
    const periods = (await admin('/admin/usage/periods?by=day&client=metered')).json.value;
    expect(periods.map((r: { A: number; B: number }) => [r.A, r.B])).to.deep.equal([[3, 4]]);

    const c = await consolePage();
    await signIn(c, TEST_TOKEN);
    const { page } = c;
    await page.click('#views button[data-view="usage"]');
    await page.waitForSelector('body[data-ready="usage"]');
    await page.selectOption('#u-client', 'metered');
    await page.selectOption('#u-by', 'day');
    await page.click('#usage-form button[type=submit]');
    await page.waitForFunction(() => [...document.querySelectorAll('#usage-table tbody tr')].every((r) => r.textContent?.includes('metered')));
    const chart = await page.evaluate(() => {
      type Drawn = { data: { labels: string[]; datasets: { label: string; data: number[] }[] } };
      const data = (window as unknown as { Chart: { getChart(id: string): Drawn } }).Chart.getChart('usage-chart').data;
      return { labels: data.labels, datasets: data.datasets.map((d) => [d.label, d.data]) };
    });
    expect(chart).to.deep.equal({ labels: [periods[0].period], datasets: [['class A', [3]], ['class B', [4]]] });
    expect(await tableText(page, '#usage-table')).to.deep.equal([[periods[0].period, 'metered', '3', '4']]);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#u-csv')]);
    const csv = (await admin('/admin/usage/periods?by=day&client=metered&format=csv')).text;
    expect(readFileSync((await download.path())!, 'utf8')).to.equal(csv);
    expect(download.suggestedFilename()).to.equal('usage-by-day.csv');
    await screenshot(page, 'usage');
  });

  it('service: health, readiness and key metrics from the service\'s own probes and scrape; webhook subscriptions with their state and failures', async () => {
    const added = await runCli(db.url, ['webhooks', 'add', '--client', 'demo', '--url', 'http://127.0.0.1:9/hooks', '--token', 'consumer-token-0123456789']);
    expect(added.code, added.stderr).to.equal(0);
    /** Requests answered 2xx so far, as the scrape says. */
    const answered = async () => [...(await request(`${origin}/metrics`, { token: TEST_TOKEN })).text.matchAll(/^reso_http_requests_total\{([^}]*)\} (\S+)$/gm)]
      .filter((m) => /status="2\d\d"/.test(m[1])).reduce((n, m) => n + Number(m[2]), 0);
    const before = await answered();
    const c = await consolePage();
    await signIn(c, TEST_TOKEN);
    const { page } = c;
    await page.click('#views button[data-view="service"]');
    await page.waitForSelector('body[data-ready="service"]');
    const after = await answered();
    expect(await page.textContent('[data-probe="health"]')).to.equal((await request(`${origin}/health`)).json.status);
    expect(await page.textContent('[data-probe="ready"]')).to.equal((await request(`${origin}/ready`)).json.status);
    expect(Number(await page.textContent('[data-metric="Requests answered 2xx"]'))).to.be.within(before, after);
    const hooks = (await admin('/admin/webhooks')).json.value as { id: string; client: string; url: string; state: string }[];
    expect(hooks.length).to.be.above(0);
    expect((await tableText(page, '#webhooks')).map((r) => r.slice(0, 4))).to.deep.equal(hooks.map((h) => [h.id, h.client, h.url, h.state]));
    await screenshot(page, 'service');
  });

  it('service: each upstream pulled into the service, as /admin/upstreams reports it, with no secret on the page (issue 41)', async () => {
    const added = await runCli(db.url, ['pull', 'add', 'feed', '--url', 'https://puller:url-password-42@mls.example/odata?api_key=key-in-query-42',
      '--token', 'upstream-token-0123456789abcdef', '--set', 'Property,Media']);
    expect(added.code, added.stderr).to.equal(0);
    expect((await runCli(db.url, ['pull', 'pause', 'feed'])).code).to.equal(0);
    const c = await consolePage();
    await signIn(c, TEST_TOKEN);
    const { page } = c;
    await page.click('#views button[data-view="service"]');
    await page.waitForSelector('body[data-ready="service"]');
    const [row] = (await admin('/admin/upstreams')).json.value as Record<string, any>[];
    expect(row).to.include({ name: 'feed', url: 'https://%E2%80%A6@mls.example/odata?api_key=%E2%80%A6', strategy: 'timestamp', state: 'paused', recordsPulled: 0 });
    expect(await tableText(page, '#upstreams')).to.deep.equal([
      ['feed', row.url, 'Property, Media', 'timestamp', 'paused (pull resume to go on)', 'not yet', '-', '0', '-'],
    ]);
    const text = await page.textContent('body');
    for (const secret of ['url-password-42', 'key-in-query-42', 'upstream-token-0123456789abcdef']) expect(text, secret).not.to.include(secret);
    expect((await runCli(db.url, ['pull', 'remove', 'feed'])).code).to.equal(0);
  });

  it('a client that is not an admin gets the explorer only; the operator endpoints refuse it from the page too', async () => {
    const token = await newClient('consumer');
    const c = await consolePage(390);
    await signIn(c, token);
    const { page } = c;
    expect(await page.getAttribute('body', 'data-ready')).to.equal('explorer');
    for (const view of ['clients', 'usage', 'service']) {
      expect(await page.isHidden(`#views button[data-view="${view}"]`), view).to.equal(true);
      expect(await page.isHidden(`#${view}`), view).to.equal(true);
    }
    const refused = await page.evaluate(async (t) => Promise.all(['/admin/clients', '/admin/usage/periods', '/admin/webhooks', '/admin/upstreams', '/metrics'].map(async (p) => {
      const r = await fetch(p, { headers: { Authorization: `Bearer ${t}` } });
      return [r.status, (await r.json()).error.code];
    })), token);
    expect(refused).to.deep.equal(Array(5).fill([403, 'AdminRequired']));
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling at phone width').to.equal(true);
    await screenshot(page, 'explorer-phone');
  });
});
