/**
 * Per-client licensing, property-based: ~25 clients with random scopes (OData filters on MlsStatus,
 * PropertyType, ModificationTimestamp and ListingKey, combined with and/or/not/in, within the operator's
 * FEED_SCOPE) and random hidden fields run random requests of every kind (collections with filters, $select,
 * $orderby, $top, $count and nextLink walks; key fetches in and out of scope; $expand of all five navigations;
 * navigation paths; the related resources' own endpoints; $metadata). Every answer is checked against an
 * independent computation: the data read straight from the tables and the scope evaluated by a hand-written
 * predicate (support/licence-oracle.ts). Spec §2 (related resources), §3 (a listing stops appearing in the
 * feed), §4 (removed-listings check, expansion rules).
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import type { RunningServer } from '../src/server';
import { seedDemoData } from '../src/seed/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { startTestServer, TEST_TOKEN } from './support/http';
import { call, parseCredentials, pool, Reply, runCli, walk } from './support/licence-http';
import { jsonView, MetadataView, xmlView } from './support/licence-metadata';
import {
  Child, CHILDREN, childByNav, Domain, domainOf, evaluate, expectedRecord, Expr, fieldsOf, HiddenBySet, hiddenBySet, hiddenIn,
  hiddenValuesIn, Prng, recordDiff, Rec, render, randomExpr, Snapshot, snapshot,
} from './support/licence-oracle';

const LISTINGS = 150;
const CLIENTS = 25;
const SEED = 0x1ce5ed;
const PAGE = 20;
/** The operator's distribution scope for this suite (ANDed with every client's). */
const FEED: Expr = { k: 'cmp', field: 'PropertyType', op: 'ne', value: 'Farm' };
const MISSING_KEY = 'L999999';

const fieldNames = (set: string) => serviceModel.entitySets.find((s) => s.name === set)!.fields.map((f) => f.name);
const SORTABLE_PROPERTY = ['ListingKey', 'ModificationTimestamp', 'MlsStatus', 'PropertyType'];
const FILTERABLE_PROPERTY = ['MlsStatus', 'PropertyType', 'ModificationTimestamp', 'PhotosChangeTimestamp', 'DocumentsChangeTimestamp'];

interface Subject {
  n: number;
  id: string;
  token: string;
  scope?: Expr;
  hiddenList: string[];
  hidden: HiddenBySet;
  /** Listing keys the client may see (feed scope and its own). */
  visible: Set<string>;
  /** Every other listing key. */
  outside: string[];
}

function qs(params: Record<string, string | undefined>): string {
  const parts = Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeURIComponent(v!)}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

const describeSubject = (s: Subject) => {
  const scope = s.scope ? render(s.scope) : '(all)';
  return `${s.id} [scope ${scope.length > 100 ? `${scope.slice(0, 100)}…` : scope}; hidden ${s.hiddenList.join(',') || '-'}]`;
};

/** A 404 body with the key taken out, to compare out-of-scope and missing answers. */
const normalised404 = (r: Reply, key: string) => `${r.status} ${r.headers.get('content-type')} ${r.text.split(key).join('<KEY>')}`;

