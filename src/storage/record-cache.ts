/**
 * Stored records' bytes kept in memory by table, key and revision, up to a bound in bytes (RECORD_CACHE_MB), the
 * least recently used given up first. A record's revision changes with every write of its text (REVISION_COLUMN,
 * record-codec.ts newRevision), so bytes kept for a revision are that row's bytes for as long as it holds that
 * revision: a read that finds the revision it was given here needs no invalidation, whichever process, worker or
 * cluster node wrote since. What may be seen is never decided here: a read finds its rows, their revisions and
 * positions by its own statement (the licence's condition and the filter included) and only then takes their
 * bytes from here (prepared-reads.ts).
 *
 * Why: a page of 100 listings is 608 KB of records. Reading them from SQLite costs about 350 µs of the page's
 * 1,000 (their overflow pages copied into 100 Buffers, which the collector then sweeps); over MariaDB they cross
 * the connection and are parsed. Their positions and revisions alone are a few hundred bytes from an index.
 */
import { LRUCache } from 'lru-cache';

/** What an entry costs beyond its bytes (its key, the entry, the LRU's bookkeeping), counted against the bound. */
const ENTRY_OVERHEAD = 200;

interface Kept {
  readonly revision: number;
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

  /** The bytes of `key`'s record if they are kept at `revision` (a row without one has none kept); counted. */
  get(table: string, key: unknown, revision: unknown): Buffer | undefined {
    const bytes = this.peek(table, key, revision);
    if (bytes) this.hits++;
    else this.misses++;
    return bytes;
  }

  /** Whether the record is kept at `revision` (and it is kept longer for being asked about); not counted. */
  has(table: string, key: unknown, revision: unknown): boolean {
    return this.peek(table, key, revision) !== undefined;
  }

  /** Records served from the database by reads that keep them (a read that did not look for them first). */
  readFromDatabase(count: number): void {
    this.misses += count;
  }

  private peek(table: string, key: unknown, revision: unknown): Buffer | undefined {
    const kept = revision === null || revision === undefined ? undefined : this.kept?.get(entryKey(table, key));
    return kept && kept.revision === Number(revision) ? kept.bytes : undefined;
  }

  put(table: string, key: unknown, revision: unknown, bytes: Uint8Array): void {
    if (!this.kept || revision === null || revision === undefined) return;
    this.kept.set(entryKey(table, key), { revision: Number(revision), bytes: owned(bytes) });
  }

  stats(): RecordCacheStats {
    return { hits: this.hits, misses: this.misses, bytes: this.kept?.calculatedSize ?? 0 };
  }
}

/** A RecordCache seen from one table's reads. */
export class TableRecordCache {
  constructor(private readonly cache: RecordCache, private readonly table: string) {}

  get(key: unknown, revision: unknown): Buffer | undefined {
    return this.cache.get(this.table, key, revision);
  }

  has(key: unknown, revision: unknown): boolean {
    return this.cache.has(this.table, key, revision);
  }

  readFromDatabase(count: number): void {
    this.cache.readFromDatabase(count);
  }

  put(key: unknown, revision: unknown, bytes: Uint8Array): void {
    this.cache.put(this.table, key, revision, bytes);
  }
}

function entryKey(table: string, key: unknown): string {
  return `${table}\u0000${String(key)}`;
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
