/**
 * Stitched gzip pages kept whole (GZIP_PAGE_CACHE_MB), each with the write mark read before its records were
 * (storage/records/write-mark.ts), the least recently used given up first. A request of the same page (the same
 * plan, which holds the client's licence, the same place in its walk, the same service root) that finds the mark
 * unchanged is answered with the kept bytes: no record was written since they were read, so they are the bytes its
 * reads would stitch again. One read of the mark replaces the page's positions (1,000 rows' keys and revisions for
 * a page of 1,000: most of a kept page's cost, docs/benchmarks/gzip.md); any write of any record moves the mark, so
 * under writes pages are stitched from their runs as before.
 *
 * A page is kept as one buffer, its pieces joined once: sent again, it is one write, as a static body is (a page
 * of 100 is about 15 pieces, and the socket's writev of them was a fifth of a kept page's cost on MariaDB).
 */
import { CountedLru } from './counted-lru';
import type { CacheCounts } from '../../observability/metrics';

/** What an entry costs beyond its body and its key (the entry, the LRU's bookkeeping), counted against the bound. */
const ENTRY_OVERHEAD = 256;

interface KeptPage {
  readonly mark: string;
  readonly body: Buffer;
}

export class PageBodies {
  private readonly cache: CountedLru<KeptPage>;

  /** `maxBytes` 0: no page is kept. */
  constructor(maxBytes: number) {
    this.cache = new CountedLru<KeptPage>(maxBytes, (p, key) => p.body.length + 2 * key.length + ENTRY_OVERHEAD);
  }

  /** Whether pages are kept at all. */
  get keeping(): boolean {
    return this.cache.entries !== undefined;
  }

  /** What the kept pages have done since the start (their metrics, /metrics). */
  stats(): CacheCounts {
    return this.cache.stats();
  }

  /** The body kept for `key` at `mark`; a page kept at another mark is given up (it can never be served again). */
  find(key: string, mark: string): Buffer | undefined {
    const found = this.cache.entries?.get(key);
    if (found?.mark === mark) {
      this.cache.counts.hits++;
      return found.body;
    }
    if (found) this.cache.entries!.delete(key);
    this.cache.counts.misses++;
    return undefined;
  }

  /** Keeps a page's body (the pieces it was written in), as read after `mark` was. */
  keep(key: string, mark: string, pieces: readonly Buffer[]): void {
    this.cache.entries?.set(key, { mark, body: Buffer.concat(pieces) });
  }
}
