/**
 * Scripted request mixes for the metering tests. Each scripted request carries the status it must get and
 * the transactions it costs by the spec's rules (§1, §4 "Expansion rules for Property", §8), written out here:
 * a fetch by key is one A; a query page, a navigation path page and /$count are one B each; expanding Media,
 * OpenHouse or historyTransactional adds one B each, PropertyRooms and PropertyUnits nothing; an error costs
 * nothing. A walk follows nextLink, and every page it fetches is costed like the first.
 */
import { request } from './http';
import { pool } from './licence-http';
import { CHILDREN, Prng, Rec } from './licence-oracle';

export interface Charge {
  A: number;
  B: number;
}

export interface Scripted {
  client: number;
  kind: string;
  url: string;
  expect: number;
  /** Cost of one response (of each page, for a walk). */
  charge: Charge;
  /** Follow nextLink: all pages (Infinity) or at most this many. */
  pages?: number;
  prefer?: number;
}

export interface Sent {
  client: number;
  kind: string;
  url: string;
  status: number;
  expect: number;
  charge: Charge;
}

export interface ScriptData {
  listingKeys: string[];
  children: Map<string, Rec[]>;
  members: string[];
  /** Listings each client may see (undefined: all); a key fetch or navigation path outside it is a 404. */
  visible?: readonly (ReadonlySet<string> | undefined)[];
}

const enc = encodeURIComponent;
const charged = (navs: readonly string[]) => navs.filter((n) => CHILDREN.find((c) => c.nav === n)!.charged).length;

/** Requests that fail (4xx), none of which is charged. */
function errorRequest(rng: Prng, d: ScriptData): [string, number] {
  const k = rng.pick(d.listingKeys);
  const cases: [string, number][] = [
    [`Property?$filter=${enc('MlsStatus eq')}`, 400],
    ['Property?$expand=Photos', 400],
    [`Property('${k}')?$top=1`, 400],
    ['Property?$skiptoken=bogus', 400],
    ['Property?$count=maybe', 400],
    [`Media?$filter=${enc("ResourceRecordKey eq 'x' and")}`, 400],
    [`Property?$filter=${enc("OwnerName eq 'x'")}`, 403],
    ['Property?$orderby=PrivateRemarks', 403],
    [`Property/$count?$filter=${enc("ShowingInstructions eq 'x'")}`, 403],
    ["Property('NO-SUCH-LISTING')", 404],
    ["Property('NO-SUCH-LISTING')/Media", 404],
    ["Property('NO-SUCH-LISTING')?$expand=Media,OpenHouse", 404],
    ["Media('NO-SUCH-MEDIA')", 404],
    ['NoSuchSet', 404],
    ['Property?$skip=5', 501],
    [`Property?$filter=${enc('BedroomsTotal eq 3')}`, 501],
    ['Property?$expand=*', 501],
    [`Property('${k}')?$expand=Media($expand=Listing)`, 501],
    [`Property?$orderby=${enc('BedroomsTotal desc')}&$expand=Media`, 501],
  ];
  return rng.pick(cases);
}

function randomNavs(rng: Prng): string[] {
  return rng.sample(CHILDREN.map((c) => c.nav), rng.int(1, 4));
}

function expandText(rng: Prng, navs: readonly string[]): string {
  return navs.map((n) => (rng.chance(0.25) ? `${n}($top=2)` : n)).join(',');
}

