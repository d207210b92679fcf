/**
 * Prometheus metrics (prom-client) of one server process, in a registry of its own (several servers may run
 * in one process, as in tests): requests by endpoint, status and transaction class, their latency, requests in
 * progress, the database pool, the usage journal's lag, and Node's process metrics.
 *
 * Several worker processes behind one port: the primary sums every worker's `registries()` into one scrape
 * (src/cluster/cluster-metrics.ts), each metric by its prom-client `aggregator`: counters and histograms are
 * summed, and so are gauges of what each worker has of its own (requests in progress, pool connections, journal
 * bytes); gauges that every worker reads alike or that are a worst case take the largest.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ConflictCounts } from '../storage/db/conflicts';
import type { PoolStats } from '../storage/db/database';

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** What the gauges read when scraped. */
export interface MetricSources {
  /** The database pool (MariaDB/MySQL); absent for SQLite. */
  readonly pool?: () => PoolStats | undefined;
  /** Write transactions that lost a conflict (a deadlock; on Galera, certification) and were run again (MariaDB/MySQL). */
  readonly conflicts?: () => ConflictCounts | undefined;
  /** The usage journal's lag behind the usage table (metering/meter.ts). */
  readonly usageLag?: () => { bytes: number; seconds: number };
  /** Stored records kept in memory by revision (storage/record-cache.ts): lookups since the start, bytes kept now. */
  readonly recordCache?: () => { hits: number; misses: number; bytes: number };
}

/** One finished request, as the request log sees it. */
export interface RequestObservation {
  /** An entity set's name, `$metadata`, `service-document`, `token`, … or `other` (bounded: never a raw path). */
  readonly endpoint: string;
  readonly status: number;
  /** `A`, `B` or `none` (not charged). */
  readonly transactionClass: string;
  readonly seconds: number;
  readonly bytes: number;
}

/** What a bounded cache reports at each scrape: served from it, not found, given up for room, bytes kept. */
export interface CacheCounts { hits: number; misses: number; evictions: number; bytes: number }

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'endpoint' | 'status' | 'class'>;
  private readonly duration: Histogram<'endpoint' | 'class'>;
  private readonly bytes: Counter<'endpoint'>;
  readonly inProgress: Gauge;

  constructor(sources: MetricSources = {}) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'reso_http_requests_total', help: 'HTTP requests answered, by endpoint (entity set), status and transaction class',
      labelNames: ['endpoint', 'status', 'class'], registers,
    });
    this.duration = new Histogram({
      name: 'reso_http_request_duration_seconds', help: 'Time from a request\'s arrival to its response\'s end',
      labelNames: ['endpoint', 'class'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers,
    });
    this.bytes = new Counter({
      name: 'reso_http_response_bytes_total', help: 'Response body bytes sent (after compression), by endpoint',
      labelNames: ['endpoint'], registers,
    });
    this.inProgress = new Gauge({ name: 'reso_http_requests_in_progress', help: 'HTTP requests being answered now', registers });
    if (sources.pool) poolGauges(sources.pool, registers);
    if (sources.conflicts) conflictCounters(sources.conflicts, registers);
    if (sources.usageLag) usageGauges(sources.usageLag, registers);
    if (sources.recordCache) recordCacheMetrics(sources.recordCache, registers);
  }

  observe(o: RequestObservation): void {
    this.requests.inc({ endpoint: o.endpoint, status: String(o.status), class: o.transactionClass });
    this.duration.observe({ endpoint: o.endpoint, class: o.transactionClass }, o.seconds);
    if (o.bytes > 0) this.bytes.inc({ endpoint: o.endpoint }, o.bytes);
  }

  /**
   * The gzip run cache's metrics (http/gzip/run-segments.ts), read at each scrape: runs served from memory and
   * compressed on the spot since the start, runs given up for room, bytes kept now.
   */
  gzipRuns(read: () => CacheCounts): void {
    this.cacheMetrics('reso_gzip_run_cache', read, {
      hits: 'Compressed runs of records served from memory in stitched gzip bodies (GZIP_RUN_CACHE_MB)',
      misses: 'Runs of records compressed on the spot for stitched gzip bodies (then kept)',
      evictions: 'Compressed runs given up, least recently used first, to keep the cache within GZIP_RUN_CACHE_MB',
      bytes: 'Bytes of compressed runs kept in memory, at most GZIP_RUN_CACHE_MB',
    });
  }

  /**
   * The kept gzip pages' metrics (http/gzip/page-bodies.ts), read at each scrape: pages served whole from memory,
   * pages stitched (none kept, or kept before the last record write), pages given up for room, bytes kept now.
   */
  gzipPages(read: () => CacheCounts): void {
    this.cacheMetrics('reso_gzip_page_cache', read, {
      hits: 'Stitched gzip pages served whole from memory, no record written since they were read (GZIP_PAGE_CACHE_MB)',
      misses: 'Stitched gzip pages not kept, or kept before the last record write: stitched from their runs',
      evictions: 'Kept gzip pages given up, least recently used first, to keep within GZIP_PAGE_CACHE_MB',
      bytes: 'Bytes of stitched gzip pages kept whole, at most GZIP_PAGE_CACHE_MB',
    });
  }

  /** A bounded cache's counters (`<prefix>_hits_total`, …) and its bytes (`<prefix>_bytes`), read at each scrape. */
  private cacheMetrics(prefix: string, read: () => CacheCounts, help: Record<keyof CacheCounts, string>): void {
    const registers = [this.registry];
    for (const field of ['hits', 'misses', 'evictions'] as const) {
      new Counter({ name: `${prefix}_${field}_total`, help: help[field], registers, collect() { this.reset(); this.inc(read()[field]); } });
    }
    new Gauge({ name: `${prefix}_bytes`, help: help.bytes, registers, collect() { this.set(read().bytes); } });
  }

  /**
   * Adds a gauge read at each scrape (e.g. the webhook deliveries' lag, from the module that knows it). A series
   * with labels of its own: a prom-client metric registered in `registry`.
   */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    new Gauge({ name, help, registers: [this.registry], async collect() { this.set(await read()); } });
  }

  /** The text a scrape gets: this server's metrics and its process's. */
  text(): Promise<string> {
    return Registry.merge([this.registry, processRegistry()]).metrics();
  }

  /** What a scrape reads: this server's registry and its process's; a cluster's primary sums them over workers. */
  registries(): Registry[] {
    return [this.registry, processRegistry()];
  }
}

