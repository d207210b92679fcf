/**
 * Per-client licensing, property-based (spec §2 related resources, §4 queries, paging and expansion rules):
 * ~25 clients with random scopes within the operator's FEED_SCOPE and random hidden fields (set up by
 * support/licensing-suite.ts) run random requests of every kind — collections with filters, $select, $orderby,
 * $top, $count and nextLink walks; key fetches in and out of scope; $expand of all five navigations; navigation
 * paths; the related resources' own endpoints. Every answer is checked against an independent computation: the
 * data read straight from the tables and the scope evaluated by a hand-written predicate (support/licence-oracle.ts).
 * Hidden fields, scope narrowing and a listing leaving the scope: licensing-hidden-fields.test.ts.
 */
import { expect } from 'chai';
import { describeEachDatabase } from './support/databases';
import { request } from './support/http';
import { walkPages } from './support/next-links';
import {
  CHILDREN, childByNav, evaluate, expectedRecord, Expr, fieldsOf, hiddenIn, recordDiff, Rec, render, randomExpr,
} from './support/licence-oracle';
import {
  fieldNames, licensingSuite, MISSING_KEY, normalised404, PAGE, qs, SORTABLE_PROPERTY,
} from './support/licensing-suite';

describeEachDatabase('Per-client licensing: what each client is served, property-based, no leak', (target) => {
  const fx = licensingSuite(target);

  describe('collections: random $filter, $select, $orderby, $top, $count, $expand, walked to the end', function () {
    this.timeout(60_000);
    it('return exactly the in-scope listings that match (never one outside), with hidden fields removed; a hidden field named → 400 FieldNotFound, as an unknown one', async function () {
      this.timeout(300_000);
      let walks = 0;
      let forbidden = 0;
      await fx.forEveryClient(1, async (s, rng, v) => {
        for (let i = 0; i < 7; i++) {
          const filter = rng.chance(0.6) ? randomExpr(rng, fx.domain, 2) : undefined;
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
          const url = `${fx.base}/Property${qs(params)}`;
          const label = `GET Property${qs(params)}`;
          const hiddenUsed = (filter && fx.usesHidden(s, 'Property', fieldsOf(filter)))
            || (select && !select.includes('*') && fx.usesHidden(s, 'Property', select))
            || (orderby && fx.usesHidden(s, 'Property', [orderby[0]]))
            || expand.some((e) => e.select && fx.usesHidden(s, childByNav(e.nav).set, e.select));
          const maxpagesize = rng.pick([7, PAGE, 50]);
          const { pages, records } = await walkPages(url, { token: s.token, headers: { Prefer: `odata.maxpagesize=${maxpagesize}` }, endAtError: true });
          if (hiddenUsed) {
            forbidden++;
            if (pages[0].status !== 400 || pages[0].json?.error?.code !== 'FieldNotFound') {
              v.push(`${label}: names a hidden field, expected 400 FieldNotFound (as for an unknown field), got ${pages[0].status} ${pages[0].text.slice(0, 150)}`);
            }
            continue;
          }
          walks++;
          const expected = [...fx.snap.listings.values()].filter((l) => s.visible.has(l.ListingKey) && (!filter || evaluate(filter, l)));
          fx.checkPropertyWalk(s, label, pages, records, expected, { select, orderby, top, count, expand }, v);
        }
      });
      expect(walks, 'walks checked').to.be.at.least(100);
      expect(forbidden, 'requests naming a hidden field').to.be.at.least(10);
    });

    it('the removed-listings check ($select=ListingKey, following nextLink) lists exactly the in-scope listings; /$count agrees', async function () {
      this.timeout(120_000);
      await fx.forEveryClient(2, async (s, _rng, v) => {
        const { pages, records } = await walkPages(`${fx.base}/Property?$select=ListingKey`, { token: s.token, endAtError: true });
        fx.checkPropertyWalk(s, 'removed-listings walk', pages, records, [...fx.snap.listings.values()].filter((l) => s.visible.has(l.ListingKey)),
          { select: ['ListingKey'], count: false, expand: [] }, v);
        const c = await request(`${fx.base}/Property/$count`, { token: s.token });
        if (c.status !== 200 || c.text !== String(s.visible.size)) v.push(`/Property/$count: ${c.status} ${c.text.slice(0, 100)}, expected ${s.visible.size}`);
        const f = await request(`${fx.base}/Property?$count=true&$top=0`, { token: s.token });
        if (f.json?.['@odata.count'] !== s.visible.size) v.push(`$count=true&$top=0: ${f.json?.['@odata.count']}, expected ${s.visible.size}`);
      });
    });
  });

  describe('fetch by key', function () {
    this.timeout(60_000);
    it('an in-scope listing: 200 with hidden fields removed; an out-of-scope one: 404 exactly like a missing key, with any options', async function () {
      this.timeout(120_000);
      await fx.forEveryClient(3, async (s, rng, v) => {
        const missing = await request(`${fx.base}/Property('${MISSING_KEY}')`, { token: s.token });
        if (missing.status !== 404) v.push(`missing key: ${missing.status}`);
        const shape = normalised404(missing, MISSING_KEY);
        const variants = ['', '?$select=ListingKey', '?$expand=Media,OpenHouse,historyTransactional,PropertyRooms,PropertyUnits', '?$select=ListingKey&$expand=PropertyRooms'];
        for (const key of rng.sample([...s.visible], 6)) {
          const variant = rng.pick(variants);
          const r = await request(`${fx.base}/Property('${key}')${variant}`, { token: s.token });
          if (r.status !== 200) { v.push(`in-scope ${key}${variant}: ${r.status} ${r.text.slice(0, 150)}`); continue; }
          v.push(...hiddenIn('Property', r.json, s.hidden, `Property('${key}')${variant}`));
          const expand = variant.includes('$expand') ? variant.split('$expand=')[1].split(',').map((nav) => ({ nav })) : [];
          const own = Object.fromEntries(Object.entries(r.json).filter(([k]) => !k.startsWith('@') && !expand.some((e) => e.nav === k)));
          const diff = recordDiff(own, expectedRecord(fx.snap.listings.get(key)!, s.hidden.get('Property'), variant.startsWith('?$select') ? ['ListingKey'] : undefined));
          if (diff) v.push(`in-scope ${key}${variant}: ${diff}`);
          for (const e of expand) v.push(...fx.checkExpansion(s, `Property('${key}')${variant}`, key, e, r.json[e.nav]));
        }
        // Out of scope: the client's own scope, and the feed scope (a Farm listing).
        const farm = s.outside.filter((k) => fx.snap.listings.get(k)!.PropertyType === 'Farm');
        const outKeys = [...new Set([...rng.sample(s.outside, 6), ...rng.sample(farm, 1)])];
        for (const key of outKeys) {
          for (const variant of ['', ...rng.sample(variants.slice(1), 2)]) {
            const r = await request(`${fx.base}/Property('${key}')${variant}`, { token: s.token });
            const m = await request(`${fx.base}/Property('${MISSING_KEY}')${variant}`, { token: s.token });
            if (r.status !== 404) v.push(`LEAK: out-of-scope Property('${key}')${variant}: ${r.status} ${r.text.slice(0, 150)}`);
            else if (normalised404(r, key) !== normalised404(m, MISSING_KEY)) {
              v.push(`out-of-scope Property('${key}')${variant} answers differently from a missing key: ${r.text.slice(0, 200)} vs ${m.text.slice(0, 200)}`);
            }
          }
          const named = await request(`${fx.base}/Property(ListingKey='${key}')`, { token: s.token });
          const namedMissing = await request(`${fx.base}/Property(ListingKey='${MISSING_KEY}')`, { token: s.token });
          if (named.status !== 404) v.push(`LEAK: out-of-scope Property(ListingKey='${key}'): ${named.status}`);
          else if (normalised404(named, key) !== normalised404(namedMissing, MISSING_KEY)) v.push(`Property(ListingKey='${key}') differs from a missing key`);
          const q = await request(`${fx.base}/Property${qs({ $filter: `ListingKey eq '${key}'`, $count: 'true' })}`, { token: s.token });
          if (q.status !== 200 || q.json.value.length !== 0 || q.json['@odata.count'] !== 0) v.push(`LEAK: $filter=ListingKey eq '${key}' (out of scope): ${q.text.slice(0, 150)}`);
          const c = await request(`${fx.base}/Property/$count${qs({ $filter: `ListingKey eq '${key}'` })}`, { token: s.token });
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
      await fx.forEveryClient(4, async (s, rng, v) => {
        for (const key of rng.sample([...s.visible], 2)) {
          for (const c of CHILDREN) {
            const { pages, records } = await walkPages(`${fx.base}/Property('${key}')/${c.nav}`, { token: s.token, headers: { Prefer: 'odata.maxpagesize=4' }, endAtError: true });
            const bad = pages.find((p) => p.status !== 200);
            if (bad) { v.push(`Property('${key}')/${c.nav}: ${bad.status} ${bad.text.slice(0, 150)}`); continue; }
            for (const r of records) v.push(...hiddenIn(c.set, r, s.hidden, `Property('${key}')/${c.nav}`));
            v.push(...fx.checkExpansion(s, `Property('${key}')/${c.nav}`, key, { nav: c.nav }, records));
          }
        }
        for (const key of rng.sample(s.outside, 3)) {
          for (const c of rng.sample(CHILDREN, 2)) {
            const r = await request(`${fx.base}/Property('${key}')/${c.nav}`, { token: s.token });
            const m = await request(`${fx.base}/Property('${MISSING_KEY}')/${c.nav}`, { token: s.token });
            if (r.status !== 404) v.push(`LEAK: Property('${key}')/${c.nav} (out of scope): ${r.status} ${r.text.slice(0, 150)}`);
            else if (normalised404(r, key) !== normalised404(m, MISSING_KEY)) v.push(`Property('${key}')/${c.nav} differs from a missing key: ${r.text.slice(0, 200)}`);
          }
        }
      });
    });

    it('$expand of all five navigations on every page: no out-of-scope parent, every related record of each parent, no hidden field', async function () {
      this.timeout(120_000);
      await fx.forEveryClient(5, async (s, rng, v) => {
        const expand = CHILDREN.map((c) => ({ nav: c.nav }));
        const filter = rng.chance(0.5) ? randomExpr(rng, fx.domain, 1) : undefined;
        if (filter && fx.usesHidden(s, 'Property', fieldsOf(filter))) return;
        const url = `${fx.base}/Property${qs({ $expand: expand.map((e) => e.nav).join(','), $filter: filter && render(filter) })}`;
        const { pages, records } = await walkPages(url, { token: s.token, headers: { Prefer: 'odata.maxpagesize=30' }, endAtError: true });
        const expected = [...fx.snap.listings.values()].filter((l) => s.visible.has(l.ListingKey) && (!filter || evaluate(filter, l)));
        fx.checkPropertyWalk(s, `GET Property${qs({ $expand: 'all five', $filter: filter && render(filter) })}`, pages, records, expected, { count: false, expand }, v);
      });
    });
  });

  describe("the related resources' own endpoints", function () {
    this.timeout(60_000);
    it('/Media, /OpenHouse(s), /HistoryTransactional, /PropertyRooms, /PropertyUnitTypes: never a record of an out-of-scope listing; exactly the rest', async function () {
      this.timeout(300_000);
      await fx.forEveryClient(6, async (s, rng, v) => {
        const outside = new Set(s.outside);
        for (const c of CHILDREN) {
          const records = fx.snap.children.get(c.set)!;
          const visibleChild = (r: Rec) => r[c.fk] === undefined || r[c.fk] === null || !outside.has(r[c.fk]);
          const filters: (Expr | undefined)[] = [
            { k: 'in', field: c.fk, values: [...rng.sample(s.outside, 4), ...rng.sample([...s.visible], 3)] },
            { k: 'cmp', field: c.fk, op: 'eq', value: rng.pick(s.outside) ?? MISSING_KEY },
            { k: 'cmp', field: 'ModificationTimestamp', op: rng.pick(['gt', 'le'] as const), value: records[rng.int(0, records.length - 1)].ModificationTimestamp, style: rng.int(0, 3) },
          ];
          // Whole walks of the large sets for some clients only (Media has thousands of records).
          if (c.set !== 'Media' || s.n % 5 === 0) filters.push(undefined);
          for (const filter of filters) {
            const hideUsed = filter && fx.usesHidden(s, c.set, fieldsOf(filter));
            const path = c.set === 'OpenHouse' && rng.chance(0.5) ? 'OpenHouses' : c.set;
            const count = rng.chance(0.5);
            const url = `${fx.base}/${path}${qs({ $filter: filter && render(filter), $count: count ? 'true' : undefined })}`;
            const label = `GET ${path}${qs({ $filter: filter && render(filter) })}`;
            const { pages, records: got } = await walkPages(url, { token: s.token, headers: { Prefer: `odata.maxpagesize=${rng.pick([25, 200, 1000])}` }, endAtError: true });
            if (hideUsed) {
              if (pages[0].status !== 400 || pages[0].json?.error?.code !== 'FieldNotFound') v.push(`${label}: names hidden ${c.set} field, expected 400 FieldNotFound, got ${pages[0].status}`);
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
          const n = await request(`${fx.base}/${c.set}/$count`, { token: s.token });
          const want = records.filter(visibleChild).length;
          if (n.text !== String(want)) v.push(`/${c.set}/$count: ${n.text.slice(0, 100)}, expected ${want}`);
          // Fetch by key: a record of an out-of-scope listing is missing; one of an in-scope listing is there.
          const outRecord = rng.pick(records.filter((r) => outside.has(r[c.fk])));
          if (outRecord) {
            const r = await request(`${fx.base}/${c.set}('${outRecord[c.key]}')`, { token: s.token });
            const m = await request(`${fx.base}/${c.set}('NO-SUCH-${c.set}')`, { token: s.token });
            if (r.status !== 404) v.push(`LEAK: ${c.set}('${outRecord[c.key]}') of out-of-scope ${outRecord[c.fk]}: ${r.status}`);
            else if (normalised404(r, outRecord[c.key]) !== normalised404(m, `NO-SUCH-${c.set}`)) v.push(`${c.set}('${outRecord[c.key]}') (out of scope) differs from a missing key`);
          }
          const inRecord = rng.pick(records.filter((r) => s.visible.has(r[c.fk])));
          if (inRecord) {
            const r = await request(`${fx.base}/${c.set}('${inRecord[c.key]}')`, { token: s.token });
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
          const { pages, records } = await walkPages(`${fx.base}/${set}`, { token: s.token, headers: { Prefer: 'odata.maxpagesize=1000' }, endAtError: true });
          if (pages.some((p) => p.status !== 200)) { v.push(`/${set}: ${pages.map((p) => p.status)}`); continue; }
          if (records.length !== fx.snap.others.get(set)!.length) v.push(`/${set}: ${records.length} records, expected ${fx.snap.others.get(set)!.length}`);
          for (const r of records) v.push(...hiddenIn(set, r, s.hidden, `/${set}`));
        }
      });
    });
  });
});