/** `n` scripted requests (a walk counts once here) for `clients` clients. */
export function script(rng: Prng, d: ScriptData, clients: number, n: number): Scripted[] {
  const out: Scripted[] = [];
  const filters = [
    undefined,
    "MlsStatus eq 'Active'",
    "MlsStatus in ('Active','Pending','Closed')",
    "PropertyType ne 'Residential'",
    'ModificationTimestamp gt 2025-06-01T00:00:00Z',
    "ListingKey lt 'L000020'",
  ];
  for (let i = 0; i < n; i++) {
    const client = rng.int(0, clients - 1);
    const r = rng.next();
    const key = rng.pick(d.listingKeys);
    const sees = (k: string) => d.visible?.[client]?.has(k) ?? true;
    const status = (k: string) => (sees(k) ? 200 : 404);
    const kind = (k: string, name: string) => (sees(k) ? name : `${name} (out of scope)`);
    if (r < 0.2) {
      const variant = rng.int(0, 2);
      if (variant === 0) out.push({ client, kind: kind(key, 'key'), url: `Property('${key}')`, expect: status(key), charge: { A: 1, B: 0 } });
      else if (variant === 1) out.push({ client, kind: kind(key, 'key'), url: `Property('${key}')?$select=ListingKey,MlsStatus`, expect: status(key), charge: { A: 1, B: 0 } });
      else {
        const navs = randomNavs(rng);
        out.push({ client, kind: kind(key, 'key+expand'), url: `Property('${key}')?$expand=${expandText(rng, navs)}`, expect: status(key), charge: { A: 1, B: charged(navs) } });
      }
    } else if (r < 0.28) {
      const c = rng.pick(CHILDREN);
      const rec = rng.pick(d.children.get(c.set)!);
      if (rng.chance(0.15)) out.push({ client, kind: 'key', url: `Members('${rng.pick(d.members)}')`, expect: 200, charge: { A: 1, B: 0 } });
      else out.push({ client, kind: kind(rec[c.fk], 'key'), url: `${c.set}('${enc(rec[c.key])}')`, expect: status(rec[c.fk]), charge: { A: 1, B: 0 } });
    } else if (r < 0.48) {
      const filter = rng.pick(filters);
      const navs = rng.chance(0.5) ? randomNavs(rng) : [];
      const params = [
        filter && `$filter=${enc(filter)}`,
        rng.chance(0.3) && '$select=ListingKey,ModificationTimestamp',
        rng.chance(0.3) && '$count=true',
        rng.chance(0.3) && `$top=${rng.int(1, 30)}`,
        rng.chance(0.2) && `$orderby=${enc('ListingKey desc')}`,
        navs.length && `$expand=${enc(expandText(rng, navs))}`,
      ].filter(Boolean);
      out.push({ client, kind: navs.length ? 'query+expand' : 'query', url: `Property${params.length ? `?${params.join('&')}` : ''}`, expect: 200, charge: { A: 0, B: 1 + charged(navs) } });
    } else if (r < 0.6) {
      const navs = rng.chance(0.5) ? randomNavs(rng) : [];
      const filter = rng.pick(filters);
      const params = [filter && `$filter=${enc(filter)}`, navs.length && `$expand=${enc(navs.join(','))}`, rng.chance(0.3) && '$count=true'].filter(Boolean);
      out.push({
        client, kind: 'walk', url: `Property${params.length ? `?${params.join('&')}` : ''}`, expect: 200, charge: { A: 0, B: 1 + charged(navs) },
        pages: rng.chance(0.5) ? Infinity : rng.int(1, 3), prefer: rng.int(4, 12),
      });
    } else if (r < 0.68) {
      const set = rng.pick(['Property', 'Media', 'OpenHouse', 'HistoryTransactional', 'PropertyRooms', 'Member']);
      const filter = set === 'Property' && rng.chance(0.5) ? `?$filter=${enc(rng.pick(filters.slice(1))!)}` : '';
      out.push({ client, kind: 'count', url: `${set}/$count${filter}`, expect: 200, charge: { A: 0, B: 1 } });
    } else if (r < 0.78) {
      const c = rng.pick(CHILDREN);
      out.push({ client, kind: kind(key, 'nav'), url: `Property('${key}')/${c.nav}`, expect: status(key), charge: { A: 0, B: 1 }, pages: rng.chance(0.5) ? Infinity : 1, prefer: rng.int(2, 6) });
    } else if (r < 0.86) {
      const c = rng.pick(CHILDREN);
      const keys = rng.sample(d.listingKeys, rng.int(1, 4)).map((k) => `'${k}'`).join(',');
      out.push({
        client, kind: 'related', url: `${c.set}?$filter=${enc(`${c.fk} in (${keys})`)}${rng.chance(0.3) ? '&$count=true' : ''}`, expect: 200, charge: { A: 0, B: 1 },
        pages: rng.chance(0.5) ? Infinity : 2, prefer: rng.int(3, 10),
      });
    } else {
      const [url, status] = errorRequest(rng, d);
      out.push({ client, kind: `error ${status}`, url, expect: status, charge: { A: 0, B: 0 } });
    }
  }
  return out;
}

/**
 * Sends the scripted requests, `concurrency` in flight, each with its client's token to one of `roots`
 * (a walk may continue on another root: nextLinks are stateless). Returns every response.
 */
export async function run(items: readonly Scripted[], tokens: readonly string[], roots: readonly string[], concurrency: number, rng: Prng): Promise<Sent[]> {
  const sent: Sent[] = [];
  const plan = items.map((s) => ({ s, root: rng.pick(roots), hop: rng.pick(roots) }));
  await pool(plan.map(({ s, root, hop }) => async () => {
    const headers: Record<string, string> = s.prefer ? { Prefer: `odata.maxpagesize=${s.prefer}` } : {};
    let url: string | undefined = `${root}/${s.url}`;
    for (let page = 0; url && page < (s.pages ?? 1); page++) {
      const r = await request(url, { token: tokens[s.client], headers });
      sent.push({ client: s.client, kind: s.kind, url: url.slice(url.indexOf('/odata/') + 6), status: r.status, expect: s.expect, charge: s.charge });
      const next: string | undefined = r.status === 200 ? r.json?.['@odata.nextLink'] : undefined;
      url = next && roots.length > 1 ? `${hop}${next.slice(next.indexOf('/odata') + 6)}` : next;
    }
  }), concurrency);
  return sent;
}

/**
 * Expected transactions per client, by the script's rules, for what was answered as scripted: a scripted
 * error costs nothing, and neither does a request that failed unexpectedly (reported separately), so one
 * failure does not make every later count wrong.
 */
export function expectedUsage(sent: readonly Sent[], clients: number): Charge[] {
  const out = Array.from({ length: clients }, () => ({ A: 0, B: 0 }));
  for (const s of sent) {
    if (s.expect >= 400 || s.status !== s.expect) continue;
    out[s.client].A += s.charge.A;
    out[s.client].B += s.charge.B;
  }
  return out;
}
