/**
 * RESO Web API Core 2.1.0, scenario by scenario, against the example certification dictionary
 * (docs/certification/reso-dictionary.xml) generated into a temporary folder and served over demo data on each
 * database. The scenarios are RESO's (web-api-core.md in RESO's transport repository), in our words: each
 * answer is read against an oracle over the stored records (what the filter selects, in which order), not
 * only for its status. The dictionary differs from the shipped one in Capabilities annotations only.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { generate } from '../codegen/generate';
import type { RunningServer } from '../src/server';
import { seedDemoData } from '../src/seed/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { loadGenerated } from './support/generated-folder';
import { get, odataError, startTestServer } from './support/http';
import { loadRecords, Rec } from './support/query-data';
import { REPO_ROOT } from './support/shared';

const DICTIONARY = join(REPO_ROOT, 'docs/certification/reso-dictionary.xml');

type Op = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';

/** OData's comparison of a stored value with a literal: null equals nothing, is unequal to everything, orders with nothing. */
function holds(value: unknown, op: Op, literal: number | string, asTime = false): boolean {
  if (value === null || value === undefined) return op === 'ne';
  const [a, b] = asTime ? [Date.parse(value as string), Date.parse(literal as string)] : [value as number | string, literal];
  switch (op) {
    case 'eq': return a === b;
    case 'ne': return a !== b;
    case 'gt': return a > b;
    case 'ge': return a >= b;
    case 'lt': return a < b;
    case 'le': return a <= b;
  }
}

const OPS: readonly Op[] = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'];

describe('RESO certification: the example dictionary', () => {
  it('differs from the shipped dictionary only in its header and Capabilities annotations', () => {
    const strip = (xml: string) => xml
      .replace(/<!--[\s\S]*?-->/, '')
      .replace(/\s*<Annotation Term="Capabilities\.SkipSupported" Bool="true"\/>/g, '')
      .replace(/\s*<PropertyPath>[A-Za-z]+<\/PropertyPath>/g, '');
    const shipped = readFileSync(join(REPO_ROOT, 'csdl/reso-dictionary.xml'), 'utf8');
    expect(strip(readFileSync(DICTIONARY, 'utf8'))).to.equal(strip(shipped));
  });
});

