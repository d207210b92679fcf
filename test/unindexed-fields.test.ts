/**
 * Fields filterable and sortable without an index (the dictionary's Policy.UnindexedProperties, docs/certification.md "Getting
 * certified"): a dictionary offers more fields than a database can index, each answered by a scan of its set that
 * is stopped at DB_STATEMENT_TIMEOUT_MS (501 ScanLimitExceeded) and runs apart from every other request. The
 * shipped dictionary, edited as an operator would, on each database; answers read against an oracle over the
 * stored records.
 */
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { expect } from 'chai';
import { xml2json } from 'odata-csdl';
import type { ServiceModel } from '../src/model/service-model';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { DictionaryVersion, DictionaryVersions, makeQueryable, makeUnindexed, within } from './support/dictionary-versions';
import { get, odataError, startTestServer } from './support/http';
import { walkPages } from './support/next-links';
import { comparator, loadRecords, Rec } from './support/query-data';
import { requireShared, sharedPath } from './support/shared';

/** Fields the shipped dictionary leaves unqueryable, offered here without an index. */
const PROPERTY_FIELDS = ['YearBuilt', 'LivingArea', 'CloseDate', 'StateOrProvince'];
const MEDIA_FIELDS = ['ImageHeight', 'ClassName'];

describe('Fields without an index: the dictionary and $metadata', () => {
  let versions: DictionaryVersions;
  let latest: DictionaryVersion;
  let model: ServiceModel;

  before(function () {
    this.timeout(120_000);
    versions = new DictionaryVersions();
    latest = versions.next((xml) => makeUnindexed(makeUnindexed(xml, 'Property', PROPERTY_FIELDS), 'Media', MEDIA_FIELDS));
    model = latest.model;
  });
  after(() => versions?.remove());

  it('gives each a column and no index, while the fields that were indexed keep theirs', () => {
    const table = model.tables.find((t) => t.name === 'Property')!;
    const indexed = new Set(table.indexes.map((i) => i.columns[0]));
    for (const f of PROPERTY_FIELDS) {
      expect(table.columns.map((c) => c.name), f).to.include(f);
      expect(indexed.has(f), f).to.equal(false);
    }
    for (const f of ['ModificationTimestamp', 'MlsStatus', 'PropertyType']) expect(indexed.has(f), f).to.equal(true);
  });

  it('moving a field into an index later is a migration that adds the index, says so, and leaves the records as they are', () => {
    const indexed = versions.next((xml) => within(xml, 'EntitySet', 'Media', (t) => t.replace(/\n\s*<Annotation Term="Policy\.UnindexedProperties">[\s\S]*?<\/Annotation>/, '')), latest);
    const migration = indexed.model.migrations[indexed.model.migrations.length - 1];
    expect(migration.changes).to.have.members(MEDIA_FIELDS.map((f) => `Media.${f}: filterable and sortable without an index (answered by a bounded scan) → filterable and sortable`));
    const media = (m: ServiceModel) => m.tables.find((t) => t.name === 'Media')!;
    expect(media(indexed.model).columns).to.deep.equal(media(model).columns);
    expect(media(indexed.model).indexes.map((i) => i.columns[0])).to.include.members(MEDIA_FIELDS);
  });

  it('states them in $metadata: filterable and sortable by Capabilities, listed by the declared ResoServer.Policy.UnindexedProperties', () => {
    const xml = model.metadataXml;
    const set = xml.slice(xml.indexOf('<EntitySet Name="Property"'), xml.indexOf('</EntitySet>', xml.indexOf('<EntitySet Name="Property"')));
    const listed = /<Annotation Term="ResoServer\.Policy\.UnindexedProperties">([\s\S]*?)<\/Annotation>/.exec(set)![1];
    expect([...listed.matchAll(/<PropertyPath>(\w+)<\/PropertyPath>/g)].map((m) => m[1])).to.have.members(PROPERTY_FIELDS);
    for (const f of PROPERTY_FIELDS) expect(set, f).not.to.include(`<PropertyPath>${f}</PropertyPath>\n                </Collection>`);
    expect(xml).to.match(/<Term Name="UnindexedProperties" Type="Collection\(Edm\.PropertyPath\)" Nullable="false" AppliesTo="EntitySet">\s*<Annotation Term="Core\.Description" String="[^"]*ScanLimitExceeded/);
    const json = JSON.parse(model.metadataJson);
    expect(json['org.reso.metadata'].Default.Property['@ResoServer.Policy.UnindexedProperties']).to.have.members(PROPERTY_FIELDS);
    expect(json['org.reso.metadata'].Default.Media['@ResoServer.Policy.UnindexedProperties']).to.have.members(MEDIA_FIELDS);
    expect(json['ResoServer.Policy'].UnindexedProperties).to.include({ $Kind: 'Term', $Type: 'Edm.PropertyPath', $Collection: true });
  });
  it("reads as OASIS's converter reads it: no message, valid CSDL JSON, the XML's annotation what the JSON says", function () {
    requireShared(this);
    const messages: unknown[] = [];
    const converted = xml2json(model.metadataXml, { annotations: true, messages }) as Record<string, any>;
    expect(messages).to.deep.equal([]);
    const validate = new Ajv({ strict: false }).compile(JSON.parse(readFileSync(sharedPath('odata/csdl-schemas/csdl.schema.json'), 'utf8')));
    expect(validate(converted), JSON.stringify(validate.errors?.slice(0, 3))).to.equal(true);
    expect(validate(JSON.parse(model.metadataJson)), JSON.stringify(validate.errors?.slice(0, 3))).to.equal(true);
    const term = '@ResoServer.Policy.UnindexedProperties';
    const served = JSON.parse(model.metadataJson)['org.reso.metadata'].Default.Property[term];
    expect(converted['org.reso.metadata'].Default.Property[term]).to.deep.equal(served);
  });
});

