/**
 * The request tables of the query option tests (query-filter.test.ts, query-options.test.ts): one request per
 * row, checked against the whole stored data set read straight from the tables. A 200 row carries a predicate
 * written by hand (never the service's parser, binder or translator), so each answer is checked for soundness
 * (every record satisfies the predicate), completeness (every record that satisfies it is there, up to $top and
 * the page), order (stated keys, then the key), projection and counts. Error rows check the status, the OData
 * error body, the target, and that 501/403 messages say what works. Also the spec's text, to check that the
 * tables cover its statements.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { serviceModel } from '../../generated';
import type { RunningServer } from '../../src/process/server';
import { seedDemoData } from '../../src/demo/demo-data';
import { DatabaseTarget, describeEachDatabase, TestDatabase } from './databases';
import { get, odataError, startTestServer } from './http';
import { sharedPath } from './shared';
import { ALIASES, at, comparator, KEYS, loadRecords, ms, Order, PHOTOS_NULL_KEYS, plantEdgeCases, project, Rec, T0 } from './query-data';

/** Page size of the table's server: every row's answer fits one page. */
const PAGE = 1000;
export const MAX_FILTER = 32 * 1024;

export interface Row {
  /** Relative to the service root (/odata). Spaces and quotes are written plainly; '+' in an offset as %2B. */
  url: string;
  status: number;
  /** 200: the independent predicate every returned record must satisfy and every other record must fail. */
  check?: (r: Rec) => boolean;
  /** 200: stated order (default: ModificationTimestamp asc); the key ends it. */
  order?: Order;
  select?: string[];
  top?: number;
  /** Error: the expected target. */
  target?: string;
  /** Error: the message must contain every one of these. */
  mentions?: string[];
  /** Error: the message must contain at least one of these (what would work instead). */
  mentionsAny?: string[];
  /** Further checks of a 200 body. */
  extra?: (body: any) => void;
}

// ---- field values and predicates, by hand --------------------------------------------------------------

export const MOD = (r: Rec) => ms(r.ModificationTimestamp)!;
export const PHO = (r: Rec) => ms(r.PhotosChangeTimestamp);
export const DOC = (r: Rec) => ms(r.DocumentsChangeTimestamp);
export const utc = (v: number | undefined) => (v === undefined ? undefined : new Date(v));
export const T = at(T0);
export const HALF_MS = 0.5;
export const all = () => true;
export const none = () => false;

export const FILTERABLE = ['ListingKey', 'ModificationTimestamp', 'PhotosChangeTimestamp', 'DocumentsChangeTimestamp', 'MlsStatus', 'PropertyType'];
export const RESTRICTED = ['PrivateRemarks', 'ShowingInstructions', 'OwnerName', 'LockBoxSerialNumber'];
export const NOT_INDEXED = ['ListPrice', 'BedroomsTotal', 'City', 'StandardStatus', 'PublicRemarks'];
const COLLECTIONS = new Set(serviceModel.entitySets.flatMap((s) => s.fields.filter((f) => f.collection).map((f) => f.name)));

export const ok = (url: string, check: (r: Rec) => boolean, o: Partial<Row> = {}): Row => ({ url, status: 200, check, ...o });
export const err = (status: number, url: string, o: Partial<Row> = {}): Row => ({ url, status, ...o });
/** A Property query with $filter (and more options after it). */
export const F = (filter: string, more = '') => `/Property?$filter=${filter}${more}`;
export const O = (orderby: string, more = '') => `/Property?$orderby=${orderby}${more}`;
export const BY_PHOTOS: Order = [['PhotosChangeTimestamp', 'asc']];
export const BY_DOCS: Order = [['DocumentsChangeTimestamp', 'asc']];

/** A filter of exactly n characters that is valid and matches nothing. */
export const filterOfLength = (n: number) => `ListingKey eq '${'x'.repeat(n - "ListingKey eq ''".length)}'`;

export interface Statement { title: string; rows: Row[] }