let processMetrics: Registry | undefined;

/**
 * Node's process metrics (CPU, memory, event-loop lag, GC), collected once per process however many servers it
 * runs: each collection starts an event-loop monitor and a GC observer that live as long as the process.
 */
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

function poolGauges(pool: () => PoolStats | undefined, registers: Registry[]): void {
  const fields: [keyof PoolStats, string, string][] = [
    ['open', 'reso_db_pool_connections', 'Database connections open (idle included)'],
    ['idle', 'reso_db_pool_idle_connections', 'Database connections open and idle'],
    ['waiting', 'reso_db_pool_waiting_requests', 'Requests waiting for a database connection'],
    ['limit', 'reso_db_pool_max_connections', 'The pool\'s connection limit'],
  ];
  for (const [field, name, help] of fields) {
    new Gauge({ name, help, registers, collect() { this.set(pool()?.[field] ?? 0); } });
  }
}

function conflictCounters(conflicts: () => ConflictCounts | undefined, registers: Registry[]): void {
  for (const [field, name, help] of [
    ['conflicts', 'reso_db_write_conflicts_total', 'Write transaction attempts that lost a conflict (deadlock, Galera certification) and were run again'],
    ['unannounced', 'reso_db_write_conflicts_unannounced_total', 'Of those, attempts a Galera node rolled back without an error to any statement, caught before COMMIT'],
    ['recovered', 'reso_db_write_conflicts_recovered_total', 'Write transactions that committed after losing a conflict'],
    ['exhausted', 'reso_db_write_conflicts_exhausted_total', 'Write transactions that lost every attempt (answered 503)'],
  ] as const) {
    new Counter({ name, help, registers, collect() { this.reset(); this.inc(conflicts()?.[field] ?? 0); } });
  }
}

function usageGauges(lag: () => { bytes: number; seconds: number }, registers: Registry[]): void {
  new Gauge({
    name: 'reso_usage_journal_unapplied_bytes', help: 'Usage journal bytes not yet applied to the usage table', registers,
    collect() { this.set(lag().bytes); },
  });
  new Gauge({
    name: 'reso_usage_journal_lag_seconds', help: 'Seconds since the usage table last caught up with the usage journal (0 when it has)', registers,
    aggregator: 'max',
    collect() { this.set(lag().seconds); },
  });
}

function recordCacheMetrics(read: () => { hits: number; misses: number; bytes: number }, registers: Registry[]): void {
  for (const [field, name, help] of [
    ['hits', 'reso_record_cache_hits_total', 'Records read from memory, found at the revision their row holds (RECORD_CACHE_MB)'],
    ['misses', 'reso_record_cache_misses_total', 'Records of key fetches and first pages read from the database instead (then kept)'],
  ] as const) {
    new Counter({ name, help, registers, collect() { this.reset(); this.inc(read()[field]); } });
  }
  new Gauge({ name: 'reso_record_cache_bytes', help: 'Bytes of stored records kept in memory, at most RECORD_CACHE_MB', registers, collect() { this.set(read().bytes); } });
}