describeEachDatabase('Fields without an index: answered by a bounded scan', (target) => {
  let versions: DictionaryVersions;
  let db: TestDatabase;
  let server: RunningServer;
  /** The same database behind a server whose statements may take 1 s. */
  let strict: RunningServer;
  let records: Rec[];
  let media: Rec[];

  before(async function () {
    this.timeout(240_000);
    versions = new DictionaryVersions();
    const { model } = versions.next((xml) => makeQueryable(makeUnindexed(makeUnindexed(xml, 'Property', PROPERTY_FIELDS), 'Media', MEDIA_FIELDS), 'Media', 'Permission'));
    db = await target.create();
    server = await startTestServer(model, db.url, { maxPageSize: 100 });
    await seedDemoData(server.service, { listings: 300 });
    strict = await startTestServer(model, db.url, { databaseTimeouts: { acquireMs: 2000, statementMs: 1000 }, maxFilterLength: 262_144 });
    records = await loadRecords(server.service, 'Property');
    media = await loadRecords(server.service, 'Media');
  });
  after(async () => {
    await Promise.all([server?.close(), strict?.close()]);
    await db?.drop();
    versions?.remove();
  });

  /** Every record a query selects, every page followed, in the order served. */
  const walk = async (set: string, query: string): Promise<Rec[]> => (await walkPages(`${server.url}/${set}?${query}`)).records;
  const keys = (rs: readonly Rec[], key = 'ListingKey') => rs.map((r) => r[key] as string);

  it('filters on each of them answer what the stored records hold, every page followed, and count it', async function () {
    this.timeout(60_000);
    const cases: [string, (r: Rec) => boolean][] = [
      ['YearBuilt ge 1990 and YearBuilt lt 2010', (r) => r.YearBuilt >= 1990 && r.YearBuilt < 2010],
      ['LivingArea gt 2000', (r) => r.LivingArea !== null && r.LivingArea > 2000],
      ['CloseDate eq null', (r) => r.CloseDate === null || r.CloseDate === undefined],
      ["CloseDate ge 2024-01-01 and StateOrProvince in ('CA', 'TX')", (r) => !!r.CloseDate && r.CloseDate >= '2024-01-01' && ['CA', 'TX'].includes(r.StateOrProvince)],
      ["MlsStatus eq 'Active' and YearBuilt lt 1960", (r) => r.MlsStatus === 'Active' && r.YearBuilt !== null && r.YearBuilt < 1960],
    ];
    for (const [filter, test] of cases) {
      const want = records.filter(test).map((r) => r.ListingKey as string).sort();
      expect(want.length, `${filter} selects some records of the demo data`).to.be.above(0);
      expect(keys(await walk('Property', `$select=ListingKey&$filter=${encodeURIComponent(filter)}`)).sort(), filter).to.deep.equal(want);
      const counted = await get(`${server.url}/Property/$count?$filter=${encodeURIComponent(filter)}`);
      expect(counted.text, filter).to.equal(String(want.length));
    }
    const tall = media.filter((m) => m.ImageHeight > 1000).map((m) => m.MediaKey as string).sort();
    expect(keys(await walk('Media', '$select=MediaKey&$filter=ImageHeight gt 1000'), 'MediaKey').sort()).to.deep.equal(tall);
  });

  it('orders by each of them (nulls first ascending), across pages, as the oracle does', async function () {
    this.timeout(60_000);
    for (const [field, direction] of [['YearBuilt', 'desc'], ['CloseDate', 'asc'], ['StateOrProvince', 'asc']] as const) {
      const got = await walk('Property', `$select=ListingKey,${field}&$orderby=${field} ${direction}&$filter=${encodeURIComponent('YearBuilt gt 1950')}`);
      const want = records.filter((r) => r.YearBuilt > 1950).sort(comparator([[field, direction]], 'ListingKey'));
      expect(keys(got), `${field} ${direction}`).to.deep.equal(keys(want));
    }
  });

  it('a scan longer than DB_STATEMENT_TIMEOUT_MS is stopped: 501 ScanLimitExceeded naming the fields, while other requests are answered meanwhile', async function () {
    this.timeout(60_000);
    // Thousands of comparisons on each of some 5,000 media: 7 s and more on either database, unbounded.
    const heavy = Array.from({ length: 6_000 }, (_, i) => `contains(tolower(ClassName), 'x${i}')`).join(' or ');
    const started = Date.now();
    const scan = get(`${strict.url}/Media?$select=MediaKey&$filter=${encodeURIComponent(heavy)}`).then((r) => ({ r, at: Date.now() }));
    const simple: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await get(`${strict.url}/Property?$top=1&$select=ListingKey`);
      expect(r.status).to.equal(200);
      simple.push(Date.now());
    }
    const { r, at } = await scan;
    expect(r.status, r.text.slice(0, 300)).to.equal(501);
    const e = odataError(r);
    expect([e.code, e.target]).to.deep.equal(['ScanLimitExceeded', 'ClassName']);
    expect(e.message).to.match(/^answering this query on ClassName meant scanning Media, which took longer than the 1000 ms/);
    // The requests beside it were answered before it ended, not held up behind it.
    expect(simple[simple.length - 1], 'the simple requests finished first').to.be.below(at);
    expect(at - started, 'stopped near its bound, not run to its end').to.be.below(4_000);
  });

  it('a lambda on a collection is a scan too (each record tested against its value table): stopped likewise', async function () {
    this.timeout(60_000);
    const heavy = Array.from({ length: 6_000 }, (_, i) => `contains(tolower(x), 'x${i}')`).join(' or ');
    const r = await get(`${strict.url}/Media?$select=MediaKey&$filter=${encodeURIComponent(`Permission/any(x: ${heavy})`)}`);
    expect([r.status, odataError(r).code, odataError(r).target], r.text.slice(0, 300)).to.deep.equal([501, 'ScanLimitExceeded', 'Permission']);
    const light = await get(`${strict.url}/Media/$count?$filter=${encodeURIComponent("Permission/any(x: x eq 'Public')")}`);
    expect(light.text).to.equal(String(media.filter((m) => (m.Permission ?? []).includes('Public')).length));
  });

  it('fields still left out of the dictionary answer 501 FieldNotFilterable, as the spec says', async () => {
    const r = await get(`${server.url}/Property?$filter=${encodeURIComponent('AboveGradeFinishedArea gt 1')}`);
    expect([r.status, odataError(r).code]).to.deep.equal([501, 'FieldNotFilterable']);
  });
});
