/**
 * What the gzip caches (kept runs, kept pages) share: an LRU bounded in bytes (none when the bound is 0: nothing is
 * kept), the entries it gave up for room counted, and the counts its owner keeps of what it served and missed,
 * reported together for /metrics (ServiceMetrics.gzipRuns, gzipPages).
 */
import { LRUCache } from 'lru-cache';
import type { CacheCounts } from '../../observability/metrics';

export class CountedLru<V extends object> {
  readonly entries?: LRUCache<string, V>;
  /** Served and missed are counted by the owner (what counts as either is its own); evictions here. */
  readonly counts = { hits: 0, misses: 0, evictions: 0 };

  /** `size`: what an entry costs against `maxBytes`, its key and bookkeeping included. */
  constructor(maxBytes: number, size: (value: V, key: string) => number) {
    if (maxBytes > 0) {
      this.entries = new LRUCache<string, V>({
        maxSize: maxBytes, sizeCalculation: size,
        dispose: (_v, _key, reason) => { if (reason === 'evict') this.counts.evictions++; },
      });
    }
  }

  stats(): CacheCounts {
    return { ...this.counts, bytes: this.entries?.calculatedSize ?? 0 };
  }
}
