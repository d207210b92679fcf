/**
 * Spec §4 "Paging" (statements 1–4) and §8 "Paging" as served over HTTP, with the paging features the
 * service builds them on: keyset $skiptoken (signed, bound to its query, usable by any instance on the
 * database), Prefer: odata.maxpagesize, $top as a total across pages, $count on every page, and walks that
 * stay exact while the data changes between page fetches (what replication relies on).
 *
 * Expected records and orders come from the stored records (read straight from the tables) sorted here by
 * hand (test/support/query-data.ts), never from the service's own query code.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch, IngestItem } from '../src/ingest/ingest';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, HttpResult, odataError, startTestServer } from './support/http';
import { comparator, Order } from './support/query-data';
import { odataString, Rec, sentQuery, walkPages, Walk } from './support/replication-paging';
import { Random, storedRecords } from './support/replication-writer';

const PAGE = 10;
const MAX_PAGE = 25;
const LISTINGS = 60;
/** Listings changed in one ingest call, so they share one ModificationTimestamp across page boundaries. */
const TIE_LISTINGS = 27;
const TIE_MEDIA = 23;

async function ingest(server: RunningServer, set: string, inputs: Rec[]): Promise<void> {
  const report = emptyReport();
  const items: IngestItem[] = inputs.map((input, i) => ({ line: i + 1, input }));
  await ingestBatch(server.service, set, items, report);
  if (report.errors.length) throw new Error(`ingest ${set}: ${JSON.stringify(report.errors.slice(0, 3))}`);
}

function sorted(records: readonly Rec[], order: Order, key: string): Rec[] {
  return [...records].sort(comparator(order, key));
}

/** The query-string parts of a URL as sent, without $skiptoken, and the $skiptoken values. */
function queryParts(url: string): { options: string[]; tokens: string[] } {
  const parts = sentQuery(url).split('&').filter(Boolean);
  const isToken = (p: string) => decodeURIComponent(p.split('=')[0]).toLowerCase() === '$skiptoken';
  return { options: parts.filter((p) => !isToken(p)), tokens: parts.filter(isToken).map((p) => p.slice(p.indexOf('=') + 1)) };
}

function skiptokenOf(nextLink: string): string {
  const { tokens } = queryParts(nextLink);
  expect(tokens, `one $skiptoken in ${nextLink}`).to.have.length(1);
  return decodeURIComponent(tokens[0]);
}

/** nextLink with its $skiptoken replaced. */
function withToken(nextLink: string, token: string): string {
  const u = new URL(nextLink);
  const parts = queryParts(nextLink).options;
  return `${u.origin}${u.pathname}?${[...parts, `$skiptoken=${encodeURIComponent(token)}`].join('&')}`;
}

function expect400Token(r: HttpResult, what: string): void {
  expect(r.status, `${what}: ${r.text.slice(0, 200)}`).to.equal(400);
  const e = odataError(r);
  expect(e.target, what).to.equal('$skiptoken');
}

/** Every page but the last is full and has a nextLink; the last has none. */
function expectPageSizes(walk: Walk, size: number): void {
  walk.pages.forEach((p, i) => {
    const last = i === walk.pages.length - 1;
    if (last) {
      expect(p.json, 'the last page').not.to.have.property('@odata.nextLink');
      expect(p.json.value.length, 'the last page').to.be.within(walk.pages.length === 1 ? 0 : 1, size);
    } else {
      expect(p.json['@odata.nextLink'], `page ${i + 1}`).to.be.a('string');
      expect(p.json.value, `page ${i + 1} of ${walk.pages.length}`).to.have.length(size);
    }
  });
}

