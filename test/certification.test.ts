/**
 * RESO Web API Core 2.1.0, scenario by scenario, against the example certification dictionary
 * (docs/certification/reso-dictionary.xml) generated into a temporary folder and served over demo data on each
 * database: the fast check of what `npm run certify` asks RESO's own tool (docs/certification.md "Getting certified").
 *
 * It asks what the tool asks (reso-cert 0.10.6's scenarios.js and queries.js, in our words): on each resource the
 * tool tests (Property, Member, Office, Media, OpenHouse), with the fields and values the tool would choose from
 * $metadata and a sample (support/reso-sampling.ts), whatever Capabilities say. The tool checks the first page of
 * each answer; here each answer is read whole, every page followed, against an oracle over the stored records.
 * A scenario whose field type a resource lacks is pending, as the tool skips it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { generate } from '../codegen/generate';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { loadGenerated } from './support/generated-folder';
import { get, odataError, startTestServer } from './support/http';
import { walkPages } from './support/next-links';
import { comparator, loadRecords, Rec } from './support/query-data';
import { ResourceSample, sampleResource } from './support/reso-sampling';
import { REPO_ROOT } from './support/shared';

const DICTIONARY = join(REPO_ROOT, 'docs/certification/reso-dictionary.xml');
/** The resources the tool tests, as it names them (WELL_KNOWN_RESOURCES; Showing is not served). */
const RESOURCES = ['Property', 'Member', 'Office', 'Media', 'OpenHouse'] as const;

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

describe('RESO certification: the example dictionary', () => {
  it("differs from the shipped dictionary only in its header and its entity sets' annotations (Capabilities, UnindexedProperties)", () => {
    const strip = (xml: string) => xml
      .replace(/<!--[\s\S]*?-->/, '')
      .replace(/\s*<Annotation Term="Capabilities\.SkipSupported" Bool="true"\/>/g, '')
      .replace(/\s*<Annotation Term="Policy\.UnindexedProperties">[\s\S]*?<\/Annotation>/g, '')
      .replace(/\s*<PropertyPath>[A-Za-z]+<\/PropertyPath>/g, '');
    const shipped = readFileSync(join(REPO_ROOT, 'csdl/reso-dictionary.xml'), 'utf8');
    expect(strip(readFileSync(DICTIONARY, 'utf8'))).to.equal(strip(shipped));
  });
});