describeEachDatabase('RESO Web API Core 2.1.0 scenarios on the certification dictionary', (target) => {
  let db: TestDatabase;
  let dir: string;
  let server: RunningServer;
  let records: Rec[];

  before(async function () {
    this.timeout(240_000);
    dir = mkdtempSync(join(tmpdir(), 'reso-cert-'));
    generate({ dictionary: DICTIONARY, outDir: join(dir, 'generated') });
    const model = loadGenerated(join(dir, 'generated'));
    db = await target.create();
    server = await startTestServer(model, db.url, { maxPageSize: 100 });
    await seedDemoData(server.service, { listings: 150 });
    records = await loadRecords(server.service, 'Property');
  });
  after(async () => {
    await server?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Every record a query selects, every page followed, with the fields asked for. */
  const walk = async (query: string): Promise<Rec[]> => {
    const out: Rec[] = [];
    let url: string | undefined = `${server.url}/Property?${query}`;
    while (url) {
      const r = await get(url);
      expect(r.status, `${query}: ${r.text.slice(0, 300)}`).to.equal(200);
      out.push(...r.json.value);
      url = r.json['@odata.nextLink'];
    }
    return out;
  };
  const keysOf = (rs: readonly Rec[]) => rs.map((r) => r.ListingKey as string).sort();
  const expected = (test: (r: Rec) => boolean) => keysOf(records.filter(test));
  const filter = (f: string) => `$select=ListingKey&$filter=${encodeURIComponent(f)}`;

  /** RESO's form (`$top=5&$select=ListingKey,<field>`), then the whole result against the oracle. */
  const scenario = async (field: string, text: string, test: (r: Rec) => boolean) => {
    const top = await get(`${server.url}/Property?$top=5&$select=ListingKey,${field}&$filter=${encodeURIComponent(text)}`);
    expect(top.status, `${text}: ${top.text.slice(0, 300)}`).to.equal(200);
    expect(top.json.value.length, text).to.be.at.most(5);
    for (const r of top.json.value) expect(test(r), `${text}: ${JSON.stringify(r)}`).to.equal(true);
    const want = expected(test);
    expect(keysOf(await walk(filter(text))), text).to.deep.equal(want);
    return want.length;
  };

  it('metadata, the service document, and the resources Core requires at the top level', async () => {
    const metadata = await get(`${server.url}/$metadata`);
    expect(metadata.status).to.equal(200);
    expect(metadata.text).to.include('<EntityType Name="Property"');
    const root = await get(`${server.url}/`);
    expect(root.json.value.map((s: Rec) => s.name)).to.include.members(['Property', 'Member', 'Office', 'Lookup', 'Field']);
    for (const set of ['Property', 'Member', 'Office', 'Lookup', 'Field']) expect((await get(`${server.url}/${set}?$top=1`)).status, set).to.equal(200);
  });

  it('fetch by key, $select, $top (one record, no nextLink), $skip, $count', async () => {
    const key = records[0].ListingKey;
    const one = await get(`${server.url}/Property('${encodeURIComponent(key)}')?$select=ListingKey,ModificationTimestamp`);
    expect(one.json).to.include({ ListingKey: key });
    expect(Object.keys(one.json).filter((k) => !k.startsWith('@')).sort()).to.deep.equal(['ListingKey', 'ModificationTimestamp']);
    const top = await get(`${server.url}/Property?$top=1`);
    expect(top.json.value).to.have.length(1);
    expect(top.json['@odata.nextLink']).to.equal(undefined);
    const all = keysOf(await walk('$select=ListingKey&$orderby=ListingKey'));
    const skipped = await get(`${server.url}/Property?$top=5&$skip=5&$select=ListingKey&$orderby=ListingKey`);
    expect(skipped.json.value.map((r: Rec) => r.ListingKey)).to.deep.equal(all.slice(5, 10));
    expect((await get(`${server.url}/Property?$count=true&$top=1`)).json['@odata.count']).to.equal(records.length);
  });

  it('integer, decimal, date and timestamp fields with each comparison operator', async function () {
    this.timeout(120_000);
    const cases: [string, number | string, boolean][] = [
      ['BedroomsTotal', 3, false], ['ListPrice', 350000, false], ['ListingContractDate', records.find((r) => r.ListingContractDate)!.ListingContractDate, false],
    ];
    for (const [field, value, asTime] of cases) {
      for (const op of OPS) {
        const literal = typeof value === 'number' ? String(value) : value;
        await scenario(field, `${field} ${op} ${literal}`, (r) => holds(r[field], op, value, asTime));
      }
    }
    const stamp = '2019-12-31T23:55:55-09:00';
    for (const op of OPS) await scenario('ModificationTimestamp', `ModificationTimestamp ${op} ${stamp}`, (r) => holds(r.ModificationTimestamp, op, stamp, true));
  });

  it('and, or, not (also written not(…)), and in', async () => {
    expect(await scenario('BedroomsTotal', 'BedroomsTotal gt 1 and BedroomsTotal lt 5', (r) => holds(r.BedroomsTotal, 'gt', 1) && holds(r.BedroomsTotal, 'lt', 5))).to.be.above(0);
    await scenario('BedroomsTotal', 'BedroomsTotal lt 2 or BedroomsTotal gt 4', (r) => holds(r.BedroomsTotal, 'lt', 2) || holds(r.BedroomsTotal, 'gt', 4));
    expect(await scenario('BathroomsFull', 'not(BathroomsFull le -1)', (r) => !holds(r.BathroomsFull, 'le', -1))).to.equal(records.length);
    await scenario('StandardStatus', "StandardStatus in ('Active', 'Pending', 'Closed')", (r) => ['Active', 'Pending', 'Closed'].includes(r.StandardStatus));
  });

  it('single- and multi-value lookups: eq, ne, any and all', async () => {
    expect(await scenario('StandardStatus', "StandardStatus eq 'Active'", (r) => r.StandardStatus === 'Active')).to.be.above(0);
    await scenario('StandardStatus', "StandardStatus ne 'Active'", (r) => r.StandardStatus !== 'Active');
    const counts = new Map<string, number>();
    for (const r of records) for (const v of r.Appliances ?? []) counts.set(v, (counts.get(v) ?? 0) + 1);
    const [a, b] = [...counts.entries()].sort((x, y) => y[1] - x[1]).map(([v]) => v);
    const some = (r: Rec) => (r.Appliances ?? []).some((x: string) => x === a || x === b);
    expect(await scenario('Appliances', `Appliances/any(enum:enum eq '${a}' OR enum eq '${b}')`, some)).to.be.above(0);
    await scenario('Appliances', `Appliances/all(enum:enum eq '${a}' OR enum eq '${b}')`, (r) => (r.Appliances ?? []).every((x: string) => x === a || x === b));
  });

  it('$orderby ModificationTimestamp asc and desc, alone and after a filter', async () => {
    for (const dir of ['asc', 'desc'] as const) {
      const got = await walk(`$select=ListingKey,ModificationTimestamp&$orderby=ModificationTimestamp ${dir}&$filter=${encodeURIComponent('BedroomsTotal gt 1')}`);
      const stamps = got.map((r) => Date.parse(r.ModificationTimestamp));
      const sorted = [...stamps].sort((x, y) => (dir === 'asc' ? x - y : y - x));
      expect(stamps, dir).to.deep.equal(sorted);
      expect(keysOf(got)).to.deep.equal(expected((r) => holds(r.BedroomsTotal, 'gt', 1)));
    }
  });

  it('server-driven paging: ten pages and more, none repeating a record, with and without a filter', async () => {
    for (const f of ['', `&$filter=${encodeURIComponent('ModificationTimestamp gt 2000-01-01T00:00:00Z')}`]) {
      const seen = new Set<string>();
      let url: string | undefined = `${server.url}/Property?$select=ListingKey${f}`;
      let pages = 0;
      while (url) {
        const r = await get(url, { Prefer: 'odata.maxpagesize=10' });
        for (const x of r.json.value) {
          expect(seen.has(x.ListingKey), x.ListingKey).to.equal(false);
          seen.add(x.ListingKey);
        }
        pages++;
        url = r.json['@odata.nextLink'];
      }
      expect(pages).to.be.at.least(10);
      expect(seen.size).to.equal(records.length);
    }
  });

  it('$expand=Media and the Media of one listing as a path', async () => {
    const page = await get(`${server.url}/Property?$expand=Media&$select=ListingKey&$top=50`);
    expect(page.status).to.equal(200);
    const r = { json: page.json.value.find((x: Rec) => x.Media.length > 0) };
    expect(r.json, 'a listing with media').to.exist;
    const path = await get(`${server.url}/Property('${encodeURIComponent(r.json.ListingKey)}')/Media`);
    expect(path.status).to.equal(200);
    expect(path.json.value.map((m: Rec) => m.MediaKey)).to.have.members(r.json.Media.map((m: Rec) => m.MediaKey));
  });

  it('the Lookup resource names the lookups the fields use; errors answer 400 and 404 with OData bodies', async () => {
    const lookups = await get(`${server.url}/Lookup?$filter=${encodeURIComponent("LookupName eq 'StandardStatus'")}`);
    expect(lookups.json.value.map((l: Rec) => l.StandardLookupValue ?? l.LookupValue)).to.include('Active');
    const bad = await get(`${server.url}/Property?$filter=${encodeURIComponent('BedroomsTotal eq')}`);
    expect([bad.status, odataError(bad).code]).to.deep.equal([400, 'QuerySyntax']);
    const missing = await get(`${server.url}/Property('no-such-listing')`);
    expect(missing.status).to.equal(404);
    odataError(missing);
  });
});
