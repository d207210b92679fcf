/**
 * Per-client licensing, the hidden fields and the limits of a scope (spec §3 a listing stops appearing in the
 * feed, §4 removed-listings check): hidden fields leave the client's $metadata, are answered wherever a
 * request names them exactly as a field the set does not have (but for the 403 every client gets for filtering
 * or ordering on a restricted field, spec §7), and leak through no nextLink or error message; a client scope narrows the FEED_SCOPE and
 * never widens it; a listing that leaves a client's scope disappears from everything that client is served; the
 * fields that link related records to their listing cannot be hidden. Same clients and oracle as
 * licensing-queries.test.ts (support/licensing-suite.ts).
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import { describeEachDatabase } from './support/databases';
import { HttpResult, request, TEST_TOKEN } from './support/http';
import { parseCredentials, runCli } from './support/licence-http';
import { walkPages } from './support/next-links';
import { jsonView, MetadataView, xmlView } from './support/licence-metadata';
import { CHILDREN, evaluate, hiddenValuesIn, Rec, render } from './support/licence-oracle';
import { FEED, licensingSuite, MISSING_KEY, normalised404, qs } from './support/licensing-suite';

describeEachDatabase('Per-client licensing: hidden fields and the limits of a scope', (target) => {
  const fx = licensingSuite(target);

  describe('hidden fields', function () {
    this.timeout(60_000);
    it("are absent from the client's $metadata (XML and JSON), and nothing else is", async function () {
      this.timeout(120_000);
      await fx.forEveryClient(7, async (s, _rng, v) => {
        for (const [format, parse, full] of [['xml', xmlView, fx.fullXml], ['json', jsonView, fx.fullJson]] as const) {
          const r = await request(`${fx.base}/$metadata?$format=${format}`, { token: s.token });
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

    it('naming a hidden field in $filter (also under not/or, in functions, on /$count), $orderby, $select, or inside $expand(…) answers as an unknown field would; a restricted one in $filter/$orderby → 403 FieldRestricted as for everyone', async function () {
      this.timeout(120_000);
      let checked = 0;
      await fx.forEveryClient(8, async (s, rng, v) => {
        // Each request as a function of the field it names, and whether that name is filtered or ordered on.
        const requests: { set: string; h: string; url: (name: string) => string; filterOrOrder: boolean }[] = [];
        const add = (set: string, h: string, filterOrOrder: boolean, ...urls: ((name: string) => string)[]) => {
          for (const url of urls) requests.push({ set, h, url, filterOrOrder });
        };
        for (const h of s.hidden.get('Property') ?? []) {
          const f = (expr: (n: string) => string) => (n: string) => `${fx.base}/Property${qs({ $filter: expr(n) })}`;
          const key = rng.pick([...s.visible]) ?? MISSING_KEY;
          add('Property', h, true, f((n) => `${n} eq null`), f((n) => `not (${n} ne null)`), f((n) => `ListingKey eq 'x' or ${n} eq null`),
            (n) => `${fx.base}/Property/$count${qs({ $filter: `${n} eq null` })}`,
            (n) => `${fx.base}/Property${qs({ $orderby: n })}`, (n) => `${fx.base}/Property${qs({ $orderby: `ListingKey,${n} desc` })}`);
          add('Property', h, false, (n) => `${fx.base}/Property${qs({ $select: `ListingKey,${n}` })}`, (n) => `${fx.base}/Property('${key}')${qs({ $select: n })}`);
          if (['MlsStatus', 'PropertyType'].includes(h)) add('Property', h, true, f((n) => `startswith(${n},'A')`), f((n) => `${n} in ('Active','Closed')`));
        }
        for (const c of CHILDREN) {
          for (const h of s.hidden.get(c.set) ?? []) {
            const key = rng.pick([...s.visible]) ?? MISSING_KEY;
            add(c.set, h, true,
              (n) => `${fx.base}/Property${qs({ $expand: `${c.nav}($filter=${n} eq null)` })}`,
              (n) => `${fx.base}/Property${qs({ $expand: `${c.nav}($orderby=${n})` })}`,
              (n) => `${fx.base}/${c.set}${qs({ $filter: `${n} eq null` })}`,
              (n) => `${fx.base}/${c.set}${qs({ $orderby: n })}`,
              (n) => `${fx.base}/Property('${key}')/${c.nav}${qs({ $filter: `${n} eq null` })}`);
            add(c.set, h, false,
              (n) => `${fx.base}/Property${qs({ $expand: `${c.nav}($select=${c.key},${n})` })}`,
              (n) => `${fx.base}/${c.set}${qs({ $select: n })}`,
              (n) => `${fx.base}/Property('${key}')/${c.nav}${qs({ $select: n })}`);
          }
        }
        for (const q of requests) {
          checked++;
          const url = q.url(q.h);
          const r = await request(url, { token: s.token });
          const restricted = serviceModel.entitySets.find((x) => x.name === q.set)!.fieldsByName[q.h].restricted;
          if (restricted && q.filterOrOrder) {
            if (r.status !== 403 || r.json?.error?.code !== 'FieldRestricted') v.push(`${url.slice(fx.base.length)}: a restricted field, expected 403 FieldRestricted, got ${r.status} ${r.text.slice(0, 150)}`);
            continue;
          }
          const unknown = `${q.h}Zq`;
          const u = await request(q.url(unknown), { token: s.token });
          if (r.status !== 400 || r.json?.error?.code !== 'FieldNotFound') v.push(`${url.slice(fx.base.length)}: expected 400 FieldNotFound, got ${r.status} ${r.text.slice(0, 150)}`);
          else if (r.text !== u.text.split(unknown).join(q.h) || r.status !== u.status) v.push(`${url.slice(fx.base.length)}: answered otherwise than for the unknown field ${unknown}: ${r.text.slice(0, 150)} / ${u.text.slice(0, 150)}`);
        }
      });
      expect(checked).to.be.at.least(50);
    });

    it('nextLinks carry no value of a hidden field (the $skiptoken of a walk ordered by a hidden field is readable)', async function () {
      this.timeout(120_000);
      let links = 0;
      await fx.forEveryClient(10, async (s, rng, v) => {
        const check = (set: string, key: string, pages: HttpResult[], label: string) => {
          for (const p of pages) {
            const link = p.json?.['@odata.nextLink'];
            if (!link) continue;
            links++;
            const last = p.json.value[p.json.value.length - 1];
            const stored = set === 'Property' ? fx.snap.listings.get(last?.[key]) : fx.snap.children.get(set)!.find((r) => r[key] === last?.[key]);
            for (const leak of hiddenValuesIn(link, stored, s.hidden.get(set))) v.push(`${label}: LEAK of ${set} ${last?.[key]}: ${leak}`);
          }
        };
        if (s.hidden.get('Property')?.size) {
          const w = await walkPages(`${fx.base}/Property?$select=ListingKey`, { token: s.token, headers: { Prefer: 'odata.maxpagesize=10' }, endAtError: true });
          check('Property', 'ListingKey', w.pages, 'removed-listings walk');
        }
        for (const c of CHILDREN) {
          if (!s.hidden.get(c.set)?.size) continue;
          const parents = [...s.visible].filter((k) => fx.childrenOf(c, k).length >= 3);
          for (const key of rng.sample(parents, 2)) {
            const w = await walkPages(`${fx.base}/Property('${key}')/${c.nav}`, { token: s.token, headers: { Prefer: 'odata.maxpagesize=2' }, endAtError: true });
            check(c.set, c.key, w.pages, `Property('${key}')/${c.nav}`);
            const own = await walkPages(`${fx.base}/${c.set}${qs({ $filter: `${c.fk} eq '${key}'` })}`, { token: s.token, headers: { Prefer: 'odata.maxpagesize=2' }, endAtError: true });
            check(c.set, c.key, own.pages, `${c.set}?$filter=${c.fk} eq '${key}'`);
          }
        }
      });
      expect(links).to.be.at.least(20);
    });

    it('error messages do not name hidden fields the request did not name (e.g. lists of filterable or sortable fields)', async function () {
      this.timeout(120_000);
      await fx.forEveryClient(9, async (s, _rng, v) => {
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
          const r = await request(`${fx.base}/${set}?${query}`, { token: s.token });
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
        const r = await runCli(fx.db.url, ['clients', 'add', '--name', 'Escape', '--static-token', '--scope', scope]);
        if (r.code !== 0) return;
        const { token } = parseCredentials(r.stdout);
        const { pages, records } = await walkPages(`${fx.base}/Property?$select=ListingKey,PropertyType`, { token: token!, endAtError: true });
        const farm = records.filter((x) => x.PropertyType === 'Farm').map((x) => x.ListingKey);
        expect(farm, `the CLI accepted scope "${scope}" and the client sees listings the FEED_SCOPE (${render(FEED)}) excludes (${pages.length} pages)`).to.deep.equal([]);
      });
      it(`a client registered with scope "${scope}": no response shows a listing outside the feed scope`, async function () {
        this.timeout(60_000);
        let client;
        try {
          ({ client } = await fx.server.service.clients.add({ name: 'Escape (registry)', scope }));
        } catch {
          return; // refused at registration: fine
        }
        const token = await fx.server.service.clients.issueToken(client.id, undefined);
        const { records } = await walkPages(`${fx.base}/Property?$select=ListingKey,PropertyType`, { token, endAtError: true });
        const farm = [...fx.snap.listings.values()].filter((l) => l.PropertyType === 'Farm').map((l) => l.ListingKey as string);
        expect(records.filter((x) => x.PropertyType === 'Farm').map((x) => x.ListingKey)).to.deep.equal([]);
        for (const key of farm.slice(0, 3)) expect((await request(`${fx.base}/Property('${key}')`, { token })).status, key).not.to.equal(200);
      });
    }
  });

  describe('§3 a listing that leaves the scope stops appearing', function () {
    this.timeout(60_000);
    it('after ingest changes its MlsStatus: gone from queries, counts, expansions, related endpoints and the removed-listings check; 404 by key', async function () {
      this.timeout(120_000);
      const { client } = await fx.server.service.clients.add({ id: 'lic-leaver', name: 'Leaver', scope: "MlsStatus in ('Active','Pending')" });
      const token = await fx.server.service.clients.issueToken(client.id, undefined);
      const inScope = [...fx.snap.listings.values()].filter((l) => ['Active', 'Pending'].includes(l.MlsStatus) && evaluate(FEED, l));
      const candidates = inScope.filter((l) => CHILDREN.every((c) => c.set === 'PropertyUnitTypes' || fx.childrenOf(c, l.ListingKey).length > 0));
      const leaving = (candidates[0] ?? inScope[0]) as Rec;
      const key = leaving.ListingKey as string;
      const removedCheck = async () => (await walkPages(`${fx.base}/Property?$select=ListingKey`, { token, endAtError: true })).records.map((r) => r.ListingKey as string);
      const children = async () => {
        const out: string[] = [];
        for (const c of CHILDREN) {
          const r = await request(`${fx.base}/${c.set}${qs({ $filter: `${c.fk} eq '${key}'`, $select: c.key })}`, { token });
          expect(r.status, r.text.slice(0, 200)).to.equal(200);
          out.push(...r.json.value.map((x: Rec) => `${c.set}:${x[c.key]}`));
        }
        return out;
      };

      const before = await removedCheck();
      expect(before.sort()).to.deep.equal(inScope.map((l) => l.ListingKey).sort());
      expect((await request(`${fx.base}/Property('${key}')`, { token })).status).to.equal(200);
      expect(await children()).to.have.length.above(0);
      const countBefore = (await request(`${fx.base}/Property/$count`, { token })).text;

      const report = emptyReport();
      await ingestBatch(fx.server.service, 'Property', [{ line: 1, input: { ...leaving, MlsStatus: 'Closed' } }], report);
      expect(report.updated, JSON.stringify(report)).to.equal(1);

      const after = await removedCheck();
      expect(after, 'the removed-listings check still lists the listing').not.to.include(key);
      expect(after.sort()).to.deep.equal(before.filter((k) => k !== key).sort());
      const gone = await request(`${fx.base}/Property('${key}')`, { token });
      const missing = await request(`${fx.base}/Property('${MISSING_KEY}')`, { token });
      expect(gone.status).to.equal(404);
      expect(normalised404(gone, key)).to.equal(normalised404(missing, MISSING_KEY));
      expect(Number((await request(`${fx.base}/Property/$count`, { token })).text)).to.equal(Number(countBefore) - 1);
      expect(await children(), 'related records of the listing are still served').to.deep.equal([]);
      for (const c of CHILDREN) expect((await request(`${fx.base}/Property('${key}')/${c.nav}`, { token })).status).to.equal(404);
      const expanded = await walkPages(`${fx.base}/Property?$expand=Media,OpenHouse,historyTransactional,PropertyRooms,PropertyUnits`, { token, endAtError: true });
      expect(expanded.records.map((r) => r.ListingKey)).not.to.include(key);
      const updates = await walkPages(`${fx.base}/Property${qs({ $filter: `ModificationTimestamp ge ${leaving.ModificationTimestamp}`, $select: 'ListingKey' })}`, { token, endAtError: true });
      expect(updates.records.map((r) => r.ListingKey), 'an update query still shows it').not.to.include(key);

      // Clients whose scope still admits it see the change, not a disappearance.
      const open = await request(`${fx.base}/Property('${key}')`, { token: TEST_TOKEN });
      expect(open.status).to.equal(200);
      expect(open.json.MlsStatus).to.equal('Closed');

      // And back: it appears again.
      await ingestBatch(fx.server.service, 'Property', [{ line: 1, input: { ...leaving, MlsStatus: 'Pending' } }], emptyReport());
      expect(await removedCheck()).to.include(key);
      expect((await request(`${fx.base}/Property('${key}')`, { token })).status).to.equal(200);
      expect((await children()).length).to.be.above(0);
    });
  });

  describe('the fields that link related records to their listing cannot be hidden', function () {
    it('`clients add --hide` refuses them (and the key), naming why', async function () {
      this.timeout(60_000);
      for (const field of ['Media.ResourceRecordKey', 'OpenHouse.ListingKey', 'PropertyUnitTypes.ListingKey', 'ListingKey']) {
        const r = await runCli(fx.db.url, ['clients', 'add', '--name', 'x', '--hide', field]);
        expect(r.code, `${field} (refused input: exit code 2): ${r.stdout}${r.stderr}`).to.equal(2);
        expect(r.stderr, field).to.match(/cannot be hidden/);
      }
    });
  });
});
