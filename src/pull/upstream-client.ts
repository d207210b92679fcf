/**
 * The HTTP client of an upstream RESO Web API (or any OData v4 server), implementing the contract in upstream.ts:
 * authenticated GETs of whole collection pages, spaced to the allowed rate, retried within bounds when the fault
 * is one a later try may not meet (429, 5xx, timeouts, dropped connections), and every outcome told to `onEvent`.
 */
import { performance } from 'node:perf_hooks';
import { Clock, systemClock } from '../foundation/clock';
import { backoffMs } from '../foundation/retry-waits';
import { Upstream, UpstreamEvent, UpstreamFault, UpstreamFaultKind, UpstreamOptions, UpstreamPage } from './upstream';
import { judgeStatus, readMetadata, readPage, shownUrl } from './upstream-answer';
import { Agents, Exchange, exchange } from './upstream-request';
import { Pacer, realSleep } from './upstream-timing';
import { TokenSource } from './upstream-token';

const RETRIABLE: ReadonlySet<UpstreamFaultKind> = new Set(['rate-limited', 'server-error', 'timeout', 'connection']);

export function createUpstream(options: UpstreamOptions): Upstream {
  return new UpstreamClient(options);
}

class UpstreamClient implements Upstream {
  private readonly agents = new Agents();
  private readonly clock: Clock;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly pacer: Pacer;
  private readonly root: URL;
  private readonly tokens?: TokenSource;
  private metadataText?: Promise<string>;

  constructor(private readonly options: UpstreamOptions) {
    this.clock = options.clock ?? systemClock;
    this.sleep = options.sleep ?? realSleep;
    this.pacer = new Pacer(options.requestsPerSecond, this.clock, this.sleep);
    // Relative paths resolve under the service root, never beside it.
    this.root = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    const { auth } = options;
    if (auth.kind === 'client-credentials') this.tokens = new TokenSource(auth, this.agents, this.clock, { timeoutMs: options.timeoutMs, maxResponseBytes: 64 * 1024 });
  }

  async page(url: string, init: { readonly maxPageSize?: number } = {}): Promise<UpstreamPage> {
    const nextLink = /^https?:\/\//i.test(url);
    const target = new URL(url, this.root);
    // The credentials go to the upstream's origin only, whatever a page's nextLink names.
    if (target.origin !== this.root.origin) {
      throw new UpstreamFault('refused', `a nextLink to ${target.origin}, not the upstream's ${this.root.origin}: not followed, so that its credentials go nowhere else`);
    }
    const headers: Record<string, string> = { Accept: 'application/json', 'OData-MaxVersion': '4.01' };
    if (init.maxPageSize) headers.Prefer = `odata.maxpagesize=${init.maxPageSize}`;
    return this.withRetries(target, headers, nextLink, (got, where) => readPage(got, target, where));
  }

  /**
   * Read once per client (a puller connects once a pass): the strategy's look for an event log and the
   * reconciliation's look for a digest share one request of a document that can weigh megabytes. A failed read is
   * not kept.
   */
  metadata(): Promise<string> {
    this.metadataText ??= this.withRetries(new URL('$metadata', this.root), { Accept: 'application/xml' }, false, (got, where) => readMetadata(got, where))
      .catch((e: unknown) => {
        this.metadataText = undefined;
        throw e;
      });
    return this.metadataText;
  }

  async close(): Promise<void> {
    this.agents.close();
  }

  /** Tries `target` until it gives a readable answer, a fault not worth retrying, or the retries are spent. */
  private async withRetries<T>(target: URL, headers: Record<string, string>, nextLink: boolean, read: (got: Exchange, where: string) => T): Promise<T> {
    const where = `GET ${target.origin}${target.pathname}`;
    let renewed = false;
    for (let retry = 0; ; ) {
      await this.pacer.turn();
      const started = performance.now();
      let got: Exchange | undefined;
      let token: string | undefined;
      try {
        token = await this.authorization();
        got = await exchange(this.agents, { url: target, headers: { ...headers, ...bearer(token), 'Accept-Encoding': 'gzip, deflate, br' }, timeoutMs: this.options.timeoutMs, maxBytes: this.options.maxResponseBytes });
        judgeStatus(got, where, nextLink, this.clock.now());
        const result = read(got, where);
        this.emit({ url: shownUrl(target), status: got.status, ms: elapsed(started), bytes: got.body.length });
        return result;
      } catch (e) {
        const fault = e instanceof UpstreamFault ? e : new UpstreamFault('connection', `${where}: ${(e as Error).message}`);
        // A refused token is renewed once: it may have been revoked or expired early; a second refusal is final.
        const renew = fault.status === 401 && this.tokens !== undefined && token !== undefined && !renewed;
        const wait = renew ? 0 : this.waitBefore(fault, retry + 1);
        this.emit({ url: shownUrl(target), status: fault.status ?? got?.status, ms: elapsed(started), bytes: got?.body.length, fault: fault.kind, retrying: wait !== undefined });
        if (wait === undefined) throw fault;
        if (renew) {
          renewed = true;
          this.tokens!.forget(token!);
          continue;
        }
        retry++;
        await this.sleep(wait);
      }
    }
  }

  /**
   * How long to wait before retry number `retry`, or undefined when the fault is final: not retriable, the retries
   * spent, or a Retry-After longer than the longest wait allowed (the caller decides whether to come back then).
   */
  private waitBefore(fault: UpstreamFault, retry: number): number | undefined {
    const { attempts, firstWaitMs, maxWaitMs } = this.options.retry;
    if (!RETRIABLE.has(fault.kind) || retry > attempts) return undefined;
    if (fault.retryAfterMs !== undefined) return fault.retryAfterMs <= maxWaitMs ? fault.retryAfterMs : undefined;
    return backoffMs(retry, firstWaitMs, maxWaitMs);
  }

  private async authorization(): Promise<string | undefined> {
    const { auth } = this.options;
    if (auth.kind === 'bearer') return auth.token;
    return this.tokens?.current();
  }

  private emit(event: UpstreamEvent): void {
    this.options.onEvent?.(event);
  }
}

const bearer = (token: string | undefined): Record<string, string> => (token ? { Authorization: `Bearer ${token}` } : {});
const elapsed = (started: number) => Math.round(performance.now() - started);
