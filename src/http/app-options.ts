/**
 * How the application is set up (http/app.ts): page sizes and limits, the service root for links, what every
 * request is logged, measured and compressed with. A module of its own so that the handlers it sets up can read it
 * without importing the application that builds them.
 */
import type { PagingOptions } from '../paging/page-plan';
import type { Logger } from '../observability/logger';
import type { ServiceMetrics } from '../observability/metrics';
import type { MetricsText } from './admin/metrics-endpoint';

/** GZIP_RUN_CACHE_MB's default, in bytes. */
export const DEFAULT_GZIP_RUN_CACHE_BYTES = 64 * 1024 * 1024;
/** GZIP_PAGE_CACHE_MB's default, in bytes. */
export const DEFAULT_GZIP_PAGE_CACHE_BYTES = 64 * 1024 * 1024;

/** With the page sizes (paging/page-plan.ts). */
export interface AppOptions extends PagingOptions {
  /** Absolute service root for links; by default taken from the request's Host. */
  baseUrl?: string;
  /** Longest $filter accepted (413 beyond). */
  maxFilterLength: number;
  /** Records of a page read, expanded and written at a time (http/page-batches.ts). */
  pageBatchSize: number;
  /** How long a response waits for a reader that takes nothing before disconnecting it, in milliseconds. */
  writeStallMs: number;
  /** Requests one client may have in progress at once; more answer 429 (http/concurrency-limit.ts). */
  maxConcurrentRequests: number;
  /** The operator's distribution scope: an OData filter on Property (see query/visibility.ts). */
  feedScope?: string;
  /**
   * No authentication, licensing or metering: for measuring what they cost (bench/). Deliberately not
   * reachable from configuration or the command line.
   */
  anonymous?: boolean;
  /** Where request lines go (none: silent). */
  logger?: Logger;
  /** gzip and brotli by Accept-Encoding (http/compression.ts). */
  compression?: boolean;
  /** Bytes of compressed runs of records kept for stitched gzip bodies (http/gzip/run-segments.ts); 0: none kept. */
  gzipRunCacheBytes?: number;
  /** Bytes of stitched gzip pages kept whole while no record is written (http/gzip/page-bodies.ts); 0: none kept. */
  gzipPageCacheBytes?: number;
  /** Origins browsers may call from (http/cors.ts); none: CORS off. */
  corsOrigins?: readonly string[];
  /** Observes every request. */
  metrics?: ServiceMetrics;
  /** With it, admin clients scrape /metrics on the service port, answered by it (one process's, or a cluster's). */
  scrapeOnServicePort?: MetricsText;
}