describeEachDatabase('RESO Web API Core 2.1.0 scenarios on the certification dictionary, as RESO\'s tool chooses them', (target) => {
  let db: TestDatabase;
  let dir: string;
  let server: RunningServer;
  const samples = new Map<string, ResourceSample>();
  const stored = new Map<string, Rec[]>();

  before(async function () {
    this.timeout(240_000);
    dir = mkdtempSync(join(tmpdir(), 'reso-cert-'));
    generate({ dictionary: DICTIONARY, outDir: join(dir, 'generated') });
    db = await target.create();
    server = await startTestServer(loadGenerated(join(dir, 'generated')), db.url, { maxPageSize: 100 });
    await seedDemoData(server.service, { listings: 150 });
    const csdl = (await get(`${server.url}/$metadata?$format=json`)).json;
    const standard = new Set((await walk('Lookup', '$top=1000')).map((l) => String(l.StandardLookupValue ?? l.LookupValue)));
    for (const resource of RESOURCES) {
      samples.set(resource, await sampleResource(get, server.url, csdl, resource, standard));
      stored.set(resource, await loadRecords(server.service, resource));
    }
  });
  after(async () => {
    await server?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Every record a query of `resource` selects, every page followed. */
  const walk = async (resource: string, query: string): Promise<Rec[]> => (await walkPages(`${server.url}/${resource}?${query}`)).records;

  /**
   * The tool's request (`$filter=…&$select=<key>,<field>`: 200, each record of its page meeting `test`), then the
   * whole answer against the oracle. Returns how many records match.
   */
  const scenario = async (s: ResourceSample, field: string, filter: string, test: (r: Rec) => boolean): Promise<number> => {
    const query = `$filter=${encodeURIComponent(filter)}&$select=${s.key},${field}`;
    const first = await get(`${server.url}/${s.resource}?${query}`);
    expect(first.status, `${s.resource} ${filter}: ${first.text.slice(0, 300)}`).to.equal(200);
    for (const r of first.json.value) expect(test(r), `${s.resource} ${filter}: ${JSON.stringify(r)}`).to.equal(true);
    const want = stored.get(s.resource)!.filter(test).map((r) => String(r[s.key])).sort();
    expect((await walk(s.resource, query)).map((r) => String(r[s.key])).sort(), `${s.resource} ${filter}`).to.deep.equal(want);
    return want.length;
  };

  for (const resource of RESOURCES) {
    describe(resource, () => {
      const sample = () => samples.get(resource)!;

      it('fetch by key, $select of the key and a sampled field, $top (and no nextLink for $top=1), $skip, $count', async () => {
        const s = sample();
        const one = await get(`${server.url}/${resource}('${encodeURIComponent(s.keyValue)}')`);
        expect([one.status, one.json[s.key]]).to.deep.equal([200, s.keyValue]);
        const field = s.timestamp?.field ?? s.integer?.field ?? s.decimal?.field ?? s.date?.field ?? s.singleLookups[0]?.field;
        const selected = await get(`${server.url}/${resource}?$select=${s.key},${field}`);
        for (const r of selected.json.value) expect(Object.keys(r).sort()).to.deep.equal([s.key, field].sort());
        expect((await get(`${server.url}/${resource}?$top=5&$select=${s.key}`)).json.value.length).to.be.at.most(5);
        expect((await get(`${server.url}/${resource}?$top=1&$select=${s.key}`)).json['@odata.nextLink']).to.equal(undefined);
        const all = (await walk(resource, `$select=${s.key}&$orderby=${s.key}`)).map((r) => String(r[s.key]));
        const skipped = await get(`${server.url}/${resource}?$top=5&$skip=5&$select=${s.key}&$orderby=${s.key}`);
        expect(skipped.json.value.map((r: Rec) => String(r[s.key]))).to.deep.equal(all.slice(5, 10));
        expect((await get(`${server.url}/${resource}?$top=5&$count=true&$select=${s.key}`)).json['@odata.count']).to.equal(stored.get(resource)!.length);
      });

      it('the integer field: and, or, not(… le sentinel), eq, ne, gt, ge, lt, le at its sampled median, minimum and maximum', async function () {
        const s = sample();
        if (!s.integer) this.skip();
        const { field, median, min, max } = s.integer!;
        const high = 2147483647;
        await scenario(s, field, `${field} gt ${median} and ${field} lt ${high}`, (r) => holds(r[field], 'gt', median) && holds(r[field], 'lt', high));
        await scenario(s, field, `${field} gt ${median} or ${field} lt ${high}`, (r) => holds(r[field], 'gt', median) || holds(r[field], 'lt', high));
        const sentinel = Math.min(-1, min - 1);
        expect(await scenario(s, field, `not(${field} le ${sentinel})`, (r) => !holds(r[field], 'le', sentinel)), 'not(…) matches every record').to.equal(stored.get(resource)!.length);
        for (const [op, value] of [['eq', median], ['ne', median], ['gt', min], ['ge', median], ['lt', max], ['le', median]] as const) {
          expect(await scenario(s, field, `${field} ${op} ${value}`, (r) => holds(r[field], op, value)), `${field} ${op} ${value}`).to.be.above(0);
        }
      });

      it('the decimal field: ne, gt, ge, lt, le at its sampled median, minimum and maximum', async function () {
        const s = sample();
        if (!s.decimal) this.skip();
        const { field, median, min, max } = s.decimal!;
        for (const [op, value] of [['ne', median], ['gt', min], ['ge', median], ['lt', max], ['le', median]] as const) {
          expect(await scenario(s, field, `${field} ${op} ${value}`, (r) => holds(r[field], op, value)), `${field} ${op} ${value}`).to.be.above(0);
        }
      });

      it('the date field: eq, ne, gt, ge, lt, le at its sampled median, minimum and maximum', async function () {
        const s = sample();
        if (!s.date) this.skip();
        const { field, median, min, max } = s.date!;
        for (const [op, value] of [['eq', median], ['ne', median], ['gt', min], ['ge', median], ['lt', max], ['le', median]] as const) {
          expect(await scenario(s, field, `${field} ${op} ${value}`, (r) => holds(r[field], op, value)), `${field} ${op} ${value}`).to.be.above(0);
        }
      });

      it('the timestamp field: gt, ge, ne, le at its sampled minimum, lt at its maximum, and lt, le, ne now()', async function () {
        const s = sample();
        if (!s.timestamp) this.skip();
        const { field, min, max } = s.timestamp!;
        for (const [op, value] of [['gt', min], ['ge', min], ['ne', min], ['lt', max], ['le', min]] as const) {
          await scenario(s, field, `${field} ${op} ${value}`, (r) => holds(r[field], op, value, true));
        }
        const now = new Date().toISOString();
        for (const op of ['lt', 'le', 'ne'] as const) {
          expect(await scenario(s, field, `${field} ${op} now()`, (r) => holds(r[field], op, now, true)), `${op} now()`).to.equal(stored.get(resource)!.length);
        }
      });

      it('$orderby on the timestamp field, ascending and descending, alone and after a filter on the integer field', async () => {
        const s = sample();
        const { field } = s.timestamp!;
        const filters: [string, (r: Rec) => boolean][] = [['', () => true]];
        if (s.integer) filters.push([`${s.integer.field} gt ${s.integer.median}`, (r) => holds(r[s.integer!.field], 'gt', s.integer!.median)]);
        for (const [filter, test] of filters) {
          for (const direction of ['asc', 'desc'] as const) {
            const got = await walk(resource, `$orderby=${field} ${direction}&$select=${s.key},${field}${filter ? `&$filter=${encodeURIComponent(filter)}` : ''}`);
            const want = stored.get(resource)!.filter(test).sort(comparator([[field, direction]], s.key));
            expect(got.map((r) => r[s.key]), `${field} ${direction} ${filter}`).to.deep.equal(want.map((r) => r[s.key]));
          }
        }
      });

      it('the single-value lookup: eq, ne and in (…) its most frequent values, which the Lookup resource publishes', async function () {
        const s = sample();
        if (s.singleLookups.length === 0) this.skip();
        const { field, lookupName, values } = s.singleLookups[0];
        expect(await scenario(s, field, `${field} eq '${values[0]}'`, (r) => r[field] === values[0])).to.be.above(0);
        await scenario(s, field, `${field} ne '${values[0]}'`, (r) => r[field] !== values[0]);
        if (values.length >= 2) await scenario(s, field, `${field} in (${values.map((v) => `'${v}'`).join(',')})`, (r) => values.includes(r[field]));
        const published = await walk('Lookup', `$filter=${encodeURIComponent(`LookupName eq '${lookupName}'`)}`);
        expect(published.every((l) => l.LookupName === lookupName)).to.equal(true);
        expect(published.map((l) => l.StandardLookupValue ?? l.LookupValue)).to.include.members([...values]);
      });

      it('the multi-value lookup: any() of its two most frequent values, all() of the smallest sampled set', async function () {
        const s = sample();
        if (s.multiLookups.length === 0) this.skip();
        const { field, values, smallestSet } = s.multiLookups[0];
        const list = (r: Rec): string[] => r[field] ?? [];
        const some = values.slice(0, 2);
        expect(await scenario(s, field, `${field}/any(x:${some.map((v) => `x eq '${v}'`).join(' or ')})`, (r) => list(r).some((x) => some.includes(x)))).to.be.above(0);
        const set = smallestSet ?? values.slice(0, 1);
        expect(await scenario(s, field, `${field}/all(x:${set.map((v) => `x eq '${v}'`).join(' or ')})`, (r) => list(r).every((x) => set.includes(x)))).to.be.above(0);
      });

      it('the string functions (optional): contains, startswith and endswith of the first plain string field', async function () {
        const s = sample();
        if (!s.string) this.skip();
        const { field, value } = s.string!;
        expect(await scenario(s, field, `contains(${field},'${value}')`, (r) => String(r[field] ?? '').includes(value))).to.be.above(0);
        expect(await scenario(s, field, `startswith(${field},'${value}')`, (r) => String(r[field] ?? '').startsWith(value))).to.be.above(0);
        await scenario(s, field, `endswith(${field},'${value}')`, (r) => String(r[field] ?? '').endsWith(value));
      });

      it('$expand of each collection navigation, and the errors: 400 for an unknown field, 404 for an unknown resource', async function () {
        const s = sample();
        for (const nav of s.expandable) {
          const page = await get(`${server.url}/${resource}?$expand=${nav}&$top=5`);
          expect(page.status, `${nav}: ${page.text.slice(0, 200)}`).to.equal(200);
          for (const r of page.json.value) expect(r[nav], nav).to.be.an('array');
        }
        const bad = await get(`${server.url}/${resource}?$filter=${encodeURIComponent("INVALIDFIELD eq 'bad'")}`);
        expect(bad.status).to.equal(400);
        odataError(bad);
        expect((await get(`${server.url}/ResourceNotFound`)).status).to.equal(404);
      });
    });
  }

  it('metadata, the service document, and the resources Core requires at the top level', async () => {
    const metadata = await get(`${server.url}/$metadata`);
    expect(metadata.status).to.equal(200);
    expect(metadata.text).to.include('<EntityType Name="Property"');
    const root = await get(`${server.url}/`);
    expect(root.json.value.map((s: Rec) => s.name)).to.include.members(['Property', 'Member', 'Office', 'Lookup', 'Field', 'EntityEvent']);
    for (const set of ['Property', 'Member', 'Office', 'Lookup', 'Field', 'EntityEvent']) expect((await get(`${server.url}/${set}?$top=1`)).status, set).to.equal(200);
  });

  it('server-driven paging: ten pages and more, none repeating a record, with and without a filter', async () => {
    const count = stored.get('Property')!.length;
    for (const f of ['', `&$filter=${encodeURIComponent('ModificationTimestamp gt 2000-01-01T00:00:00Z')}`]) {
      const seen = new Set<string>();
      const { pages, records } = await walkPages(`${server.url}/Property?$select=ListingKey${f}`, { headers: { Prefer: 'odata.maxpagesize=10' } });
      for (const x of records) {
        expect(seen.has(x.ListingKey), x.ListingKey).to.equal(false);
        seen.add(x.ListingKey);
      }
      expect(pages.length).to.be.at.least(10);
      expect(seen.size).to.equal(count);
    }
  });
});
