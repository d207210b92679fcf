/**
 * Hidden means hidden through every channel (issue 12): a client from whom fields are hidden must not learn
 * them, or their values, from records that talk about fields: HistoryTransactional rows naming the field
 * they changed (with its previous and new values), Field rows naming fields, Lookup rows of lookups only
 * hidden fields use. Random hidden-field sets (a seeded PRNG, including fields with history and lookup
 * fields) × every resource: its own endpoint with $select, $filter, $orderby and $count, /$count, key
 * fetches and the paths below a record, $expand from Property, navigation paths and their /$count, and error answers, against an oracle computed here from
 * the stored rows. A client with nothing hidden still sees every row, so each check can fail.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { EntitySetSpec } from '../src/model/service-model';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { HttpResult, request, startTestServer } from './support/http';
import { pool } from './support/licence-http';
import { walkPages } from './support/next-links';
import { Prng, readTable, Rec } from './support/licence-oracle';
import { qs } from './support/licensing-suite';

const LISTINGS = 60;
const SEED = 0x5eed12;
const PAGE = 1000;

/** How RESO's rows talk about fields (the oracle's own statement; test/dictionary-policy.test.ts checks the dictionary says the same). */
const NAMES_FIELDS: Record<string, { field: string; resource: string; values: string[] }> = {
  HistoryTransactional: { field: 'FieldName', resource: 'ResourceName', values: ['PreviousValue', 'NewValue'] },
  Field: { field: 'FieldName', resource: 'ResourceName', values: [] },
};
const NAMES_LOOKUPS: Record<string, string> = { Lookup: 'LookupName' };

const setOf = (name: string) => serviceModel.entitySets.find((s) => s.name === name)!;
/** Fields that link a record to its parent, which cannot be hidden. */
const LINKS = new Set(serviceModel.entitySets.flatMap((s) => s.navigations.flatMap((n) => (n.join ? [`${n.target}.${n.join.foreignKey}`] : []))));
const hideable = (set: EntitySetSpec) => set.fields.filter((f) => f.name !== set.key && !LINKS.has(`${set.name}.${f.name}`)).map((f) => f.name);

interface Subject {
  name: string;
  token: string;
  entries: string[];
  hidden: Map<string, Set<string>>;
  hiddenLookups: Set<string>;
}

const hiddenOf = (entries: readonly string[]) => {
  const out = new Map<string, Set<string>>();
  for (const e of entries) {
    const [set, field] = e.includes('.') ? e.split('.', 2) : ['Property', e];
    (out.get(set) ?? out.set(set, new Set()).get(set)!).add(field);
  }
  return out;
};

function lookupsOnlyHiddenUse(hidden: Map<string, Set<string>>): Set<string> {
  const used = (wantHidden: boolean) => new Set(serviceModel.entitySets.flatMap((s) => s.fields
    .filter((f) => f.lookupName && (hidden.get(s.name)?.has(f.name) ?? false) === wantHidden).map((f) => f.lookupName!)));
  const visible = used(false);
  return new Set([...used(true)].filter((l) => !visible.has(l)));
}

/** Stored records by set and key, for the change log's events (filled once the data is seeded). */
const byKey = new Map<string, Map<string, Rec>>();

/**
 * Does a record of `set` talk about something hidden from `s`? An EntityEvent does when the record it names
 * does (this suite's records are only seeded, so each event's record is there, as it was).
 */
function withheld(s: Subject, set: string, r: Rec): boolean {
  if (setOf(set)?.changeLog) {
    const named = byKey.get(r.ResourceName)?.get(r.ResourceRecordKey);
    return !!named && withheld(s, r.ResourceName, named);
  }
  const n = NAMES_FIELDS[set];
  if (n && s.hidden.get((r[n.resource] as string | null) ?? 'Property')?.has(r[n.field])) return true;
  const l = NAMES_LOOKUPS[set];
  return !!l && s.hiddenLookups.has(r[l]);
}

