/**
 * What `reso-server pull` needs of an upstream RESO Web API (or any OData v4) server: pages of records by URL,
 * its $metadata, and faults it can act on. The contract between the puller (strategies, checkpoints, applying
 * pages) and the HTTP client that talks to the upstream (authentication, request rate, retries, parsing), so that
 * each is built and tested on its own: the puller against any Upstream, the client against real servers and a
 * fault-injecting proxy.
 */
import type { Clock } from '../foundation/clock';

/** How the upstream wants to be authenticated. Secrets are never logged nor printed back. */
export type UpstreamAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'bearer'; readonly token: string }
  /** OAuth2 client credentials: a token fetched from `tokenUrl`, fetched again before it expires or when refused. */
  | { readonly kind: 'client-credentials'; readonly tokenUrl: string; readonly clientId: string; readonly clientSecret: string; readonly scope?: string };

export interface UpstreamOptions {
  /** The service root, e.g. `https://feed.example/odata`. */
  readonly baseUrl: string;
  readonly auth: UpstreamAuth;
  /** The upstream's allowance: requests are spaced so that this rate is never exceeded. */
  readonly requestsPerSecond: number;
  /** A whole response (headers and body); past it the request is abandoned as a `timeout`. */
  readonly timeoutMs: number;
  /** A body larger than this (decompressed) is a `too-large` fault, never buffered whole. */
  readonly maxResponseBytes: number;
  /** Retriable faults (429, 5xx, timeouts, dropped connections) are tried again this often, waits doubling and jittered. */
  readonly retry: { readonly attempts: number; readonly firstWaitMs: number; readonly maxWaitMs: number };
  readonly clock?: Clock;
  /** Waiting, injectable so that tests need not sleep. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Every request's outcome and every fault, for the log and metrics. */
  readonly onEvent?: (event: UpstreamEvent) => void;
}

export type UpstreamFaultKind =
  /** 401/403, or the token endpoint refused the client: the upstream is stopped, never retried in a storm. */
  | 'credentials-refused'
  /** 429 (after the retries): the Retry-After it gave is in `retryAfterMs`. */
  | 'rate-limited'
  /** 5xx after the retries. */
  | 'server-error'
  | 'timeout'
  /** The connection was refused, reset or dropped mid-body. */
  | 'connection'
  /** A body that is not the JSON it says, or JSON cut short. */
  | 'malformed'
  /** A 2xx answer that is not an OData collection (an HTML error page, a page without `value`). */
  | 'not-odata'
  /** A nextLink the upstream no longer honours (4xx on a nextLink): restart from the checkpoint. */
  | 'link-expired'
  | 'too-large'
  /** Any other 4xx: the request itself is wrong (a filter the upstream refuses); not retried. */
  | 'refused';

export class UpstreamFault extends Error {
  constructor(
    readonly kind: UpstreamFaultKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'UpstreamFault';
  }
}

export interface UpstreamEvent {
  readonly url: string;
  readonly status?: number;
  readonly ms: number;
  readonly bytes?: number;
  /** Set when the request failed; `retrying` says whether it will be tried again. */
  readonly fault?: UpstreamFaultKind;
  readonly retrying?: boolean;
}

/** One collection page, whole: never a part of one. */
export interface UpstreamPage {
  readonly records: readonly Readonly<Record<string, unknown>>[];
  /** Absolute URL of the next page, when the upstream gave one. */
  readonly nextLink?: string;
  readonly count?: number;
}

export interface Upstream {
  /**
   * GETs a collection page: a path and query relative to the service root (`Property?$filter=…`) or an absolute
   * nextLink. `maxPageSize` is asked with `Prefer: odata.maxpagesize`. Retries what is retriable within the
   * options' bounds, then throws an UpstreamFault; any other failure is an UpstreamFault too.
   */
  page(url: string, init?: { readonly maxPageSize?: number }): Promise<UpstreamPage>;
  /** The upstream's $metadata, as XML text (read once in the client's life). */
  metadata(): Promise<string>;
  /** Closes kept-alive connections. */
  close(): Promise<void>;
}