describeEachDatabase('Paging (spec §4 Paging, §8)', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let second: RunningServer;
  let base: string;
  let listings: Rec[];
  let media: Rec[];
  let members: Rec[];
  const byTs: Order = [['ModificationTimestamp', 'asc']];

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: PAGE, maxPageSize: MAX_PAGE });
    await seedDemoData(server.service, { listings: LISTINGS });
    // Ties: one ingest call gives every record it changes one timestamp; these groups straddle page boundaries.
    const tied = (await storedRecords(server.service, 'Property')).slice(5, 5 + TIE_LISTINGS);
    await ingest(server, 'Property', tied.map((r) => ({ ...r, PublicRemarks: `tie ${r.ListingKey}` })));
    // Media of other listings (each media change also moves its listing's timestamp, which would split the group above).
    const tiedKeys = new Set(tied.map((r) => r.ListingKey));
    const storedMedia = (await storedRecords(server.service, 'Media')).filter((m) => !tiedKeys.has(m.ResourceRecordKey ?? ''));
    await ingest(server, 'Media', storedMedia.filter((_, i) => i % 20 === 0).slice(0, TIE_MEDIA).map((r) => ({ ...r, MediaURL: `${r.MediaURL}?tie` })));
    second = await startTestServer(serviceModel, db.url, { pageSize: PAGE, maxPageSize: MAX_PAGE });
    base = server.url;
    listings = await storedRecords(server.service, 'Property');
    media = await storedRecords(server.service, 'Media');
    members = await storedRecords(server.service, 'Member');
  });
  after(async () => {
    await second?.close();
    await server?.close();
    await db?.drop();
  });

  it('has the data the tests need: ties across page boundaries, more records than pages', () => {
    const ties = (records: Rec[]) => Math.max(...[...records.reduce((m, r) => m.set(r.ModificationTimestamp, (m.get(r.ModificationTimestamp) ?? 0) + 1), new Map<string, number>()).values()]);
    expect(ties(listings)).to.be.at.least(TIE_LISTINGS).and.greaterThan(2 * PAGE);
    expect(ties(media)).to.be.at.least(TIE_MEDIA).and.greaterThan(2 * PAGE);
    expect(listings.length).to.be.greaterThan(3 * PAGE);
    expect(members.length).to.be.greaterThan(PAGE);
  });

  describe('§4 Paging 1: more records than one page holds → a page of records in value and @odata.nextLink', () => {
    for (const [path, total] of [['Property', () => listings.length], ['Media', () => media.length], ['Member', () => members.length]] as const) {
      it(`GET /${path}: value holds exactly one page (${PAGE}) and @odata.nextLink is a string`, async () => {
        expect(total()).to.be.greaterThan(PAGE);
        const r = await get(`${base}/${path}`);
        expect(r.status).to.equal(200);
        expect(r.json.value).to.be.an('array').with.length(PAGE);
        expect(r.json['@odata.nextLink']).to.be.a('string');
      });
    }

    it('fewer records than a page → all of them and no @odata.nextLink', async () => {
      const keys = listings.slice(0, 3).map((r) => r.ListingKey as string);
      const r = await get(`${base}/Property?$filter=ListingKey in (${keys.map(odataString).join(',')})`);
      expect(r.status).to.equal(200);
      expect(r.json.value.map((x: Rec) => x.ListingKey)).to.have.members(keys);
      expect(r.json).not.to.have.property('@odata.nextLink');
    });

    it('exactly one page of records → no @odata.nextLink (no empty page after it)', async () => {
      const keys = listings.slice(0, PAGE).map((r) => r.ListingKey as string);
      const r = await get(`${base}/Property?$filter=ListingKey in (${keys.map(odataString).join(',')})`);
      expect(r.json.value).to.have.length(PAGE);
      expect(r.json).not.to.have.property('@odata.nextLink');
    });

    it('no records → an empty value and no @odata.nextLink', async () => {
      const r = await get(`${base}/Property?$filter=ListingKey eq 'no-such-listing'`);
      expect(r.status).to.equal(200);
      expect(r.json.value).to.deep.equal([]);
      expect(r.json).not.to.have.property('@odata.nextLink');
    });
  });

  describe('§4 Paging 2: @odata.nextLink is a complete URL with every query parameter of the request, plus a server $skiptoken', () => {
    it('is absolute: same scheme, host, port and path as the request', async () => {
      const r = await get(`${base}/Property`);
      const link = new URL(r.json['@odata.nextLink']);
      const sent = new URL(`${base}/Property`);
      expect(link.origin).to.equal(sent.origin);
      expect(link.pathname).to.equal(sent.pathname);
      expect(r.json['@odata.nextLink'].startsWith(`${base}/Property?`)).to.equal(true);
    });

    const cases: [string, string][] = [
      ['every option, percent-encoded', "$filter=ModificationTimestamp%20gt%20'2000-01-01T00:00:00Z'&$orderby=ListingKey%20desc&$select=ListingKey,ModificationTimestamp&$count=true&$top=35&$format=json"],
      ["spaces written as '+', options in another order", "$top=30&$select=ListingKey&$filter=MlsStatus+ne+'Withdrawn'+and+ModificationTimestamp+gt+'2000-01-01T00:00:00Z'"],
      ['4.01 options without $, and a custom option', "filter=ModificationTimestamp gt '2000-01-01T00:00:00.000Z'&orderby=ListingKey&custom=a%2Bb"],
    ];
    for (const [label, query] of cases) {
      it(`repeats every option exactly as sent, and adds one $skiptoken (${label})`, async () => {
        const url = `${base}/Property?${query}`;
        const sent = queryParts(url).options;
        // Pages of PAGE records, so that a $top within MAX_PAGE still takes three pages.
        const first = await get(url, { Prefer: `odata.maxpagesize=${PAGE}` });
        expect(first.status, first.text.slice(0, 300)).to.equal(200);
        const link1: string = first.json['@odata.nextLink'];
        expect(link1, 'a nextLink').to.be.a('string');
        expect(queryParts(link1).options).to.have.members(sent).and.have.length(sent.length);
        skiptokenOf(link1);
        // The second page's link replaces the token rather than adding another one.
        const second = await get(link1, { Prefer: `odata.maxpagesize=${PAGE}` });
        expect(second.status).to.equal(200);
        const link2: string = second.json['@odata.nextLink'];
        expect(link2).to.be.a('string');
        expect(queryParts(link2).options).to.have.members(sent).and.have.length(sent.length);
        expect(skiptokenOf(link2)).not.to.equal(skiptokenOf(link1));
        expect(link2.startsWith(`${base}/Property?`)).to.equal(true);
      });
    }

    it('keeps the path the client used (/Members, an alias of Member)', async () => {
      const r = await get(`${base}/Members?$orderby=MemberKey`, { Prefer: 'odata.maxpagesize=4' });
      expect(r.json['@odata.nextLink'].startsWith(`${base}/Members?`)).to.equal(true);
      const walk = await walkPages(`${base}/Members?$orderby=MemberKey`, { headers: { Prefer: 'odata.maxpagesize=4' } });
      expect(walk.records.map((x) => x.MemberKey)).to.deep.equal(sorted(members, [['MemberKey', 'asc']], 'MemberKey').map((x) => x.MemberKey));
    });

    describe('Preference: Prefer: odata.maxpagesize', () => {
      it('is honoured and echoed in Preference-Applied, on every page of the walk', async () => {
        const walk = await walkPages(`${base}/Property`, { headers: { Prefer: 'odata.maxpagesize=7' } });
        expectPageSizes(walk, 7);
        for (const p of walk.pages) expect(p.headers.get('preference-applied')).to.equal('odata.maxpagesize=7');
        expect(walk.records.map((r) => r.ListingKey)).to.deep.equal(sorted(listings, byTs, 'ListingKey').map((r) => r.ListingKey));
      });

      it(`is capped at maxPageSize (${MAX_PAGE}), and Preference-Applied says so`, async () => {
        const r = await get(`${base}/Property`, { Prefer: 'odata.maxpagesize=1000' });
        expect(r.json.value).to.have.length(MAX_PAGE);
        expect(r.headers.get('preference-applied')).to.equal(`odata.maxpagesize=${MAX_PAGE}`);
      });

      it('is read among other preferences, and in the 4.01 form maxpagesize=N', async () => {
        for (const prefer of ['return=minimal, odata.maxpagesize=5', 'maxpagesize=5', 'odata.allow-entityreferences,odata.maxpagesize=5']) {
          const r = await get(`${base}/Property`, { Prefer: prefer });
          expect(r.json.value, prefer).to.have.length(5);
          expect(r.headers.get('preference-applied'), prefer).to.equal('odata.maxpagesize=5');
        }
      });

      it('without it the default page size applies and no Preference-Applied is sent', async () => {
        const r = await get(`${base}/Property`);
        expect(r.json.value).to.have.length(PAGE);
        expect(r.headers.get('preference-applied')).to.equal(null);
      });

      it('a page size of 1 walks every record on its own page', async () => {
        const walk = await walkPages(`${base}/Member`, { headers: { Prefer: 'odata.maxpagesize=1' } });
        expectPageSizes(walk, 1);
        expect(walk.pages).to.have.length(members.length);
        expect(walk.records.map((r) => r.MemberKey)).to.deep.equal(sorted(members, byTs, 'MemberKey').map((r) => r.MemberKey));
      });
    });
  });

  describe('§4 Paging 3: GET each nextLink unchanged until none → every record exactly once, in order', () => {
    const walks: { label: string; path: string; set: () => Rec[]; key: string; order: Order; filter?: (r: Rec) => boolean; select?: string[]; prefer?: number }[] = [
      { label: 'Property, default order (ModificationTimestamp, ListingKey)', path: 'Property', set: () => listings, key: 'ListingKey', order: byTs },
      { label: 'Property, $orderby=ListingKey desc', path: 'Property?$orderby=ListingKey desc', set: () => listings, key: 'ListingKey', order: [['ListingKey', 'desc']] },
      { label: 'Property, $orderby=ModificationTimestamp desc', path: 'Property?$orderby=ModificationTimestamp desc', set: () => listings, key: 'ListingKey', order: [['ModificationTimestamp', 'desc']] },
      {
        label: "Property, $filter=ModificationTimestamp gt '<the 20th timestamp>'", set: () => listings, key: 'ListingKey', order: byTs,
        path: 'Property?$filter=ModificationTimestamp gt MID', filter: (r) => r.ModificationTimestamp > midTimestamp(),
      },
      {
        label: "Property, $filter=MlsStatus ne 'Withdrawn' and $select=ListingKey (the removed-listings check)", set: () => listings, key: 'ListingKey', order: byTs,
        path: "Property?$filter=MlsStatus ne 'Withdrawn'&$select=ListingKey", filter: (r) => r.MlsStatus !== 'Withdrawn', select: ['ListingKey'],
      },
      { label: 'Property, $select=ListingKey', path: 'Property?$select=ListingKey', set: () => listings, key: 'ListingKey', order: byTs, select: ['ListingKey'] },
      { label: 'Property, $orderby=MlsStatus,ModificationTimestamp desc (ties on the first column)', path: 'Property?$orderby=MlsStatus,ModificationTimestamp desc', set: () => listings, key: 'ListingKey', order: [['MlsStatus', 'asc'], ['ModificationTimestamp', 'desc']] },
      { label: 'Property, $orderby=DocumentsChangeTimestamp desc (a field with nulls)', path: 'Property?$orderby=DocumentsChangeTimestamp desc', set: () => listings, key: 'ListingKey', order: [['DocumentsChangeTimestamp', 'desc']] },
      { label: 'Property, $orderby=DocumentsChangeTimestamp (nulls first)', path: 'Property?$orderby=DocumentsChangeTimestamp', set: () => listings, key: 'ListingKey', order: [['DocumentsChangeTimestamp', 'asc']] },
      {
        label: "Property, $filter=PhotosChangeTimestamp gt '2000-01-01T00:00:00Z' (ordered by PhotosChangeTimestamp, spec sorting rule 2)", set: () => listings, key: 'ListingKey',
        path: "Property?$filter=PhotosChangeTimestamp gt '2000-01-01T00:00:00Z'", order: [['PhotosChangeTimestamp', 'asc']], filter: (r) => typeof r.PhotosChangeTimestamp === 'string',
      },
      { label: 'Media, default order, Prefer 25', path: 'Media', set: () => media, key: 'MediaKey', order: byTs, prefer: MAX_PAGE },
      {
        label: "Media, $filter=ResourceRecordKey eq '<a listing>' (a listing's media by foreign key)", set: () => media, key: 'MediaKey', order: byTs,
        path: 'Media?$filter=ResourceRecordKey eq LISTING', filter: (r) => r.ResourceRecordKey === busiestListing(), prefer: 4,
      },
      { label: 'Member, default order', path: 'Member', set: () => members, key: 'MemberKey', order: byTs, prefer: 4 },
      { label: 'Member, $orderby=MemberKey desc, $select=MemberKey', path: 'Member?$orderby=MemberKey desc&$select=MemberKey', set: () => members, key: 'MemberKey', order: [['MemberKey', 'desc']], select: ['MemberKey'], prefer: 3 },
    ];
    const midTimestamp = () => sorted(listings, byTs, 'ListingKey')[19].ModificationTimestamp as string;
    const busiestListing = () => {
      const n = new Map<string, number>();
      for (const m of media) n.set(m.ResourceRecordKey, (n.get(m.ResourceRecordKey) ?? 0) + 1);
      return [...n].sort((a, b) => b[1] - a[1])[0][0];
    };

    for (const w of walks) {
      it(w.label, async () => {
        const path = w.path.replace('MID', odataString(midTimestamp())).replace('LISTING', odataString(busiestListing()));
        const size = w.prefer ?? PAGE;
        const walk = await walkPages(`${base}/${path}`, w.prefer ? { headers: { Prefer: `odata.maxpagesize=${w.prefer}` } } : {});
        const expected = sorted(w.set().filter(w.filter ?? (() => true)), w.order, w.key);
        expect(expected.length, 'the walk spans several pages').to.be.greaterThan(size);
        expectPageSizes(walk, size);
        // Every nextLink was followed exactly as sent: the URLs fetched are the links received.
        walk.pages.slice(0, -1).forEach((p, i) => expect(walk.urls[i + 1]).to.equal(p.json['@odata.nextLink']));
        const keys = walk.records.map((r) => r[w.key]);
        expect(new Set(keys).size, 'no record twice').to.equal(keys.length);
        expect(keys).to.deep.equal(expected.map((r) => r[w.key]));
        const want = w.select ? expected.map((r) => Object.fromEntries(w.select!.map((f) => [f, r[f] ?? null]))) : expected;
        expect(walk.records).to.deep.equal(want);
      });
    }
  });

  describe('§4 Paging 4: a page is an object with value (array) and, when more remain, @odata.nextLink (string)', () => {
    it('every page has @odata.context and value; only pages before the last have @odata.nextLink', async () => {
      const walk = await walkPages(`${base}/Property?$select=ListingKey`);
      expect(walk.pages.length).to.be.greaterThan(2);
      walk.pages.forEach((p, i) => {
        const last = i === walk.pages.length - 1;
        expect(p.headers.get('content-type')).to.match(/^application\/json/);
        expect(Object.keys(p.json).sort(), `page ${i + 1}`).to.deep.equal(last ? ['@odata.context', 'value'] : ['@odata.context', '@odata.nextLink', 'value']);
        expect(p.json['@odata.context']).to.equal(`${base}/$metadata#Property(ListingKey)`);
        expect(p.json.value).to.be.an('array');
      });
    });

    it('with $count=true a page also carries @odata.count, and nothing else', async () => {
      const r = await get(`${base}/Property?$count=true`);
      expect(Object.keys(r.json).sort()).to.deep.equal(['@odata.context', '@odata.count', '@odata.nextLink', 'value']);
    });
  });

  describe('§8 Paging: $skip is not supported; paging only follows @odata.nextLink', () => {
    for (const query of ['$skip=10', '$skip=0', '$top=5&$skip=5', 'skip=10', "$filter=MlsStatus eq 'Active'&$skip=20"]) {
      it(`${query} → 501 whose message points to @odata.nextLink`, async () => {
        const r = await get(`${base}/Property?${query}`);
        expect(r.status).to.equal(501);
        const e = odataError(r);
        expect(e.code).to.equal('SkipNotSupported');
        expect(e.target).to.match(/^\$?skip$/);
        expect(e.message).to.include('@odata.nextLink');
      });
    }

    it('$skip next to a valid $skiptoken is refused too', async () => {
      const link = (await get(`${base}/Property`)).json['@odata.nextLink'] as string;
      const r = await get(`${link}&$skip=5`);
      expect(r.status).to.equal(501);
      expect(odataError(r).message).to.include('@odata.nextLink');
    });

    describe('a $skiptoken the service did not issue for this query → 400 with target $skiptoken', () => {
      let link: string;
      let token: string;
      before(async () => {
        link = (await get(`${base}/Property?$filter=ModificationTimestamp gt '2000-01-01T00:00:00Z'&$select=ListingKey&$top=40`)).json['@odata.nextLink'];
        token = skiptokenOf(link);
        expect((await get(link)).status, 'the link as sent works').to.equal(200);
      });

      it('garbage, empty, or a client-made offset', async () => {
        for (const t of ['abc', '', '10', '0', 'eyJ2IjoxfQ', '....', 'a.b', 'A'.repeat(token.length), '%00']) {
          expect400Token(await get(withToken(link, t)), `token "${t}"`);
        }
      });

      it('tampered: any one character changed', async () => {
        // (Not the last character: in base64url its low bits may be padding that decoding ignores.)
        const positions = [0, 1, Math.floor(token.length / 3), Math.floor(token.length / 2), token.length - 2];
        for (const i of positions) {
          const c = token[i];
          const flipped = token.slice(0, i) + (c === 'A' ? 'B' : 'A') + token.slice(i + 1);
          expect400Token(await get(withToken(link, flipped)), `character ${i} changed`);
        }
      });

      it('tampered: cut short, or lengthened by whole bytes', async () => {
        expect400Token(await get(withToken(link, token.slice(0, -4))), 'cut short');
        expect400Token(await get(withToken(link, token.slice(4))), 'start cut');
        expect400Token(await get(withToken(link, `${token}AAAA`)), 'lengthened');
        expect400Token(await get(withToken(link, `AAAA${token}`)), 'prefixed');
      });

      const reuse: [string, (l: string) => string][] = [
        ['a different $filter', (l) => l.replace(/2000-01-01/, '2001-01-01')],
        ['a different $select', (l) => l.replace(/\$select=ListingKey/, '$select=ListingKey,MlsStatus')],
        ['a different $top', (l) => l.replace(/\$top=40/, '$top=41')],
        ['an added $orderby', (l) => l.replace('$top=40', '$top=40&$orderby=ListingKey')],
        ['an added $count', (l) => l.replace('$top=40', '$top=40&$count=true')],
        ['$filter removed', (l) => l.replace(/\$filter=[^&]*&/, '')],
        ['another resource set', (l) => l.replace('/Property?', '/Media?').replace(/\$select=ListingKey/, '$select=MediaKey')],
      ];
      for (const [label, change] of reuse) {
        it(`reused with ${label}`, async () => {
          const moved = change(link);
          expect(moved, 'the test changed the link').not.to.equal(link);
          expect(skiptokenOf(moved)).to.equal(token);
          expect400Token(await get(moved), label);
        });
      }
    });
  });

  describe('$top with paging: a total across pages, up to MAX_PAGE_SIZE a page', () => {
    const all = () => sorted(listings, byTs, 'ListingKey');

    it('$top=1 → one record and no @odata.nextLink', async () => {
      const r = await get(`${base}/Property?$top=1`);
      expect(r.json.value.map((x: Rec) => x.ListingKey)).to.deep.equal([all()[0].ListingKey]);
      expect(r.json).not.to.have.property('@odata.nextLink');
    });

    for (const top of [PAGE + 3, 2 * PAGE, MAX_PAGE, MAX_PAGE + 1, 37]) {
      it(`$top=${top} (PAGE_SIZE ${PAGE}, MAX_PAGE_SIZE ${MAX_PAGE}) → pages of up to ${MAX_PAGE} until ${top} records, then no @odata.nextLink`, async () => {
        const walk = await walkPages(`${base}/Property?$top=${top}`);
        expect(walk.pages.map((p) => p.json.value.length)).to.deep.equal(Array.from({ length: Math.ceil(top / MAX_PAGE) }, (_, i) => Math.min(MAX_PAGE, top - i * MAX_PAGE)));
        expect(walk.records.map((r) => r.ListingKey)).to.deep.equal(all().slice(0, top).map((r) => r.ListingKey));
      });
    }

    it('$top with Prefer: the smaller of the two bounds each page, $top the total', async () => {
      const walk = await walkPages(`${base}/Property?$top=12&$orderby=ListingKey desc`, { headers: { Prefer: 'odata.maxpagesize=5' } });
      expect(walk.pages.map((p) => p.json.value.length)).to.deep.equal([5, 5, 2]);
      expect(walk.records.map((r) => r.ListingKey)).to.deep.equal(sorted(listings, [['ListingKey', 'desc']], 'ListingKey').slice(0, 12).map((r) => r.ListingKey));
    });

    it('$top larger than the result → every record, then no @odata.nextLink', async () => {
      const walk = await walkPages(`${base}/Property?$top=100000`);
      expect(walk.records.map((r) => r.ListingKey)).to.deep.equal(all().map((r) => r.ListingKey));
    });

    it('$top=0 → an empty value and no @odata.nextLink', async () => {
      const r = await get(`${base}/Property?$top=0`);
      expect(r.status).to.equal(200);
      expect(r.json.value).to.deep.equal([]);
      expect(r.json).not.to.have.property('@odata.nextLink');
    });
  });

  describe('$count=true with paging', () => {
    it('@odata.count is the total on every page', async () => {
      const walk = await walkPages(`${base}/Property?$count=true`);
      expect(walk.pages.length).to.be.greaterThan(2);
      for (const p of walk.pages) expect(p.json['@odata.count']).to.equal(listings.length);
    });

    it('with a $filter: the filtered total on every page', async () => {
      const expected = listings.filter((r) => r.MlsStatus !== 'Active').length;
      const walk = await walkPages(`${base}/Property?$filter=MlsStatus ne 'Active'&$count=true&$select=ListingKey`, { headers: { Prefer: 'odata.maxpagesize=4' } });
      expect(walk.records).to.have.length(expected);
      for (const p of walk.pages) expect(p.json['@odata.count']).to.equal(expected);
    });

    it('with $top: the count of all matching records (not capped by $top), on every page', async () => {
      const walk = await walkPages(`${base}/Media?$count=true&$top=${PAGE * 2 + 5}`);
      expect(walk.records).to.have.length(PAGE * 2 + 5);
      for (const p of walk.pages) expect(p.json['@odata.count']).to.equal(media.length);
    });
  });

  describe('tokens are stateless: any instance over the same database serves the next page', () => {
    it('a nextLink from one server, sent to another over the same database, continues the walk', async () => {
      const r = await get(`${base}/Property?$orderby=ListingKey`);
      const onSecond = r.json['@odata.nextLink'].replace(server.url, second.url);
      expect(onSecond.startsWith(second.url)).to.equal(true);
      const page = await get(onSecond);
      expect(page.status).to.equal(200);
      expect(page.json.value.map((x: Rec) => x.ListingKey)).to.deep.equal(sorted(listings, [['ListingKey', 'asc']], 'ListingKey').slice(PAGE, 2 * PAGE).map((x) => x.ListingKey));
      expect(page.json['@odata.nextLink'].startsWith(`${second.url}/Property?`), 'the second server links to itself').to.equal(true);
    });

    it('a walk alternating between the two servers returns every record exactly once, in order', async () => {
      const walk = await walkPages(`${base}/Media`, {
        headers: { Prefer: `odata.maxpagesize=${MAX_PAGE}` },
        rewrite: (link, i) => (i % 2 === 1 ? link.replace(server.url, second.url) : link.replace(second.url, server.url)),
      });
      expect(walk.urls.some((u) => u.startsWith(second.url))).to.equal(true);
      expect(walk.records.map((r) => r.MediaKey)).to.deep.equal(sorted(media, byTs, 'MediaKey').map((r) => r.MediaKey));
    });

    it('a server with a different PAGING_SECRET refuses the token with 400', async () => {
      const other = await startTestServer(serviceModel, db.url, { pageSize: PAGE, maxPageSize: MAX_PAGE, pagingSecret: 'another secret' });
      try {
        const link = (await get(`${base}/Property`)).json['@odata.nextLink'].replace(server.url, other.url);
        expect400Token(await get(link), 'token signed with another secret');
      } finally {
        await other.close();
      }
    });
  });
});