function setOf(url: string): string {
  const first = url.split('?')[0].replace(/^\//, '').split('/')[0];
  return ALIASES[first] ?? first;
}

/** One describe per database, with one describe per statement and one test per row. */
export function describeRequestTable(title: string, statements: readonly Statement[], minRows: number): void {
  const rowCount = statements.reduce((n, s) => n + s.rows.length, 0);
  describeEachDatabase(title, (target: DatabaseTarget) => {
    let db: TestDatabase;
    let server: RunningServer;
    let base: string;
    const data: Record<string, Rec[]> = {};

    before(async function () {
      this.timeout(300_000);
      db = await target.create();
      server = await startTestServer(serviceModel, db.url, { pageSize: PAGE, maxFilterLength: MAX_FILTER });
      await seedDemoData(server.service, { listings: 120 });
      await plantEdgeCases(server.service);
      for (const set of Object.keys(KEYS)) data[set] = await loadRecords(server.service, set);
      base = server.url;
    });
    after(async () => {
      await server?.close();
      await db?.drop();
    });

    it(`the table has at least ${minRows} requests (${rowCount}) and the data has the edge cases it relies on`, () => {
      expect(rowCount).to.be.at.least(minRows);
      const p = data.Property;
      expect(p).to.have.length(122);
      expect(p.filter((r) => PHO(r) === undefined).map((r) => r.ListingKey)).to.have.members(PHOTOS_NULL_KEYS);
      expect(p.filter((r) => DOC(r) === undefined).length).to.be.within(10, 115);
      expect(p.filter((r) => MOD(r) === T)).to.have.length(1);
      expect(new Set(p.map((r) => r.MlsStatus)).size).to.be.at.least(5);
    });

    for (const statement of statements) {
      describe(statement.title, () => {
        for (const row of statement.rows) {
          const shown = row.url.length > 160 ? `${row.url.slice(0, 120)}… (${row.url.length} chars)` : row.url;
          const title = `${row.status} ← GET ${shown}`;
          it(title, async () => {
            const r = await get(`${base}${row.url}`);
            const where = `GET ${shown} → ${r.status} ${r.text.slice(0, 400)}`;
            expect(r.status, where).to.equal(row.status);
            if (row.status === 200) checkSuccess(row, r, where);
            else checkError(row, r, where);
          });
        }
      });
    }

    function checkSuccess(row: Row, r: { text: string; json: any; headers: Headers }, where: string): void {
      const set = setOf(row.url);
      const key = KEYS[set];
      const matches = data[set].filter(row.check!);
      const countPath = /\/\$count(\?|$)/.test(row.url);
      if (countPath) {
        expect(r.headers.get('content-type'), where).to.match(/^text\/plain/);
        expect(r.text.trim(), where).to.equal(String(matches.length));
        return;
      }
      const body = r.json;
      expect(body, where).to.be.an('object');
      expect(body.value, where).to.be.an('array');
      const limit = Math.min(row.top ?? Infinity, PAGE);
      const expected = [...matches].sort(comparator(row.order ?? [['ModificationTimestamp', 'asc']], key)).slice(0, limit);
      expect(body.value.length, `${where}\nrecord count`).to.equal(expected.length);

      if (row.select) {
        for (const rec of body.value) expect(Object.keys(rec), where).to.have.members(row.select);
        const want = expected.map((e) => project(e, row.select!, COLLECTIONS));
        if (row.select.includes(key)) {
          const got = body.value.map((v: Rec) => v[key]);
          expect([...got].sort(), `${where}\nthe set of records`).to.deep.equal(want.map((w) => w[key]).sort());
          expect(got, `${where}\nthe order`).to.deep.equal(want.map((w) => w[key]));
        }
        expect(body.value, `${where}\nprojected records`).to.deep.equal(want);
      } else {
        const unsound = body.value.filter((v: Rec) => !row.check!(v)).map((v: Rec) => v[key]);
        expect(unsound, `${where}\nrecords that fail the predicate`).to.deep.equal([]);
        const got = body.value.map((v: Rec) => v[key]);
        if (limit >= matches.length) {
          const missing = expected.map((e) => e[key]).filter((k) => !got.includes(k));
          expect(missing, `${where}\nrecords that satisfy the predicate but are missing`).to.deep.equal([]);
        }
        expect(got, `${where}\nthe order`).to.deep.equal(expected.map((e) => e[key]));
        expect(body.value, `${where}\nrecords as stored`).to.deep.equal(expected);
      }

      if (/[?&]\$?count=true(&|$)/i.test(row.url)) expect(body['@odata.count'], `${where}\n@odata.count`).to.equal(matches.length);
      else expect(body, where).not.to.have.property('@odata.count');
      row.extra?.(body);
    }

    function checkError(row: Row, r: { json: any; headers: Headers; status: number; text: string }, where: string): void {
      expect(r.headers.get('content-type'), where).to.match(/^application\/json/);
      const e = odataError(r as any);
      expect(e.code, where).to.be.a('string').and.not.equal('');
      expect(e.message, where).to.be.a('string').and.not.equal('');
      expect(e.details, where).to.be.an('array');
      if (row.target !== undefined) expect(e.target, `${where}\ntarget`).to.equal(row.target);
      for (const m of row.mentions ?? []) expect(e.message, `${where}\nthe message should mention ${m}`).to.include(m);
      if (row.mentionsAny) {
        const usable = row.mentionsAny.filter((m) => m !== row.target);
        expect(usable.some((m) => e.message.includes(m)),
          `${where}\nthe message should say what would work (name one of ${usable.join(', ')})`).to.equal(true);
      }
    }
  });
}

let specText: string | undefined;

/** The spec's text from a heading to the next heading of any level (read from ../shared; see requireShared). */
export function specSection(heading: string): string {
  specText ??= readFileSync(sharedPath('spec', 'listing-service-spec.md'), 'utf8');
  const start = specText.indexOf(`\n${heading}\n`);
  expect(start, heading).to.be.greaterThan(-1);
  const rest = specText.slice(start + heading.length + 2);
  const end = rest.search(/\n#{2,3} /);
  return end < 0 ? rest : rest.slice(0, end);
}

export const titled = (statements: readonly Statement[], prefix: string) => statements.filter((s) => s.title.startsWith(prefix));