describeEachDatabase('Per-client licensing: scope and hidden fields, property-based, no leak', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  let snap: Snapshot;
  let domain: Domain;
  let fullXml: MetadataView;
  let fullJson: MetadataView;
  const subjects: Subject[] = [];

  /** Runs `check` for every client (a few at a time) and fails once with every violation found. */
  async function forEveryClient(salt: number, check: (s: Subject, rng: Prng, v: string[]) => Promise<void>): Promise<void> {
    const violations: string[] = [];
    await pool(subjects.map((s) => async () => {
      const mine: string[] = [];
      await check(s, new Prng(SEED ^ (s.n * 7919) ^ (salt * 104729)), mine);
      violations.push(...mine.map((m) => `${describeSubject(s)}: ${m.length > 400 ? `${m.slice(0, 400)}…` : m}`));
    }), 5);
    if (violations.length) expect.fail(`${violations.length} violation(s); the first ones:\n  ${violations.slice(0, 25).join('\n  ')}`);
  }

  const childrenOf = (c: Child, key: string) => snap.children.get(c.set)!.filter((r) => r[c.fk] === key);

  before(async function () {
    this.timeout(300_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: PAGE, feedScope: render(FEED) });
    await seedDemoData(server.service, { listings: LISTINGS });
    base = server.url;
    snap = await snapshot(server.service.db);
    domain = domainOf(snap.listings.values());
    fullXml = xmlView(serviceModel.metadataXml);
    fullJson = jsonView(serviceModel.metadataJson);

    const rng = new Prng(SEED);
    const all = [...snap.listings.values()];
    const feedKeys = all.filter((r) => evaluate(FEED, r));
    for (let n = 0; n < CLIENTS; n++) {
      let scope: Expr | undefined;
      if (n === 1) scope = { k: 'cmp', field: 'ListingKey', op: 'eq', value: 'NO-SUCH-LISTING' };
      else if (n !== 0) {
        for (let attempt = 0; attempt < 200; attempt++) {
          scope = randomExpr(rng, domain, 3);
          const share = feedKeys.filter((r) => evaluate(scope!, r)).length / feedKeys.length;
          if (share >= 0.1 && share <= 0.9) break;
        }
      }
      const hidden: string[] = [];
      if (n % 4 !== 0) {
        hidden.push(...rng.sample(fieldNames('Property').filter((f) => f !== 'ListingKey'), rng.int(0, 4)));
        if (rng.chance(0.35)) hidden.push(rng.pick(FILTERABLE_PROPERTY));
        if (rng.chance(0.5)) {
          // The key and the field linking a record to its listing cannot be hidden (see the last test).
          for (const c of rng.sample(CHILDREN, rng.int(1, 3))) hidden.push(`${c.set}.${rng.pick(fieldNames(c.set).filter((f) => f !== c.key && f !== c.fk))}`);
        }
        if (rng.chance(0.2)) hidden.push(`Member.${rng.pick(fieldNames('Member').filter((f) => f !== 'MemberKey'))}`);
      }
      if (n === 2) hidden.push('ModificationTimestamp', 'Media.Order', 'PublicRemarks');
      if (n === 3) hidden.push('MlsStatus', 'PropertyType', 'Media.ShortDescription', 'OpenHouse.OpenHouseRemarks');
      const hiddenList = [...new Set(hidden)];
      const { client } = await server.service.clients.add({ id: `lic-${n}`, name: `Licensee ${n}`, scope: scope && render(scope), hiddenFields: hiddenList });
      const token = await server.service.clients.issueToken(client.id, undefined);
      const visible = new Set(all.filter((r) => evaluate(FEED, r) && (!scope || evaluate(scope, r))).map((r) => r.ListingKey as string));
      subjects.push({
        n, id: client.id, token, scope, hiddenList, hidden: hiddenBySet(hiddenList), visible,
        outside: all.map((r) => r.ListingKey as string).filter((k) => !visible.has(k)),
      });
    }
    // The draw must cover what the suite claims to cover.
    expect(subjects.filter((s) => s.visible.size > 0 && s.outside.length > 0).length).to.be.at.least(CLIENTS - 3);
    expect(subjects.filter((s) => s.hiddenList.length === 0).length).to.be.at.least(3);
    expect(subjects.filter((s) => s.hiddenList.some((h) => FILTERABLE_PROPERTY.includes(h))).length).to.be.at.least(3);
    expect(subjects.some((s) => s.scope && /\bnot\b/.test(render(s.scope)))).to.equal(true);
    expect(subjects.some((s) => s.scope && /\bor\b/.test(render(s.scope)))).to.equal(true);
    expect(subjects.some((s) => s.scope && /\bin\b/.test(render(s.scope)))).to.equal(true);
  });
  after(async function () {
    this.timeout(60_000);
    await server?.close();
    await db?.drop();
  });

  /** Checks one page-walk of Property against the oracle; returns violations. */
  function checkPropertyWalk(
    s: Subject, label: string, pages: Reply[], records: Rec[], expected: Rec[],
    q: { select?: string[]; orderby?: [string, 'asc' | 'desc']; top?: number; count: boolean; expand: { nav: string; select?: string[] }[] },
    v: string[],
  ): void {
    const bad = pages.find((p) => p.status !== 200);
    if (bad) { v.push(`${label}: status ${bad.status} ${bad.text.slice(0, 200)}`); return; }
    const keys = records.map((r) => r.ListingKey as string);
    if (new Set(keys).size !== keys.length) v.push(`${label}: a listing appears twice`);
    for (const k of keys) if (!s.visible.has(k)) v.push(`${label}: LEAK: listing ${k} is outside the client's scope`);
    const expectedKeys = new Set(expected.map((r) => r.ListingKey as string));
    for (const k of keys) if (s.visible.has(k) && !expectedKeys.has(k)) v.push(`${label}: listing ${k} does not match the query's filter`);
    const [field, dir] = q.orderby ?? ['ModificationTimestamp', 'asc'];
    const value = (k: string) => String(snap.listings.get(k)?.[field] ?? '');
    const sign = dir === 'asc' ? 1 : -1;
    const sortedPrimary = expected.map((r) => String(r[field] ?? '')).sort((a, b) => sign * (a < b ? -1 : a > b ? 1 : 0));
    if (q.top === undefined) {
      for (const k of expectedKeys) if (!keys.includes(k)) v.push(`${label}: in-scope listing ${k} is missing`);
    } else {
      const want = Math.min(q.top, expected.length);
      if (keys.length !== want) v.push(`${label}: ${keys.length} listings for $top=${q.top}, expected ${want}`);
      const got = keys.map(value).sort((a, b) => sign * (a < b ? -1 : a > b ? 1 : 0));
      if (JSON.stringify(got) !== JSON.stringify(sortedPrimary.slice(0, want))) v.push(`${label}: $top did not return the first ${want} by ${field} ${dir}`);
    }
    for (let i = 1; i < keys.length; i++) {
      const a = value(keys[i - 1]);
      const b = value(keys[i]);
      if (sign * (a < b ? -1 : a > b ? 1 : 0) > 0) { v.push(`${label}: not in ${field} ${dir} order at ${keys[i]}`); break; }
    }
    if (q.count) {
      for (const p of pages) {
        if (p.json['@odata.count'] !== expected.length) v.push(`${label}: @odata.count ${p.json['@odata.count']}, expected ${expected.length}`);
      }
    }
    const select = q.select && !q.select.includes('*') ? q.select : undefined;
    const hiddenProperty = s.hidden.get('Property');
    for (const r of records) {
      v.push(...hiddenIn('Property', r, s.hidden, label));
      const stored = snap.listings.get(r.ListingKey);
      if (!stored) continue;
      const own = Object.fromEntries(Object.entries(r).filter(([k]) => !q.expand.some((e) => e.nav === k)));
      const diff = recordDiff(own, expectedRecord(stored, hiddenProperty, select));
      if (diff) v.push(`${label}: listing ${r.ListingKey} differs: ${diff}`);
      for (const e of q.expand) v.push(...checkExpansion(s, `${label} ${r.ListingKey}`, r.ListingKey, e, r[e.nav]));
    }
  }

  function checkExpansion(s: Subject, label: string, key: string, e: { nav: string; select?: string[] }, got: unknown): string[] {
    const v: string[] = [];
    const c = childByNav(e.nav);
    if (!Array.isArray(got)) return [`${label}: ${e.nav} is not an array`];
    const want = childrenOf(c, key);
    const gotKeys = got.map((r: Rec) => r[c.key]).sort();
    const wantKeys = want.map((r) => r[c.key]).sort();
    if (JSON.stringify(gotKeys) !== JSON.stringify(wantKeys)) v.push(`${label}: ${e.nav} has ${gotKeys.length} records, expected ${wantKeys.length}`);
    const byKey = new Map(want.map((r) => [r[c.key], r]));
    for (const r of got as Rec[]) {
      const stored = byKey.get(r[c.key]);
      if (!stored) { v.push(`${label}: ${e.nav} ${r[c.key]} does not belong to ${key}`); continue; }
      const diff = recordDiff(r, expectedRecord(stored, s.hidden.get(c.set), e.select));
      if (diff) v.push(`${label}: ${e.nav} ${r[c.key]} differs: ${diff}`);
    }
    return v;
  }

  const usesHidden = (s: Subject, set: string, names: Iterable<string>) => [...names].some((n) => s.hidden.get(set)?.has(n));

  describe('collections: random $filter, $select, $orderby, $top, $count, $expand, walked to the end', function () {
    this.timeout(60_000);
    it('return exactly the in-scope listings that match (never one outside), with hidden fields removed; a hidden field named → 403', async function () {
      this.timeout(300_000);
      let walks = 0;
      let forbidden = 0;
      await forEveryClient(1, async (s, rng, v) => {
        for (let i = 0; i < 7; i++) {
          const filter = rng.chance(0.6) ? randomExpr(rng, domain, 2) : undefined;
          let select: string[] | undefined;
          const r = rng.next();
          if (r < 0.3) select = ['ListingKey'];
          else if (r < 0.4) select = ['*'];
          else if (r < 0.65) {
            select = ['ListingKey', ...rng.sample(fieldNames('Property').filter((f) => f !== 'ListingKey'), rng.int(1, 4))];
            const hp = [...(s.hidden.get('Property') ?? [])];
            if (hp.length && rng.chance(0.3)) select.push(rng.pick(hp));
            select = [...new Set(select)];
          }
          const orderby: [string, 'asc' | 'desc'] | undefined = rng.chance(0.45) ? [rng.pick(SORTABLE_PROPERTY), rng.chance(0.5) ? 'asc' : 'desc'] : undefined;
          const top = rng.chance(0.25) ? rng.int(1, 45) : undefined;
          const count = rng.chance(0.4);
          const expand = rng.chance(0.3) ? rng.sample(CHILDREN, rng.int(1, 3)).map((c) => {
            if (!rng.chance(0.3)) return { nav: c.nav };
            return { nav: c.nav, select: [...new Set([c.key, ...rng.sample(fieldNames(c.set), rng.int(1, 2))])] };
          }) : [];
          const params = {
            $filter: filter && render(filter),
            $select: select?.join(','),
            $orderby: orderby && `${orderby[0]} ${orderby[1]}`,
            $top: top === undefined ? undefined : String(top),
            $count: count ? 'true' : undefined,
            $expand: expand.length ? expand.map((e) => (e.select ? `${e.nav}($select=${e.select.join(',')})` : e.nav)).join(',') : undefined,
          };
          const url = `${base}/Property${qs(params)}`;
          const label = `GET Property${qs(params)}`;
          const hiddenUsed = (filter && usesHidden(s, 'Property', fieldsOf(filter)))
            || (select && !select.includes('*') && usesHidden(s, 'Property', select))
            || (orderby && usesHidden(s, 'Property', [orderby[0]]))
            || expand.some((e) => e.select && usesHidden(s, childByNav(e.nav).set, e.select));
          const maxpagesize = rng.pick([7, PAGE, 50]);
          const { pages, records } = await walk(url, s.token, { Prefer: `odata.maxpagesize=${maxpagesize}` });
          if (hiddenUsed) {
            forbidden++;
            if (pages[0].status !== 403) v.push(`${label}: names a hidden field, expected 403, got ${pages[0].status}`);
            else if (pages[0].json?.error?.code === undefined) v.push(`${label}: 403 without an OData error body`);
            continue;
          }
          walks++;
          const expected = [...snap.listings.values()].filter((l) => s.visible.has(l.ListingKey) && (!filter || evaluate(filter, l)));
          checkPropertyWalk(s, label, pages, records, expected, { select, orderby, top, count, expand }, v);
        }
      });
      expect(walks, 'walks checked').to.be.at.least(100);
      expect(forbidden, 'requests naming a hidden field').to.be.at.least(10);
    });

    it('the removed-listings check ($select=ListingKey, following nextLink) lists exactly the in-scope listings; /$count agrees', async function () {
      this.timeout(120_000);
      await forEveryClient(2, async (s, _rng, v) => {
        const { pages, records } = await walk(`${base}/Property?$select=ListingKey`, s.token);
        checkPropertyWalk(s, 'removed-listings walk', pages, records, [...snap.listings.values()].filter((l) => s.visible.has(l.ListingKey)),
          { select: ['ListingKey'], count: false, expand: [] }, v);
        const c = await call(`${base}/Property/$count`, { token: s.token });
        if (c.status !== 200 || c.text !== String(s.visible.size)) v.push(`/Property/$count: ${c.status} ${c.text.slice(0, 100)}, expected ${s.visible.size}`);
        const f = await call(`${base}/Property?$count=true&$top=0`, { token: s.token });
        if (f.json?.['@odata.count'] !== s.visible.size) v.push(`$count=true&$top=0: ${f.json?.['@odata.count']}, expected ${s.visible.size}`);
      });
    });
  });

  describe('fetch by key', function () {
    this.timeout(60_000);
    it('an in-scope listing: 200 with hidden fields removed; an out-of-scope one: 404 exactly like a missing key, with any options', async function () {
      this.timeout(120_000);
      await forEveryClient(3, async (s, rng, v) => {
        const missing = await call(`${base}/Property('${MISSING_KEY}')`, { token: s.token });
        if (missing.status !== 404) v.push(`missing key: ${missing.status}`);
        const shape = normalised404(missing, MISSING_KEY);
        const variants = ['', '?$select=ListingKey', '?$expand=Media,OpenHouse,historyTransactional,PropertyRooms,PropertyUnits', '?$select=ListingKey&$expand=PropertyRooms'];
        for (const key of rng.sample([...s.visible], 6)) {
          const variant = rng.pick(variants);
          const r = await call(`${base}/Property('${key}')${variant}`, { token: s.token });
          if (r.status !== 200) { v.push(`in-scope ${key}${variant}: ${r.status} ${r.text.slice(0, 150)}`); continue; }
          v.push(...hiddenIn('Property', r.json, s.hidden, `Property('${key}')${variant}`));
          const expand = variant.includes('$expand') ? variant.split('$expand=')[1].split(',').map((nav) => ({ nav })) : [];
          const own = Object.fromEntries(Object.entries(r.json).filter(([k]) => !k.startsWith('@') && !expand.some((e) => e.nav === k)));
          const diff = recordDiff(own, expectedRecord(snap.listings.get(key)!, s.hidden.get('Property'), variant.startsWith('?$select') ? ['ListingKey'] : undefined));
          if (diff) v.push(`in-scope ${key}${variant}: ${diff}`);
          for (const e of expand) v.push(...checkExpansion(s, `Property('${key}')${variant}`, key, e, r.json[e.nav]));
        }
        // Out of scope: the client's own scope, and the feed scope (a Farm listing).
        const farm = s.outside.filter((k) => snap.listings.get(k)!.PropertyType === 'Farm');
        const outKeys = [...new Set([...rng.sample(s.outside, 6), ...rng.sample(farm, 1)])];
        for (const key of outKeys) {
          for (const variant of ['', ...rng.sample(variants.slice(1), 2)]) {
            const r = await call(`${base}/Property('${key}')${variant}`, { token: s.token });
            const m = await call(`${base}/Property('${MISSING_KEY}')${variant}`, { token: s.token });
            if (r.status !== 404) v.push(`LEAK: out-of-scope Property('${key}')${variant}: ${r.status} ${r.text.slice(0, 150)}`);
            else if (normalised404(r, key) !== normalised404(m, MISSING_KEY)) {
              v.push(`out-of-scope Property('${key}')${variant} answers differently from a missing key: ${r.text.slice(0, 200)} vs ${m.text.slice(0, 200)}`);
            }
          }
          const named = await call(`${base}/Property(ListingKey='${key}')`, { token: s.token });
          const namedMissing = await call(`${base}/Property(ListingKey='${MISSING_KEY}')`, { token: s.token });
          if (named.status !== 404) v.push(`LEAK: out-of-scope Property(ListingKey='${key}'): ${named.status}`);
          else if (normalised404(named, key) !== normalised404(namedMissing, MISSING_KEY)) v.push(`Property(ListingKey='${key}') differs from a missing key`);
          const q = await call(`${base}/Property${qs({ $filter: `ListingKey eq '${key}'`, $count: 'true' })}`, { token: s.token });
          if (q.status !== 200 || q.json.value.length !== 0 || q.json['@odata.count'] !== 0) v.push(`LEAK: $filter=ListingKey eq '${key}' (out of scope): ${q.text.slice(0, 150)}`);
          const c = await call(`${base}/Property/$count${qs({ $filter: `ListingKey eq '${key}'` })}`, { token: s.token });
          if (c.text !== '0') v.push(`LEAK: /Property/$count for out-of-scope ${key}: ${c.text.slice(0, 100)}`);
        }
        if (shape.includes('<KEY>') === false) v.push(`the 404 does not name the key: ${shape}`);
      });
    });
  });

  describe('$expand and navigation paths', function () {
    this.timeout(60_000);
    it('navigation paths of in-scope listings return exactly their related records (paged); of out-of-scope ones 404 like a missing key', async function () {
      this.timeout(120_000);
      await forEveryClient(4, async (s, rng, v) => {
        for (const key of rng.sample([...s.visible], 2)) {
          for (const c of CHILDREN) {
            const { pages, records } = await walk(`${base}/Property('${key}')/${c.nav}`, s.token, { Prefer: 'odata.maxpagesize=4' });
            const bad = pages.find((p) => p.status !== 200);
            if (bad) { v.push(`Property('${key}')/${c.nav}: ${bad.status} ${bad.text.slice(0, 150)}`); continue; }
            for (const r of records) v.push(...hiddenIn(c.set, r, s.hidden, `Property('${key}')/${c.nav}`));
            v.push(...checkExpansion(s, `Property('${key}')/${c.nav}`, key, { nav: c.nav }, records));
          }
        }
        for (const key of rng.sample(s.outside, 3)) {
          for (const c of rng.sample(CHILDREN, 2)) {
            const r = await call(`${base}/Property('${key}')/${c.nav}`, { token: s.token });
            const m = await call(`${base}/Property('${MISSING_KEY}')/${c.nav}`, { token: s.token });
            if (r.status !== 404) v.push(`LEAK: Property('${key}')/${c.nav} (out of scope): ${r.status} ${r.text.slice(0, 150)}`);
            else if (normalised404(r, key) !== normalised404(m, MISSING_KEY)) v.push(`Property('${key}')/${c.nav} differs from a missing key: ${r.text.slice(0, 200)}`);
          }
        }
      });
    });

    it('$expand of all five navigations on every page: no out-of-scope parent, every related record of each parent, no hidden field', async function () {
      this.timeout(120_000);
      await forEveryClient(5, async (s, rng, v) => {
        const expand = CHILDREN.map((c) => ({ nav: c.nav }));
        const filter = rng.chance(0.5) ? randomExpr(rng, domain, 1) : undefined;
        if (filter && usesHidden(s, 'Property', fieldsOf(filter))) return;
        const url = `${base}/Property${qs({ $expand: expand.map((e) => e.nav).join(','), $filter: filter && render(filter) })}`;
        const { pages, records } = await walk(url, s.token, { Prefer: 'odata.maxpagesize=30' });
        const expected = [...snap.listings.values()].filter((l) => s.visible.has(l.ListingKey) && (!filter || evaluate(filter, l)));
        checkPropertyWalk(s, `GET Property${qs({ $expand: 'all five', $filter: filter && render(filter) })}`, pages, records, expected, { count: false, expand }, v);
      });
    });
  });

  describe("the related resources' own endpoints", function () {
    this.timeout(60_000);
    it('/Media, /OpenHouse(s), /HistoryTransactional, /PropertyRooms, /PropertyUnitTypes: never a record of an out-of-scope listing; exactly the rest', async function () {
      this.timeout(300_000);
      await forEveryClient(6, async (s, rng, v) => {
        const outside = new Set(s.outside);
        for (const c of CHILDREN) {
          const records = snap.children.get(c.set)!;
          const visibleChild = (r: Rec) => r[c.fk] === undefined || r[c.fk] === null || !outside.has(r[c.fk]);
          const filters: (Expr | undefined)[] = [
            { k: 'in', field: c.fk, values: [...rng.sample(s.outside, 4), ...rng.sample([...s.visible], 3)] },
            { k: 'cmp', field: c.fk, op: 'eq', value: rng.pick(s.outside) ?? MISSING_KEY },
            { k: 'cmp', field: 'ModificationTimestamp', op: rng.pick(['gt', 'le'] as const), value: records[rng.int(0, records.length - 1)].ModificationTimestamp, style: rng.int(0, 3) },
          ];
          // Whole walks of the large sets for some clients only (Media has thousands of records).
          if (c.set !== 'Media' || s.n % 5 === 0) filters.push(undefined);
          for (const filter of filters) {
            const hideUsed = filter && usesHidden(s, c.set, fieldsOf(filter));
            const path = c.set === 'OpenHouse' && rng.chance(0.5) ? 'OpenHouses' : c.set;
            const count = rng.chance(0.5);
            const url = `${base}/${path}${qs({ $filter: filter && render(filter), $count: count ? 'true' : undefined })}`;
            const label = `GET ${path}${qs({ $filter: filter && render(filter) })}`;
            const { pages, records: got } = await walk(url, s.token, { Prefer: `odata.maxpagesize=${rng.pick([25, 200, 1000])}` });
            if (hideUsed) {
              if (pages[0].status !== 403) v.push(`${label}: names hidden ${c.set} field, expected 403, got ${pages[0].status}`);
              continue;
            }
            const bad = pages.find((p) => p.status !== 200);
            if (bad) { v.push(`${label}: ${bad.status} ${bad.text.slice(0, 150)}`); continue; }
            const want = records.filter((r) => visibleChild(r) && (!filter || evaluate(filter, r)));
            const gotKeys = got.map((r) => r[c.key] as string);
            for (const r of got) {
              if (outside.has(r[c.fk])) v.push(`${label}: LEAK: ${c.set} ${r[c.key]} belongs to out-of-scope listing ${r[c.fk]}`);
              v.push(...hiddenIn(c.set, r, s.hidden, label));
            }
            const wantKeys = new Set(want.map((r) => r[c.key] as string));
            if (gotKeys.length !== wantKeys.size || gotKeys.some((k) => !wantKeys.has(k))) {
              v.push(`${label}: ${gotKeys.length} records, expected ${wantKeys.size}`);
            }
            if (count && pages[0].json['@odata.count'] !== want.length) v.push(`${label}: @odata.count ${pages[0].json['@odata.count']}, expected ${want.length}`);
            const byKey = new Map(want.map((r) => [r[c.key], r]));
            for (const r of got.slice(0, 40)) {
              const stored = byKey.get(r[c.key]);
              const diff = stored && recordDiff(r, expectedRecord(stored, s.hidden.get(c.set)));
              if (diff) v.push(`${label}: ${c.set} ${r[c.key]} differs: ${diff}`);
            }
          }
          const n = await call(`${base}/${c.set}/$count`, { token: s.token });
          const want = records.filter(visibleChild).length;
          if (n.text !== String(want)) v.push(`/${c.set}/$count: ${n.text.slice(0, 100)}, expected ${want}`);
          // Fetch by key: a record of an out-of-scope listing is missing; one of an in-scope listing is there.
          const outRecord = rng.pick(records.filter((r) => outside.has(r[c.fk])));
          if (outRecord) {
            const r = await call(`${base}/${c.set}('${outRecord[c.key]}')`, { token: s.token });
            const m = await call(`${base}/${c.set}('NO-SUCH-${c.set}')`, { token: s.token });
            if (r.status !== 404) v.push(`LEAK: ${c.set}('${outRecord[c.key]}') of out-of-scope ${outRecord[c.fk]}: ${r.status}`);
            else if (normalised404(r, outRecord[c.key]) !== normalised404(m, `NO-SUCH-${c.set}`)) v.push(`${c.set}('${outRecord[c.key]}') (out of scope) differs from a missing key`);
          }
          const inRecord = rng.pick(records.filter((r) => s.visible.has(r[c.fk])));
          if (inRecord) {
            const r = await call(`${base}/${c.set}('${inRecord[c.key]}')`, { token: s.token });
            if (r.status !== 200) v.push(`${c.set}('${inRecord[c.key]}') of in-scope ${inRecord[c.fk]}: ${r.status}`);
            else {
              v.push(...hiddenIn(c.set, r.json, s.hidden, `${c.set}('${inRecord[c.key]}')`));
              const own = Object.fromEntries(Object.entries(r.json).filter(([k]) => !k.startsWith('@')));
              const diff = recordDiff(own, expectedRecord(inRecord, s.hidden.get(c.set)));
              if (diff) v.push(`${c.set}('${inRecord[c.key]}') differs: ${diff}`);
            }
          }
        }
        // Sets with no listing behind them are whole, less hidden fields.
        for (const set of ['Member', 'Office']) {
          const { pages, records } = await walk(`${base}/${set}`, s.token, { Prefer: 'odata.maxpagesize=1000' });
          if (pages.some((p) => p.status !== 200)) { v.push(`/${set}: ${pages.map((p) => p.status)}`); continue; }
          if (records.length !== snap.others.get(set)!.length) v.push(`/${set}: ${records.length} records, expected ${snap.others.get(set)!.length}`);
          for (const r of records) v.push(...hiddenIn(set, r, s.hidden, `/${set}`));
        }
      });
    });
  });

  describe('hidden fields', function () {
    this.timeout(60_000);
    it("are absent from the client's $metadata (XML and JSON), and nothing else is", async function () {
      this.timeout(120_000);
      await forEveryClient(7, async (s, _rng, v) => {
        for (const [format, parse, full] of [['xml', xmlView, fullXml], ['json', jsonView, fullJson]] as const) {
          const r = await call(`${base}/$metadata?$format=${format}`, { token: s.token });
          if (r.status !== 200) { v.push(`$metadata ${format}: ${r.status}`); continue; }
          let view: MetadataView;
          try {
            view = parse(r.text);
          } catch (e) {
            v.push(`$metadata ${format}: ${(e as Error).message}`);
            continue;
          }
          for (const [set, type] of full.setType) {
            const hidden = s.hidden.get(set) ?? new Set<string>();
            const want = [...full.properties.get(type)!].filter((p) => !hidden.has(p));
            const got = [...(view.properties.get(type) ?? [])];
            if (JSON.stringify(got.sort()) !== JSON.stringify(want.sort())) {
              const extra = got.filter((p) => !want.includes(p));
              const lost = want.filter((p) => !got.includes(p));
              v.push(`$metadata ${format}: ${type} declares ${extra.length ? `hidden ${extra.join(',')}` : ''}${lost.length ? ` and lacks visible ${lost.join(',')}` : ''}`);
            }
            for (const h of hidden) {
              if (view.setPaths.get(set)?.has(h)) v.push(`$metadata ${format}: entity set ${set}'s annotations name hidden ${h}`);
              if (view.constrained.get(type)?.has(h)) v.push(`$metadata ${format}: a referential constraint of ${type} names hidden ${h}`);
            }
            const wantPaths = [...(full.setPaths.get(set) ?? [])].filter((p) => !hidden.has(p)).sort();
            if (JSON.stringify([...(view.setPaths.get(set) ?? [])].sort()) !== JSON.stringify(wantPaths)) {
              v.push(`$metadata ${format}: ${set}'s restriction annotations changed beyond the hidden fields`);
            }
          }
          if (s.hiddenList.length === 0 && r.text !== (format === 'xml' ? serviceModel.metadataXml : serviceModel.metadataJson)) {
            v.push(`$metadata ${format}: a client without hidden fields gets a different document`);
          }
        }
      });
    });

    it('naming a hidden field in $filter (also under not/or, in functions, on /$count), $orderby, $select, or inside $expand(…) → 403', async function () {
      this.timeout(120_000);
      let checked = 0;
      await forEveryClient(8, async (s, rng, v) => {
        const requests: string[] = [];
        for (const h of s.hidden.get('Property') ?? []) {
          const f = (expr: string) => `${base}/Property${qs({ $filter: expr })}`;
          requests.push(
            f(`${h} eq null`), f(`not (${h} ne null)`), f(`ListingKey eq 'x' or ${h} eq null`), `${base}/Property/$count${qs({ $filter: `${h} eq null` })}`,
            `${base}/Property${qs({ $orderby: h })}`, `${base}/Property${qs({ $orderby: `ListingKey,${h} desc` })}`,
            `${base}/Property${qs({ $select: `ListingKey,${h}` })}`, `${base}/Property('${rng.pick([...s.visible]) ?? MISSING_KEY}')${qs({ $select: h })}`,
          );
          if (['MlsStatus', 'PropertyType'].includes(h)) requests.push(f(`startswith(${h},'A')`), f(`${h} in ('Active','Closed')`));
        }
        for (const c of CHILDREN) {
          for (const h of s.hidden.get(c.set) ?? []) {
            requests.push(
              `${base}/Property${qs({ $expand: `${c.nav}($select=${c.key},${h})` })}`,
              `${base}/Property${qs({ $expand: `${c.nav}($filter=${h} eq null)` })}`,
              `${base}/Property${qs({ $expand: `${c.nav}($orderby=${h})` })}`,
              `${base}/${c.set}${qs({ $filter: `${h} eq null` })}`,
              `${base}/${c.set}${qs({ $select: h })}`,
              `${base}/${c.set}${qs({ $orderby: h })}`,
              `${base}/Property('${rng.pick([...s.visible]) ?? MISSING_KEY}')/${c.nav}${qs({ $select: h })}`,
              `${base}/Property('${rng.pick([...s.visible]) ?? MISSING_KEY}')/${c.nav}${qs({ $filter: `${h} eq null` })}`,
            );
          }
        }
        for (const url of requests) {
          checked++;
          const r = await call(url, { token: s.token });
          if (r.status !== 403 || typeof r.json?.error?.code !== 'string') v.push(`${url.slice(base.length)}: expected 403 with an OData error, got ${r.status} ${r.text.slice(0, 150)}`);
        }
      });
      expect(checked).to.be.at.least(50);
    });

    it('nextLinks carry no value of a hidden field (the $skiptoken of a walk ordered by a hidden field is readable)', async function () {
      this.timeout(120_000);
      let links = 0;
      await forEveryClient(10, async (s, rng, v) => {
        const check = (set: string, key: string, pages: Reply[], label: string) => {
          for (const p of pages) {
            const link = p.json?.['@odata.nextLink'];
            if (!link) continue;
            links++;
            const last = p.json.value[p.json.value.length - 1];
            const stored = set === 'Property' ? snap.listings.get(last?.[key]) : snap.children.get(set)!.find((r) => r[key] === last?.[key]);
            for (const leak of hiddenValuesIn(link, stored, s.hidden.get(set))) v.push(`${label}: LEAK of ${set} ${last?.[key]}: ${leak}`);
          }
        };
        if (s.hidden.get('Property')?.size) {
          const w = await walk(`${base}/Property?$select=ListingKey`, s.token, { Prefer: 'odata.maxpagesize=10' });
          check('Property', 'ListingKey', w.pages, 'removed-listings walk');
        }
        for (const c of CHILDREN) {
          if (!s.hidden.get(c.set)?.size) continue;
          const parents = [...s.visible].filter((k) => childrenOf(c, k).length >= 3);
          for (const key of rng.sample(parents, 2)) {
            const w = await walk(`${base}/Property('${key}')/${c.nav}`, s.token, { Prefer: 'odata.maxpagesize=2' });
            check(c.set, c.key, w.pages, `Property('${key}')/${c.nav}`);
            const own = await walk(`${base}/${c.set}${qs({ $filter: `${c.fk} eq '${key}'` })}`, s.token, { Prefer: 'odata.maxpagesize=2' });
            check(c.set, c.key, own.pages, `${c.set}?$filter=${c.fk} eq '${key}'`);
          }
        }
      });
      expect(links).to.be.at.least(20);
    });

    it('error messages do not name hidden fields the request did not name (e.g. lists of filterable or sortable fields)', async function () {
      this.timeout(120_000);
      await forEveryClient(9, async (s, _rng, v) => {
        const probes: [string, string][] = [
          ['Property', `$filter=${encodeURIComponent('BedroomsTotal eq 3')}`],
          ['Property', `$orderby=BedroomsTotal`],
          ['Property', `$filter=${encodeURIComponent("OwnerName eq 'x'")}`],
          ['Property', `$orderby=OwnerName`],
          ['Property', `$filter=${encodeURIComponent("PhotosChangeTimestamp gt 2020-01-01T00:00:00Z")}&$orderby=ListingKey,MlsStatus`],
          ['Media', `$filter=${encodeURIComponent("MediaURL eq 'x'")}`],
          ['Media', `$orderby=MediaURL`],
          ['OpenHouse', `$filter=${encodeURIComponent("OpenHouseRemarks eq 'x'")}`],
          ['HistoryTransactional', `$orderby=FieldName`],
          ['PropertyRooms', `$filter=${encodeURIComponent('RoomArea eq 1')}`],
          ['PropertyUnitTypes', `$orderby=UnitTypeBedsTotal`],
        ];
        for (const [set, query] of probes) {
          const r = await call(`${base}/${set}?${query}`, { token: s.token });
          if (r.status < 400) continue;
          const named = decodeURIComponent(query);
          for (const h of s.hidden.get(set) ?? []) {
            if (new RegExp(`\\b${h}\\b`).test(named)) continue;
            if (new RegExp(`\\b${h}\\b`).test(r.text)) v.push(`GET ${set}?${named} → ${r.status} names hidden ${h}: ${r.json?.error?.message?.slice(0, 160)}`);
          }
        }
      });
    });
  });

  describe('a client scope narrows the FEED_SCOPE and can never widen it', function () {
    this.timeout(60_000);
    // The licence is the feed scope AND the client scope. A scope text that is only valid once wrapped in
    // parentheses (`… ) or ( …`) must be refused, or at least must not reach outside the feed scope.
    const escapes = ["MlsStatus eq 'Active') or (true", "true) or (PropertyType eq 'Farm'"];
    for (const scope of escapes) {
      it(`clients add --scope "${scope}" (CLI): refused, or the client still sees no listing outside the feed scope`, async function () {
        this.timeout(60_000);
        const r = await runCli(db.url, ['clients', 'add', '--name', 'Escape', '--static-token', '--scope', scope]);
        if (r.code !== 0) return;
        const { token } = parseCredentials(r.stdout);
        const { pages, records } = await walk(`${base}/Property?$select=ListingKey,PropertyType`, token!);
        const farm = records.filter((x) => x.PropertyType === 'Farm').map((x) => x.ListingKey);
        expect(farm, `the CLI accepted scope "${scope}" and the client sees listings the FEED_SCOPE (${render(FEED)}) excludes (${pages.length} pages)`).to.deep.equal([]);
      });
      it(`a client registered with scope "${scope}": no response shows a listing outside the feed scope`, async function () {
        this.timeout(60_000);
        let client;
        try {
          ({ client } = await server.service.clients.add({ name: 'Escape (registry)', scope }));
        } catch {
          return; // refused at registration: fine
        }
        const token = await server.service.clients.issueToken(client.id, undefined);
        const { records } = await walk(`${base}/Property?$select=ListingKey,PropertyType`, token);
        const farm = [...snap.listings.values()].filter((l) => l.PropertyType === 'Farm').map((l) => l.ListingKey as string);
        expect(records.filter((x) => x.PropertyType === 'Farm').map((x) => x.ListingKey)).to.deep.equal([]);
        for (const key of farm.slice(0, 3)) expect((await call(`${base}/Property('${key}')`, { token })).status, key).not.to.equal(200);
      });
    }
  });

  describe('§3 a listing that leaves the scope stops appearing', function () {
    this.timeout(60_000);
    it('after ingest changes its MlsStatus: gone from queries, counts, expansions, related endpoints and the removed-listings check; 404 by key', async function () {
      this.timeout(120_000);
      const { client } = await server.service.clients.add({ id: 'lic-leaver', name: 'Leaver', scope: "MlsStatus in ('Active','Pending')" });
      const token = await server.service.clients.issueToken(client.id, undefined);
      const inScope = [...snap.listings.values()].filter((l) => ['Active', 'Pending'].includes(l.MlsStatus) && evaluate(FEED, l));
      const candidates = inScope.filter((l) => CHILDREN.every((c) => c.set === 'PropertyUnitTypes' || childrenOf(c, l.ListingKey).length > 0));
      const leaving = (candidates[0] ?? inScope[0]) as Rec;
      const key = leaving.ListingKey as string;
      const removedCheck = async () => (await walk(`${base}/Property?$select=ListingKey`, token)).records.map((r) => r.ListingKey as string);
      const children = async () => {
        const out: string[] = [];
        for (const c of CHILDREN) {
          const r = await call(`${base}/${c.set}${qs({ $filter: `${c.fk} eq '${key}'`, $select: c.key })}`, { token });
          expect(r.status, r.text.slice(0, 200)).to.equal(200);
          out.push(...r.json.value.map((x: Rec) => `${c.set}:${x[c.key]}`));
        }
        return out;
      };

      const before = await removedCheck();
      expect(before.sort()).to.deep.equal(inScope.map((l) => l.ListingKey).sort());
      expect((await call(`${base}/Property('${key}')`, { token })).status).to.equal(200);
      expect(await children()).to.have.length.above(0);
      const countBefore = (await call(`${base}/Property/$count`, { token })).text;

      const report = emptyReport();
      await ingestBatch(server.service, 'Property', [{ line: 1, input: { ...leaving, MlsStatus: 'Closed' } }], report);
      expect(report.updated, JSON.stringify(report)).to.equal(1);

      const after = await removedCheck();
      expect(after, 'the removed-listings check still lists the listing').not.to.include(key);
      expect(after.sort()).to.deep.equal(before.filter((k) => k !== key).sort());
      const gone = await call(`${base}/Property('${key}')`, { token });
      const missing = await call(`${base}/Property('${MISSING_KEY}')`, { token });
      expect(gone.status).to.equal(404);
      expect(normalised404(gone, key)).to.equal(normalised404(missing, MISSING_KEY));
      expect(Number((await call(`${base}/Property/$count`, { token })).text)).to.equal(Number(countBefore) - 1);
      expect(await children(), 'related records of the listing are still served').to.deep.equal([]);
      for (const c of CHILDREN) expect((await call(`${base}/Property('${key}')/${c.nav}`, { token })).status).to.equal(404);
      const expanded = await walk(`${base}/Property?$expand=Media,OpenHouse,historyTransactional,PropertyRooms,PropertyUnits`, token);
      expect(expanded.records.map((r) => r.ListingKey)).not.to.include(key);
      const updates = await walk(`${base}/Property${qs({ $filter: `ModificationTimestamp ge ${leaving.ModificationTimestamp}`, $select: 'ListingKey' })}`, token);
      expect(updates.records.map((r) => r.ListingKey), 'an update query still shows it').not.to.include(key);

      // Clients whose scope still admits it see the change, not a disappearance.
      const open = await call(`${base}/Property('${key}')`, { token: TEST_TOKEN });
      expect(open.status).to.equal(200);
      expect(open.json.MlsStatus).to.equal('Closed');

      // And back: it appears again.
      await ingestBatch(server.service, 'Property', [{ line: 1, input: { ...leaving, MlsStatus: 'Pending' } }], emptyReport());
      expect(await removedCheck()).to.include(key);
      expect((await call(`${base}/Property('${key}')`, { token })).status).to.equal(200);
      expect((await children()).length).to.be.above(0);
    });
  });

  describe('the fields that link related records to their listing cannot be hidden', function () {
    it('`clients add --hide` refuses them (and the key), naming why', async function () {
      this.timeout(60_000);
      for (const field of ['Media.ResourceRecordKey', 'OpenHouse.ListingKey', 'PropertyUnitTypes.ListingKey', 'ListingKey']) {
        const r = await runCli(db.url, ['clients', 'add', '--name', 'x', '--hide', field]);
        expect(r.code, `${field}: ${r.stdout}${r.stderr}`).to.equal(1);
        expect(r.stderr, field).to.match(/cannot be hidden/);
      }
    });
  });
});
