/**
 * Reconciliation by the upstream's digest (docs/replication.md, "Digest"), when the upstream declares one and the
 * set has no upstream filter (a digest counts the whole set the licence sees): the keys and upstream timestamps this
 * upstream wrote (its provenance) are compared range by range with the upstream's counts and hashes, descending only
 * into ranges that differ, and a differing range of few records is fetched by `<key> ge From and <key> lt To`. What
 * it finds: keys gone upstream, and records whose upstream timestamp moved or that this copy lacks.
 */
import { RangeHash, recordHash } from '../foundation/replica-hash';
import { allOf, collectionUrl, PullContext, SetPull } from './pull-context';
import type { Differences, Reconciler } from './reconcile';

type Key = string | number;

interface Mine {
  readonly key: Key;
  /** As the provenance keeps it: the key's JSON. */
  readonly json: string;
  readonly timestamp: string | null;
}

interface Range {
  readonly From: Key | null;
  readonly To: Key | null;
  readonly Count: number;
  readonly Hash: string;
}

const PARTS = 16;
/** A differing range of at most this many records is fetched, not split again (one page). */
const LEAF = 100;
const MAX_DEPTH = 64;
/** Provenance keys read per statement. */
const LOCAL_PAGE = 5000;

/** Whether the upstream's $metadata declares the digest function. */
export function declaresDigest(metadata: string): boolean {
  return /<Function\s+Name="Digest"/.test(metadata);
}

export class DigestSearch implements Reconciler {
  requests = 0;

  constructor(private readonly context: PullContext) {}

  async differences(pull: SetPull): Promise<Differences> {
    this.requests = 0;
    const mine = await this.mine(pull);
    const found: Differences = { gone: [], changed: [] };
    await this.search(pull, mine, null, null, found, 0);
    this.context.log(`pull ${this.context.settings.name}: ${pull.pulled.upstream}: reconciled by digest in ${this.requests} request(s): `
      + `${found.gone.length} gone, ${found.changed.length} changed or missing`);
    return found;
  }

  private async mine(pull: SetPull): Promise<Mine[]> {
    const all: Mine[] = [];
    for (let after: string | undefined; ;) {
      const page = await this.context.progress.pulled(this.context.settings.name, pull.set.name, after, LOCAL_PAGE);
      all.push(...page.map((p) => ({ key: JSON.parse(p.key) as Key, json: p.key, timestamp: p.upstreamTimestamp })));
      if (page.length < LOCAL_PAGE) break;
      after = page.at(-1)!.key;
    }
    return all.sort((a, b) => compareKeys(a.key, b.key));
  }

  private async search(pull: SetPull, mine: readonly Mine[], from: Key | null, to: Key | null, found: Differences, depth: number): Promise<void> {
    if (depth > MAX_DEPTH) throw new Error(`the digest of ${pull.pulled.upstream} did not converge`);
    await this.context.stillMine();
    this.requests++;
    const page = await this.context.upstream.page(`${pull.pulled.upstream}/Digest(From=${pathLiteral(from)},To=${pathLiteral(to)},Parts=${PARTS})`);
    for (const range of page.records as unknown as Range[]) {
      const inside = within(mine, range.From, range.To);
      if (inside.length === range.Count && hashOf(inside) === range.Hash) continue;
      if (range.Count <= LEAF) await this.leaf(pull, inside, range, found);
      else await this.search(pull, inside, range.From, range.To, found, depth + 1);
    }
  }

  /** A differing range of few records: what the upstream serves in it, compared record by record. */
  private async leaf(pull: SetPull, inside: readonly Mine[], range: Range, found: Differences): Promise<void> {
    const { key } = pull.set;
    const timestamp = pull.set.changeTimestamp!;
    const bounds = allOf(range.From === null ? undefined : `${key} ge ${literal(range.From)}`, range.To === null ? undefined : `${key} lt ${literal(range.To)}`);
    const served = new Map<string, string>();
    let url: string | undefined = collectionUrl(pull.pulled.upstream, { $filter: bounds, $select: `${key},${timestamp}`, $orderby: `${key} asc` });
    while (url) {
      await this.context.stillMine();
      this.requests++;
      const page = await this.context.upstream.page(url, { maxPageSize: LEAF });
      for (const r of page.records) served.set(JSON.stringify(r[key]), String(r[timestamp]));
      url = page.nextLink;
    }
    const held = new Map(inside.map((m) => [m.json, m.timestamp]));
    for (const m of inside) if (!served.has(m.json)) found.gone.push(m.json);
    for (const [k, t] of served) if (held.get(k) !== t) found.changed.push(k);
  }
}

/** The protocol's key order: strings by their UTF-8 bytes, numbers as numbers. */
export function compareKeys(a: Key, b: Key): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return compareUtf8(String(a), String(b));
}

/**
 * Strings in the order of their UTF-8 bytes, without encoding them (a reconciliation compares every key held many
 * times). UTF-16 code units order as UTF-8 bytes do, except that a surrogate (half of a character past U+FFFF, whose
 * UTF-8 bytes follow every other character's) is below U+E000–U+FFFF: it is lifted above them.
 */
function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

const utf8Rank = (unit: number) => (unit >= 0xd800 && unit <= 0xdfff ? unit + 0x10000 : unit);

function within(mine: readonly Mine[], from: Key | null, to: Key | null): Mine[] {
  return mine.filter((m) => (from === null || compareKeys(m.key, from) >= 0) && (to === null || compareKeys(m.key, to) < 0));
}

/** The range's hash of this copy's records, as the upstream's digest computes it (the one definition, foundation/replica-hash.ts). */
function hashOf(records: readonly Mine[]): string {
  const sum = new RangeHash();
  for (const r of records) sum.add(recordHash(r.key, r.timestamp));
  return sum.hex();
}

function literal(key: Key | null): string {
  if (key === null) return 'null';
  return typeof key === 'number' ? String(key) : `'${key.replace(/'/g, "''")}'`;
}

/** A literal in a path segment, percent-encoded. */
function pathLiteral(key: Key | null): string {
  return encodeURIComponent(literal(key));
}
