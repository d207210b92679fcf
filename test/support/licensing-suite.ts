/**
 * The per-client licensing suites' shared setup (test/licensing-*.test.ts): a server under a FEED_SCOPE over
 * seeded listings, ~25 clients with random scopes (OData filters on MlsStatus, PropertyType,
 * ModificationTimestamp and ListingKey, combined with and/or/not/in) and random hidden fields, the data read
 * straight from the tables, and the checks that compare an answer with what the oracle
 * (support/licence-oracle.ts) computes from that data.
 */
import { expect } from 'chai';
import { serviceModel } from '../../generated';
import type { RunningServer } from '../../src/process/server';
import { seedDemoData } from '../../src/demo/demo-data';
import type { DatabaseTarget, TestDatabase } from './databases';
import { HttpResult, startTestServer } from './http';
import { pool } from './licence-http';
import { jsonView, MetadataView, xmlView } from './licence-metadata';
import {
  Child, CHILDREN, childByNav, Domain, domainOf, evaluate, expectedRecord, Expr, HiddenBySet, hiddenBySet, hiddenIn,
  Prng, recordDiff, Rec, render, randomExpr, Snapshot, snapshot,
} from './licence-oracle';


export const LISTINGS = 150;
export const CLIENTS = 25;
export const SEED = 0x1ce5ed;
export const PAGE = 20;
/** The operator's distribution scope for this suite (ANDed with every client's). */
export const FEED: Expr = { k: 'cmp', field: 'PropertyType', op: 'ne', value: 'Farm' };
export const MISSING_KEY = 'L999999';

export const fieldNames = (set: string) => serviceModel.entitySets.find((s) => s.name === set)!.fields.map((f) => f.name);
export const SORTABLE_PROPERTY = ['ListingKey', 'ModificationTimestamp', 'MlsStatus', 'PropertyType'];
export const FILTERABLE_PROPERTY = ['MlsStatus', 'PropertyType', 'ModificationTimestamp', 'PhotosChangeTimestamp', 'DocumentsChangeTimestamp'];

export interface Subject {
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

export function qs(params: Record<string, string | undefined>): string {
  const parts = Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeURIComponent(v!)}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

export const describeSubject = (s: Subject) => {
  const scope = s.scope ? render(s.scope) : '(all)';
  return `${s.id} [scope ${scope.length > 100 ? `${scope.slice(0, 100)}…` : scope}; hidden ${s.hiddenList.join(',') || '-'}]`;
};

/** A 404 body with the key taken out, to compare out-of-scope and missing answers. */
export const normalised404 = (r: HttpResult, key: string) => `${r.status} ${r.headers.get('content-type')} ${r.text.split(key).join('<KEY>')}`;

type Walked = { select?: string[]; orderby?: [string, 'asc' | 'desc']; top?: number; count: boolean; expand: { nav: string; select?: string[] }[] };

/** What the licensing tests use; the fields are set once the suite's `before` hook has run. */
export interface LicensingSuite {
  readonly db: TestDatabase;
  readonly server: RunningServer;
  readonly base: string;
  readonly snap: Snapshot;
  readonly domain: Domain;
  readonly fullXml: MetadataView;
  readonly fullJson: MetadataView;
  readonly subjects: readonly Subject[];
  /** Runs `check` for every client (a few at a time) and fails once with every violation found. */
  forEveryClient(salt: number, check: (s: Subject, rng: Prng, v: string[]) => Promise<void>): Promise<void>;
  childrenOf(c: Child, key: string): Rec[];
  /** Checks one page-walk of Property against the oracle; adds violations to `v`. */
  checkPropertyWalk(s: Subject, label: string, pages: HttpResult[], records: Rec[], expected: Rec[], q: Walked, v: string[]): void;
  checkExpansion(s: Subject, label: string, key: string, e: { nav: string; select?: string[] }, got: unknown): string[];
  usesHidden(s: Subject, set: string, names: Iterable<string>): boolean;
}

/** Registers the suite's hooks (inside a describe block) and returns what its tests use. */
export function licensingSuite(target: DatabaseTarget): LicensingSuite {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  let snap: Snapshot;
  let domain: Domain;
  let fullXml: MetadataView;
  let fullJson: MetadataView;
  const subjects: Subject[] = [];

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

  function checkPropertyWalk(
    s: Subject, label: string, pages: HttpResult[], records: Rec[], expected: Rec[],
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

  return {
    get db() { return db; },
    get server() { return server; },
    get base() { return base; },
    get snap() { return snap; },
    get domain() { return domain; },
    get fullXml() { return fullXml; },
    get fullJson() { return fullJson; },
    subjects,
    forEveryClient,
    childrenOf,
    checkPropertyWalk,
    checkExpansion,
    usesHidden,
  };
}
