/**
 * Stored records' bytes kept in memory by table, key and revision (and an expansion's related records by parent,
 * at the digest of their revisions: TableRecordCache.runs), up to a bound in bytes (RECORD_CACHE_MB), the
 * least recently used given up first. A record's revision changes with every write of its text (REVISION_COLUMN,
 * record-codec.ts newRevision), so bytes kept for a revision are that row's bytes for as long as it holds that
 * revision: a read that finds the revision it was given here needs no invalidation, whichever process, worker or
 * cluster node wrote since. What may be seen is never decided here: a read finds its rows, their revisions and
 * positions by its own statement (the licence's condition and the filter included) and only then takes their
 * bytes from here (prepared-reads.ts).
 *
 * Why: a page of 100 listings is 608 KB of records. Reading them from SQLite costs about 350 µs of the page's
 * 1,000 (their overflow pages copied into 100 Buffers, which the collector then sweeps); over MariaDB they cross
 * the connection and are parsed. Their positions and revisions alone are a few hundred bytes from an index. The
 * same page's media (1,736 records) joined in order by SQLite cost about 1,250 µs; their digests, one row per
 * listing from the foreign key's index, 260–370 µs (measured outside the server).
 */
import { LRUCache } from 'lru-cache';

/** What an entry costs beyond its bytes (its key, the entry, the LRU's bookkeeping), counted against the bound. */
const ENTRY_OVERHEAD = 200;

/** What bytes are kept at: a row's revision, or the digest of a parent's related rows' revisions. */
export type Version = number | string;

interface Kept {
  readonly version: Version;
  readonly bytes: Buffer;
}

/** Since the start, for the operator (metrics): records served from memory, and from the database by reads that keep them. */
export interface RecordCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly bytes: number;
}

export class RecordCache {
  private readonly kept?: LRUCache<string, Kept>;
  private hits = 0;
  private misses = 0;

  /** `maxBytes` 0: nothing is kept, and reads read records whole as before. */
  constructor(readonly maxBytes: number) {
    if (maxBytes > 0) this.kept = new LRUCache<string, Kept>({ maxSize: maxBytes, sizeCalculation: (k) => k.bytes.length + ENTRY_OVERHEAD });
  }

  get enabled(): boolean {
    return this.kept !== undefined;
  }

  /** The records of one table. */
  of(table: string): TableRecordCache {
    return new TableRecordCache(this, table);
  }

  /** The bytes kept under `entry` if they are kept at `version`; counted as `records` served, from memory or not. */
  take(entry: string, version: Version | undefined, records = 1): Buffer | undefined {
    const bytes = this.peek(entry, version);
    if (bytes) this.hits += records;
    else this.misses += records;
    return bytes;
  }

  /** Whether `entry` is kept at `version` (and it is kept longer for being asked about); not counted. */
  has(entry: string, version: Version | undefined): boolean {
    return this.peek(entry, version) !== undefined;
  }

  /** Records served from the database by reads that keep them (a read that did not look for them first). */
  readFromDatabase(count: number): void {
    this.misses += count;
  }

  keep(entry: string, version: Version | undefined, bytes: Uint8Array): void {
    if (!this.kept || version === undefined) return;
    this.kept.set(entry, { version, bytes: owned(bytes) });
  }

  private peek(entry: string, version: Version | undefined): Buffer | undefined {
    const kept = version === undefined ? undefined : this.kept?.get(entry);
    return kept && kept.version === version ? kept.bytes : undefined;
  }

  stats(): RecordCacheStats {
    return { hits: this.hits, misses: this.misses, bytes: this.kept?.calculatedSize ?? 0 };
  }
}

/**
 * A RecordCache seen from one table's reads: its records by key, each at its row's revision (revisionOf); or, for
 * one expansion statement (`runs`), its related runs by parent, each at the digest of their revisions.
 *
 * The runs: the related records of parents as one expansion statement reads them (its condition, licence
 * included, and order: `statement`), each parent's as the one run of bytes that statement joins them into, kept at
 * the digest of their revisions (RecordQueries.relatedDigests: their count and the sums of their revisions' halves).
 * Any write of one of them, one more, one fewer, changes the digest, as any write changes a row's revision (but
 * for a chance of 2^-48 a write); a run found at the digest its statement gives now is what that statement would
 * join now.
 */
export class TableRecordCache {
  private readonly prefix: string;

  constructor(private readonly cache: RecordCache, private readonly table: string, statement?: string) {
    this.prefix = statement === undefined ? `${table}\u0000` : `${table}\u0001${statement}\u0000`;
  }

  /** The related runs one expansion statement reads (`statement`: what tells it from every other). */
  runs(statement: string): TableRecordCache {
    return new TableRecordCache(this.cache, this.table, statement);
  }

  /** The bytes of `id` (a key, or a parent's) if kept at `version`; counted as its `records`, served or missed. */
  get(id: unknown, version: Version | undefined, records = 1): Buffer | undefined {
    return this.cache.take(this.prefix + String(id), version, records);
  }

  has(id: unknown, version: Version | undefined): boolean {
    return this.cache.has(this.prefix + String(id), version);
  }

  readFromDatabase(count: number): void {
    this.cache.readFromDatabase(count);
  }

  put(id: unknown, version: Version | undefined, bytes: Uint8Array): void {
    this.cache.keep(this.prefix + String(id), version, bytes);
  }
}

/** A row's revision as records are kept at it (none for a row without one: nothing is kept for it). */
export function revisionOf(revision: unknown): number | undefined {
  return revision === null || revision === undefined ? undefined : Number(revision);
}

/**
 * Bytes that hold no larger buffer alive: a Buffer a driver cut from a packet (mysql2) would keep the packet,
 * and a small copy from Node's pool would keep the pool's slab; either would make the bound a lie. better-sqlite3
 * hands over Buffers of their own, kept as they are (a scan thread's rows arrive as plain Uint8Arrays: copied).
 */
function owned(bytes: Uint8Array): Buffer {
  if (Buffer.isBuffer(bytes) && bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  copy.set(bytes);
  return copy;
}
