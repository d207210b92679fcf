/**
 * The reference replica client of the digest protocol (docs/replication.md, "Digest"), over HTTP only and
 * written from the documentation alone (it imports nothing of the product): a replica holding (key, timestamp)
 * pairs asks the service for the digest of the whole key range, compares each sub-range's count and hash with its
 * own copy, and descends only into those that differ; a differing range of few records is fetched with the plain
 * collection query of that range and compared record by record. It counts its requests and the bytes it received.
 */
import { createHash } from 'node:crypto';

export type Key = string | number;

/** A replica: timestamp by key. */
export type Replica = ReadonlyMap<Key, string>;

export interface Differences {
  /** Served, but not in the replica. */
  readonly missing: Key[];
  /** In the replica, but no longer served. */
  readonly extra: Key[];
  /** In both, with another timestamp served. */
  readonly stale: Key[];
  /** The timestamps served of the missing and stale records (what the replica takes on applying them). */
  readonly served: Map<Key, string>;
}

export interface DigestClientOptions {
  /** The service root, e.g. http://localhost:8080/odata. */
  readonly root: string;
  readonly set: string;
  /** The set's key and replication timestamp fields. */
  readonly key: string;
  readonly timestamp: string;
  readonly headers?: Record<string, string>;
  /** Sub-ranges asked of each digest (1..64). */
  readonly parts?: number;
  /** A differing range of at most this many served records is fetched rather than split again. */
  readonly leaf?: number;
}

interface Range {
  readonly From: Key | null;
  readonly To: Key | null;
  readonly Count: number;
  readonly Hash: string;
}

const MASK = (1n << 64n) - 1n;
/** A runaway guard: the depth of a search never exceeds log_2 of any count a test holds. */
const MAX_DEPTH = 64;

/** The protocol's record hash: the first 8 bytes of SHA-256 over `<key>\n<timestamp>`, big-endian. */
export function recordHash(key: Key, timestamp: string): bigint {
  return createHash('sha256').update(`${key}\n${timestamp}`).digest().readBigUInt64BE(0);
}

/** The order the service's keys are in: strings by their UTF-8 bytes (code points), numbers as numbers. */
export function compareKeys(a: Key, b: Key): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const cx = x.charCodeAt(i);
    const cy = y.charCodeAt(i);
    if (cx === cy) continue;
    // A surrogate stands for a code point above every other UTF-16 unit's.
    const sx = cx >= 0xd800 && cx <= 0xdfff;
    const sy = cy >= 0xd800 && cy <= 0xdfff;
    return sx === sy ? cx - cy : sx ? 1 : -1;
  }
  return x.length - y.length;
}

export class DigestClient {
  requests = 0;
  bytes = 0;
  private keys: Key[] = [];
  private replica: Replica = new Map();

  constructor(private readonly o: DigestClientOptions) {}

  /** The keys where the replica differs from what the service serves now. */
  async differences(replica: Replica): Promise<Differences> {
    this.replica = replica;
    this.keys = [...replica.keys()].sort(compareKeys);
    const found: Differences = { missing: [], extra: [], stale: [], served: new Map() };
    await this.search(null, null, found, 0);
    return found;
  }

  private async search(from: Key | null, to: Key | null, found: Differences, depth: number): Promise<void> {
    if (depth > MAX_DEPTH) throw new Error(`digest search deeper than ${MAX_DEPTH} at [${from}, ${to})`);
    const literal = (k: Key | null) => (k === null ? 'null' : typeof k === 'number' ? String(k) : `'${encodeURIComponent(k.replace(/'/g, "''"))}'`);
    const url = `${this.o.root}/${this.o.set}/Digest(From=${literal(from)},To=${literal(to)},Parts=${this.o.parts ?? 16})`;
    const ranges = (await this.get(url)).value as Range[];
    for (const r of ranges) {
      const local = this.slice(r.From, r.To);
      if (local.length === r.Count && this.hashOf(local) === r.Hash) continue;
      if (r.Count <= (this.o.leaf ?? 50)) await this.compare(r.From, r.To, local, found);
      else await this.search(r.From, r.To, found, depth + 1);
    }
  }

  /** The served records of [from, to) by the plain collection query, compared with the replica's. */
  private async compare(from: Key | null, to: Key | null, local: readonly Key[], found: Differences): Promise<void> {
    const { key, timestamp } = this.o;
    const literal = (k: Key) => (typeof k === 'number' ? String(k) : `'${k.replace(/'/g, "''")}'`);
    const bounds = [...from === null ? [] : [`${key} ge ${literal(from)}`], ...to === null ? [] : [`${key} lt ${literal(to)}`]];
    const query = new URLSearchParams({ $select: `${key},${timestamp}`, $orderby: key, ...bounds.length ? { $filter: bounds.join(' and ') } : {} });
    const served = new Map<Key, string>();
    for (let next: string | undefined = `${this.o.root}/${this.o.set}?${query}`; next;) {
      const page = await this.get(next);
      for (const r of page.value as Record<string, unknown>[]) served.set(r[key] as Key, r[timestamp] as string);
      next = page['@odata.nextLink'] as string | undefined;
    }
    for (const [k, t] of served) {
      const mine = this.replica.get(k);
      if (mine === undefined) found.missing.push(k);
      else if (mine !== t) found.stale.push(k);
      if (mine !== t) found.served.set(k, t);
    }
    for (const k of local) if (!served.has(k)) found.extra.push(k);
  }

  /** The replica's keys in [from, to) (null: open), by binary search of the sorted keys. */
  private slice(from: Key | null, to: Key | null): Key[] {
    const start = from === null ? 0 : this.firstAtLeast(from);
    const end = to === null ? this.keys.length : this.firstAtLeast(to);
    return this.keys.slice(start, Math.max(start, end));
  }

  private firstAtLeast(k: Key): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.keys[mid], k) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private hashOf(keys: readonly Key[]): string {
    let sum = 0n;
    for (const k of keys) sum = (sum + recordHash(k, this.replica.get(k)!)) & MASK;
    return sum.toString(16).padStart(16, '0');
  }

  private async get(url: string): Promise<Record<string, unknown>> {
    this.requests++;
    const res = await fetch(url, { headers: this.o.headers });
    const body = Buffer.from(await res.arrayBuffer());
    this.bytes += body.length;
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${body.toString('utf8').slice(0, 300)}`);
    return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  }
}