describeEachDatabase('Licensing: hidden fields leak through no channel (history, Field, Lookup, counts, errors)', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  const rows = new Map<string, Rec[]>();
  const subjects: Subject[] = [];

  before(async function () {
    this.timeout(300_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: 200, maxPageSize: PAGE });
    await seedDemoData(server.service, { listings: LISTINGS });
    base = server.url;
    for (const s of serviceModel.entitySets) rows.set(s.name, await readTable(server.service.db, s.table));
    for (const s of serviceModel.entitySets) byKey.set(s.name, new Map(rows.get(s.name)!.map((r) => [String(r[s.key]), r])));

    const history = rows.get('HistoryTransactional')!;
    const historyFields = [...new Set(history.filter((r) => r.ResourceName === 'Property').map((r) => r.FieldName as string))].sort();
    // Lookup fields whose lookup no other field uses: hiding one hides its Lookup rows.
    const lookupUsers = new Map<string, number>();
    for (const s of serviceModel.entitySets) for (const f of s.fields) if (f.lookupName) lookupUsers.set(f.lookupName, (lookupUsers.get(f.lookupName) ?? 0) + 1);
    const soleLookupFields = serviceModel.entitySets.flatMap((s) => hideable(s)
      .filter((f) => lookupUsers.get(s.fieldsByName[f].lookupName ?? '') === 1).map((f) => (s.name === 'Property' ? f : `${s.name}.${f}`)));
    const rng = new Prng(SEED);
    const draws: string[][] = [[], ['ListPrice'], historyFields, ['ListPrice', 'StandardStatus', ...rng.sample(soleLookupFields, 3)]];
    for (let n = 0; n < 4; n++) {
      const set = rng.pick(serviceModel.entitySets.filter((s) => s.name !== 'Property' && hideable(s).length > 0));
      draws.push([
        ...rng.sample(historyFields, rng.int(1, historyFields.length)),
        ...rng.sample(hideable(setOf('Property')), rng.int(1, 6)),
        ...rng.sample(soleLookupFields, rng.int(1, 4)),
        ...rng.sample(hideable(set), rng.int(1, 3)).map((f) => `${set.name}.${f}`),
      ]);
    }
    for (const [n, draw] of draws.entries()) {
      const entries = [...new Set(draw)];
      const { client } = await server.service.clients.add({ id: `channels-${n}`, name: `Channels ${n}`, hiddenFields: entries });
      const hidden = hiddenOf(entries);
      subjects.push({ name: `${client.id} [hidden ${entries.join(',') || '-'}]`, token: await server.service.clients.issueToken(client.id, undefined), entries, hidden, hiddenLookups: lookupsOnlyHiddenUse(hidden) });
    }
    // The draw must cover what the suite claims: history rows about hidden fields, and hidden lookups.
    expect(history.filter((r) => subjects.some((s) => withheld(s, 'HistoryTransactional', r))).length).to.be.at.least(20);
    expect(subjects.filter((s) => s.hiddenLookups.size > 0).length).to.be.at.least(3);
  });
  after(async function () {
    this.timeout(60_000);
    await server?.close();
    await db?.drop();
  });

  /** Runs `check` for every client and fails once with every violation found. */
  async function forEveryClient(check: (s: Subject, rng: Prng, v: string[]) => Promise<void>): Promise<void> {
    const violations: string[] = [];
    await pool(subjects.map((s, i) => async () => {
      const mine: string[] = [];
      await check(s, new Prng(SEED ^ (i * 7919)), mine);
      violations.push(...mine.map((m) => `${s.name}: ${m.slice(0, 400)}`));
    }), 3);
    if (violations.length) expect.fail(`${violations.length} violation(s); the first ones:\n  ${violations.slice(0, 25).join('\n  ')}`);
  }

  const visibleRows = (s: Subject, set: string) => rows.get(set)!.filter((r) => !withheld(s, set, r));

  /** Violations in records of `set` returned to `s`: a hidden field, a record about a hidden field or lookup. */
  function leaks(s: Subject, set: string, records: readonly Rec[], label: string): string[] {
    const out: string[] = [];
    const key = setOf(set).key;
    for (const r of records) {
      for (const f of Object.keys(r)) if (s.hidden.get(set)?.has(f)) out.push(`${label}: ${set} ${r[key]} carries hidden field ${f}`);
      const stored = rows.get(set)!.find((x) => x[key] === r[key]);
      if (stored && withheld(s, set, stored)) out.push(`LEAK ${label}: ${set} ${r[key]} talks about a hidden field or lookup (${JSON.stringify(r).slice(0, 160)})`);
    }
    return out;
  }

  function sameKeys(set: string, got: readonly Rec[], want: readonly Rec[], label: string): string[] {
    const key = setOf(set).key;
    const g = got.map((r) => r[key]).sort();
    const w = want.map((r) => r[key]).sort();
    return JSON.stringify(g) === JSON.stringify(w) ? [] : [`${label}: ${g.length} records, expected ${w.length} (first missing ${w.find((k) => !g.includes(k))}, first extra ${g.find((k) => !w.includes(k))})`];
  }

  async function walkAll(s: Subject, url: string, v: string[], label: string): Promise<{ pages: HttpResult[]; records: Rec[] } | undefined> {
    const r = await walkPages(url, { token: s.token, headers: { Prefer: `odata.maxpagesize=${PAGE}` }, endAtError: true });
    const bad = r.pages.find((p) => p.status !== 200);
    if (bad) { v.push(`${label}: ${bad.status} ${bad.text.slice(0, 200)}`); return undefined; }
    return r;
  }

  describe('every resource: its own endpoint, $count and /$count', () => {
    it('return exactly the records the licence admits (none naming a hidden field or lookup), with matching counts', async function () {
      this.timeout(300_000);
      await forEveryClient(async (s, _rng, v) => {
        for (const set of serviceModel.entitySets) {
          const want = visibleRows(s, set.name);
          const label = `GET ${set.name}?$count=true`;
          const got = await walkAll(s, `${base}/${set.name}?$count=true`, v, label);
          if (!got) continue;
          v.push(...leaks(s, set.name, got.records, label), ...sameKeys(set.name, got.records, want, label));
          if (got.pages[0].json['@odata.count'] !== want.length) v.push(`${label}: @odata.count ${got.pages[0].json['@odata.count']}, expected ${want.length}`);
          const count = await request(`${base}/${set.name}/$count`, { token: s.token });
          if (count.status !== 200 || count.text !== String(want.length)) v.push(`GET ${set.name}/$count: ${count.status} ${count.text.slice(0, 100)}, expected ${want.length}`);
        }
      });
    });

    it('with $select of the naming and value fields, $filter on each filterable field and $orderby descending, still only admitted records', async function () {
      this.timeout(300_000);
      await forEveryClient(async (s, rng, v) => {
        for (const set of serviceModel.entitySets) {
          const all = rows.get(set.name)!;
          const naming = NAMES_FIELDS[set.name];
          const select = [set.key, ...(naming ? [naming.field, naming.resource, ...naming.values] : []), ...(NAMES_LOOKUPS[set.name] ? [NAMES_LOOKUPS[set.name]] : [])]
            .filter((f) => !s.hidden.get(set.name)?.has(f));
          // A stored record about something hidden, when there is one: filtering for its values must not find it.
          const probe = all.find((r) => withheld(s, set.name, r)) ?? rng.pick(all);
          const filterable = set.fields.filter((f) => f.filterable && f.type === 'Edm.String' && !f.collection && !s.hidden.get(set.name)?.has(f.name) && probe[f.name] != null);
          const field = rng.pick(filterable);
          const sortable = rng.pick(set.fields.filter((f) => f.sortable && !s.hidden.get(set.name)?.has(f.name)));
          const filter = field ? `${field.name} eq '${String(probe[field.name]).replace(/'/g, "''")}'` : undefined;
          const params = { $select: select.join(','), $filter: filter, $orderby: `${sortable.name} desc`, $count: 'true' };
          const label = `GET ${set.name}${qs(params)}`;
          const got = await walkAll(s, `${base}/${set.name}${qs(params)}`, v, label);
          if (!got) continue;
          const want = visibleRows(s, set.name).filter((r) => !field || r[field.name] === probe[field.name]);
          v.push(...leaks(s, set.name, got.records, label), ...sameKeys(set.name, got.records, want, label));
          if (got.pages[0].json['@odata.count'] !== want.length) v.push(`${label}: @odata.count ${got.pages[0].json['@odata.count']}, expected ${want.length}`);
        }
      });
    });
  });

  describe('key fetches', () => {
    it('a record about a hidden field or lookup answers 404 exactly as a missing key; an admitted one answers 200', async function () {
      this.timeout(300_000);
      await forEveryClient(async (s, rng, v) => {
        for (const set of serviceModel.entitySets) {
          const all = rows.get(set.name)!;
          const hiddenOnes = rng.sample(all.filter((r) => withheld(s, set.name, r)), 4);
          const shown = rng.sample(all.filter((r) => !withheld(s, set.name, r)), 2);
          for (const r of [...hiddenOnes, ...shown]) {
            const key = String(r[set.key]);
            const quoted = set.fieldsByName[set.key].type === 'Edm.String';
            const url = (k: string) => (quoted ? `${base}/${set.name}('${k.replace(/'/g, "''")}')` : `${base}/${set.name}(${k})`);
            const got = await request(url(key), { token: s.token });
            if (withheld(s, set.name, r)) {
              const none = quoted ? `${key}-none` : `${key}000000`;
              const missing = await request(url(none), { token: s.token });
              if (got.status !== 404 || got.text !== missing.text.split(none).join(key)) v.push(`LEAK GET ${set.name}('${key}'): ${got.status} ${got.text.slice(0, 200)}, expected the 404 of a missing key`);
            } else if (got.status !== 200) v.push(`GET ${set.name}('${key}'): ${got.status}, expected 200`);
            else v.push(...leaks(s, set.name, [got.json], `GET ${set.name}('${key}')`));
            v.push(...await pathsBelow(s, set, r, url));
          }
        }
      });
    });
  });

  /**
   * Paths below a record (its key as a property and its $value, the single-valued navigations from it): a withheld
   * record's answer exactly the 404 of a missing key's; an admitted one's 200 (204 for a navigation to nothing).
   */
  async function pathsBelow(s: Subject, set: EntitySetSpec, r: Rec, url: (k: string) => string): Promise<string[]> {
    const v: string[] = [];
    const key = String(r[set.key]);
    const none = set.fieldsByName[set.key].type === 'Edm.String' ? `${key}-none` : `${key}000000`;
    for (const path of [`/${set.key}`, `/${set.key}/$value`, ...set.navigations.filter((n) => n.navigable).map((n) => `/${n.name}`)]) {
      const got = await request(`${url(key)}${path}`, { token: s.token });
      if (withheld(s, set.name, r)) {
        const missing = await request(`${url(none)}${path}`, { token: s.token });
        if (got.status !== 404 || got.text !== missing.text.split(none).join(key)) v.push(`LEAK GET ${set.name}('${key}')${path}: ${got.status} ${got.text.slice(0, 200)}, expected the 404 of a missing key`);
      } else if (got.status !== 200 && got.status !== 204) v.push(`GET ${set.name}('${key}')${path}: ${got.status}, expected 200 or 204`);
      else if (path === `/${set.key}/$value` && got.text !== key) v.push(`GET ${set.name}('${key}')${path}: ${got.text.slice(0, 100)}`);
    }
    return v;
  }

  describe('Property: $expand and navigation paths', () => {
    it('historyTransactional (and every other navigation) expanded or followed shows only admitted records, with matching counts', async function () {
      this.timeout(300_000);
      await forEveryClient(async (s, rng, v) => {
        const history = rows.get('HistoryTransactional')!;
        const listings = [...new Set(history.filter((r) => withheld(s, 'HistoryTransactional', r)).map((r) => r.ResourceRecordKey as string))];
        const keys = [...rng.sample(listings, 3), ...rng.sample(rows.get('Property')!.map((r) => r.ListingKey as string), 2)];
        for (const nav of setOf('Property').navigations.filter((n) => n.followable)) {
          const child = setOf(nav.target);
          const fk = nav.join!.foreignKey;
          for (const key of keys) {
            const want = visibleRows(s, child.name).filter((r) => r[fk] === key && (!nav.join!.discriminator || (r[nav.join!.discriminator.field] ?? 'Property') === 'Property'));
            const one = await request(`${base}/Property('${key}')${qs({ $expand: nav.name })}`, { token: s.token });
            const label = `GET Property('${key}')?$expand=${nav.name}`;
            if (one.status !== 200) { v.push(`${label}: ${one.status}`); continue; }
            v.push(...leaks(s, child.name, one.json[nav.name], label), ...sameKeys(child.name, one.json[nav.name], want, label));
            const pathLabel = `GET Property('${key}')/${nav.name}?$count=true`;
            const path = await walkAll(s, `${base}/Property('${key}')/${nav.name}?$count=true`, v, pathLabel);
            if (!path) continue;
            v.push(...leaks(s, child.name, path.records, pathLabel), ...sameKeys(child.name, path.records, want, pathLabel));
            if (path.pages[0].json['@odata.count'] !== want.length) v.push(`${pathLabel}: @odata.count ${path.pages[0].json['@odata.count']}, expected ${want.length}`);
            const count = await request(`${base}/Property('${key}')/${nav.name}/$count`, { token: s.token });
            if (count.status !== 200 || count.text !== String(want.length)) v.push(`GET Property('${key}')/${nav.name}/$count: ${count.status} ${count.text.slice(0, 100)}, expected ${want.length}`);
          }
        }
        // A page of listings with their history, as the measured leak was found.
        const params = { $filter: `ListingKey in (${keys.map((k) => `'${k}'`).join(',')})`, $expand: 'historyTransactional($select=HistoryTransactionalKey,FieldName,PreviousValue,NewValue)' };
        const page = await walkAll(s, `${base}/Property${qs(params)}`, v, `GET Property${qs(params)}`);
        for (const l of page?.records ?? []) {
          const want = visibleRows(s, 'HistoryTransactional').filter((r) => r.ResourceRecordKey === l.ListingKey);
          v.push(...leaks(s, 'HistoryTransactional', l.historyTransactional, `$expand of ${l.ListingKey}`), ...sameKeys('HistoryTransactional', l.historyTransactional, want, `$expand of ${l.ListingKey}`));
        }
      });
    });
  });

  describe('error answers', () => {
    it('naming a hidden field answers as an unknown field; lists of usable fields leave hidden ones out; no answer echoes a withheld record', async function () {
      this.timeout(300_000);
      await forEveryClient(async (s, rng, v) => {
        for (const [setName, fields] of s.hidden) {
          const set = setOf(setName);
          for (const h of rng.sample([...fields], 3)) {
            for (const option of ['$select', '$filter', '$orderby'] as const) {
              if (option !== '$select' && set.fieldsByName[h].restricted) continue;
              const q = (n: string) => `${base}/${setName}${qs({ [option]: option === '$filter' ? `${n} eq null` : n })}`;
              const got = await request(q(h), { token: s.token });
              const unknown = await request(q(`${h}Zq`), { token: s.token });
              if (got.status !== 400 || got.text !== unknown.text.split(`${h}Zq`).join(h)) v.push(`GET ${setName} ${option}=${h}: ${got.status} ${got.text.slice(0, 200)}, expected the answer for an unknown field`);
            }
          }
          // FieldNotFilterable / FieldNotSortable list the usable fields: never a hidden one.
          const notFilterable = set.fields.find((f) => !f.filterable && !f.restricted && !f.collection && !fields.has(f.name));
          const notSortable = set.fields.find((f) => !f.sortable && !f.restricted && !f.collection && !fields.has(f.name));
          for (const [option, f] of [['$filter', notFilterable], ['$orderby', notSortable]] as const) {
            if (!f) continue;
            const r = await request(`${base}/${setName}${qs({ [option]: option === '$filter' ? `${f.name} eq null` : f.name })}`, { token: s.token });
            if (r.status !== 501) v.push(`GET ${setName} ${option}=${f.name}: ${r.status}, expected 501`);
            for (const h of fields) if (new RegExp(`\\b${h}\\b`).test(r.text)) v.push(`LEAK GET ${setName} ${option}=${f.name}: the error names hidden field ${h}: ${r.text.slice(0, 200)}`);
          }
        }
        // Filtering for what a withheld history row holds finds nothing and says nothing of it.
        const hiddenRow = rows.get('HistoryTransactional')!.find((r) => withheld(s, 'HistoryTransactional', r));
        if (hiddenRow) {
          const r = await request(`${base}/HistoryTransactional${qs({ $filter: `HistoryTransactionalKey eq '${hiddenRow.HistoryTransactionalKey}'`, $count: 'true' })}`, { token: s.token });
          if (r.status !== 200 || r.json.value.length !== 0 || r.json['@odata.count'] !== 0) v.push(`LEAK: filtering for withheld row ${hiddenRow.HistoryTransactionalKey}: ${r.status} ${r.text.slice(0, 200)}`);
        }
      });
    });
  });

  describe('a client with nothing hidden', () => {
    it('sees every history row (ListPrice changes with their values), every Field row and every Lookup row', async function () {
      this.timeout(120_000);
      const open = subjects.find((s) => s.entries.length === 0)!;
      const v: string[] = [];
      for (const set of ['HistoryTransactional', 'Field', 'Lookup']) {
        const got = await walkAll(open, `${base}/${set}`, v, `GET ${set}`);
        if (got) v.push(...sameKeys(set, got.records, rows.get(set)!, `GET ${set}`));
      }
      const prices = await walkAll(open, `${base}/HistoryTransactional${qs({ $select: 'ResourceRecordKey,FieldName,PreviousValue,NewValue' })}`, v, 'GET HistoryTransactional');
      expect(prices?.records.filter((r) => r.FieldName === 'ListPrice' && r.NewValue).length ?? 0, 'ListPrice history').to.be.greaterThan(0);
      expect(v).to.deep.equal([]);
    });
  });
});