describeEachDatabase('Paging while the data changes between page fetches', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  const rng = new Random(4242);
  let created = 0;

  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: PAGE, maxPageSize: MAX_PAGE });
    await seedDemoData(server.service, { listings: 80 });
    base = server.url;
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  const current = async () => new Map((await storedRecords(server.service, 'Property')).map((r) => [r.ListingKey as string, r]));

  /**
   * Between two page fetches: one ingest call updating a few random listings (their ModificationTimestamp
   * moves to now), sometimes creating one, deleting one (status Delete) or withdrawing/returning one.
   * Returns nothing; the tests read the database for the truth.
   */
  async function interfere(statusChanges: boolean): Promise<void> {
    const now = [...(await current()).values()];
    const inputs: Rec[] = [];
    const touched = new Set<string>();
    for (let i = rng.int(1, 8); i > 0; i--) {
      const r = rng.pick(now);
      if (touched.has(r.ListingKey)) continue;
      touched.add(r.ListingKey);
      if (statusChanges && rng.chance(0.3)) inputs.push({ ...r, MlsStatus: r.MlsStatus === 'Withdrawn' ? 'Active' : 'Withdrawn' });
      else inputs.push({ ...r, ListPrice: rng.int(100, 3000) * 1000 });
    }
    if (rng.chance(0.3)) {
      const t = rng.pick(now);
      // New keys sort before, among and after the existing ones (L000001…).
      const key = rng.pick(['A', 'L000040x', 'Z']) + String(created++).padStart(4, '0');
      inputs.push({ ...t, ListingKey: key, MlsStatus: 'Active' });
    }
    if (rng.chance(0.2)) {
      const d = rng.pick(now.filter((r) => !touched.has(r.ListingKey)));
      inputs.push({ ListingKey: d.ListingKey, '@delete': true });
    }
    await ingest(server, 'Property', inputs);
  }

  it('ModificationTimestamp order: every listing that existed throughout appears at least once, changes made during the walk are in it, and the walk only moves forward', async () => {
    const before = await current();
    const walk = await walkPages(`${base}/Property`, { between: () => interfere(false) });
    const after = await current();
    expect(walk.pages.length).to.be.greaterThan(before.size / PAGE);
    const seen = new Map<string, Rec>();
    for (const r of walk.records) seen.set(r.ListingKey, r);
    const missing = [...before.keys()].filter((k) => !seen.has(k));
    expect(missing, 'listings that existed throughout but never appeared').to.deep.equal([]);
    // Anything written before the last page was fetched is in the walk, as last written.
    const stale = [...after.values()].filter((r) => JSON.stringify(seen.get(r.ListingKey)) !== JSON.stringify(r)).map((r) => r.ListingKey);
    expect(stale, 'listings whose last appearance is not their final state').to.deep.equal([]);
    const order = walk.records.map((r) => [r.ModificationTimestamp, r.ListingKey] as const);
    for (let i = 1; i < order.length; i++) {
      const [a, b] = [order[i - 1], order[i]];
      expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), `record ${i} (${b}) after (${a})`).to.equal(true);
    }
    expect(walk.records.length, 'changed listings appeared again later in the walk').to.be.greaterThan(new Set(walk.records.map((r) => r.ListingKey)).size);
  });

  it("the removed-listings check form ($filter=MlsStatus ne 'Withdrawn', $select=ListingKey): every listing in scope throughout appears", async () => {
    const before = await current();
    const outAtSomePoint = new Set([...before.values()].filter((r) => r.MlsStatus === 'Withdrawn').map((r) => r.ListingKey as string));
    const walk = await walkPages(`${base}/Property?$filter=MlsStatus ne 'Withdrawn'&$select=ListingKey`, {
      between: async () => {
        await interfere(true);
        for (const r of (await current()).values()) if (r.MlsStatus === 'Withdrawn') outAtSomePoint.add(r.ListingKey);
      },
    });
    const seen = new Set(walk.records.map((r) => r.ListingKey));
    const inScopeThroughout = [...before.keys()].filter((k) => !outAtSomePoint.has(k));
    expect(inScopeThroughout.length).to.be.greaterThan(before.size / 2);
    expect(inScopeThroughout.filter((k) => !seen.has(k)), 'in scope throughout but missing').to.deep.equal([]);
    expect(outAtSomePoint.size, 'withdrawals happened during the walk').to.be.greaterThan(0);
  });

  for (const direction of ['asc', 'desc'] as const) {
    it(`ListingKey order (${direction}): no listing twice, every listing that existed throughout exactly once`, async () => {
      const before = await current();
      const walk = await walkPages(`${base}/Property?$orderby=ListingKey ${direction}`, { between: () => interfere(true) });
      const keys = walk.records.map((r) => r.ListingKey as string);
      const dupes = keys.filter((k, i) => keys.indexOf(k) !== i);
      expect(dupes, 'listings returned twice').to.deep.equal([]);
      expect([...before.keys()].filter((k) => !keys.includes(k)), 'listings that existed throughout but never appeared').to.deep.equal([]);
      const strictly = keys.every((k, i) => i === 0 || (direction === 'asc' ? keys[i - 1] < k : keys[i - 1] > k));
      expect(strictly, 'keys strictly in order').to.equal(true);
      expect(walk.pages.length).to.be.greaterThan(before.size / PAGE);
    });
  }
});
