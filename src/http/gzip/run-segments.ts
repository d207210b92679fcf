/**
 * Compressed runs of records kept in memory (GZIP_RUN_CACHE_MB), the least recently used given up first: a page's
 * records are compressed in runs of RUN_RECORDS (by position from the page's first record), each run once, and
 * served again as it is while its records keep their revisions. A run is kept at the digest of what makes its
 * text: the shape its records are written in, and each record's key and revision in order. A record's revision
 * changes with every write of its text (storage/records/record-cache.ts), so a changed record gives its runs
 * another digest and is never served from a run compressed before the change.
 *
 * Why runs: a record alone is too short for deflate to find the field names and values it shares with the
 * others (0.431 of its text against 0.148 for a whole page); runs of 50 keep the page's ratio (0.156), and a
 * run of a page of 100 costs 3 ms at level 6, once (docs/benchmarks/gzip.md).
 */
import type { CacheCounts } from '../../observability/metrics';
import { CountedLru } from './counted-lru';
import { sha256 } from '../../foundation/digest';
import { segmentOf, type Segment } from './gzip-stream';

/** Records per run: long enough for deflate's ratio on a page, short enough that a changed record costs little. */
export const RUN_RECORDS = 50;
/** Level of a kept run: compressed once, served many times, so the smaller bytes are worth zlib's default. */
export const RUN_LEVEL = 6;
/** Runs asked for between two verdicts on whether reading only the others pays: a walk that finds its runs kept reads positions from its second batch on. */
const RUNS_PER_VERDICT = 2;
/** What an entry costs beyond its bytes (its digest, the entry, the LRU's bookkeeping), counted against the bound. */
const ENTRY_OVERHEAD = 200;

export class RunSegments {
  private readonly cache: CountedLru<Segment>;

  /** `maxBytes` 0: nothing is kept; every run is compressed on the spot. */
  constructor(maxBytes: number) {
    this.cache = new CountedLru<Segment>(maxBytes, (s) => s.bytes.length + ENTRY_OVERHEAD);
  }

  /**
   * What the kept runs have done since the start (the run cache's metrics, /metrics): runs served from memory,
   * compressed on the spot, given up for room; bytes kept now, with each entry's overhead.
   */
  stats(): CacheCounts {
    return this.cache.stats();
  }

  /** A run found by peek() and held until written: served from memory. */
  served(): void {
    this.cache.counts.hits++;
  }

  /** Most runs lately asked for (the last batch's: of(), peek()) were kept: reading only the others pays. */
  mostlyKept = false;
  private lately = { kept: 0, asked: 0 };

  /** The segment kept at `id`, if any (counted as asked; a hit only once served: served()). */
  peek(id: string): Segment | undefined {
    const found = this.cache.entries?.get(id);
    this.note(found !== undefined);
    return found;
  }

  /** A run asked for, kept or not; every RUNS_PER_VERDICT asked (a batch of 100), whether most were kept decides mostlyKept. */
  private note(kept: boolean): void {
    const l = this.lately;
    l.asked++;
    if (kept) l.kept++;
    if (l.asked < RUNS_PER_VERDICT) return;
    this.mostlyKept = l.kept * 2 >= l.asked;
    this.lately = { kept: 0, asked: 0 };
  }

  /**
   * The segment of a run's text: kept at `id` (runId), or compressed from `text()` and kept. `id` undefined: a
   * run whose revisions are not known, compressed and not kept.
   */
  of(id: string | undefined, text: () => Buffer): Segment {
    const found = id === undefined ? undefined : this.cache.entries?.get(id);
    this.note(found !== undefined);
    this.cache.counts[found ? 'hits' : 'misses']++;
    if (found) return found;
    const made = segmentOf(text(), RUN_LEVEL);
    if (id !== undefined) this.cache.entries?.set(id, made);
    return made;
  }
}

/**
 * The digest a run is kept at: its shape (what tells how records are written: the set, and how the run is
 * framed) and each record's key and revision, in order; undefined when a revision is not known.
 */
export function runId(shape: string, keys: readonly unknown[], revisions: readonly unknown[] | undefined): string | undefined {
  if (!revisions || revisions.length !== keys.length) return undefined;
  let text = shape;
  for (let i = 0; i < keys.length; i++) {
    const revision = revisions[i];
    if (revision === undefined || revision === null) return undefined;
    // A set's keys are of one type. Revisions are numbers: two runs whose keys' NULs line up differently
    // would also need the same random revisions, record for record (storage/records/record-codec.ts).
    text += `\u0000${String(keys[i])}\u0000${String(revision)}`;
  }
  return sha256(text);
}
