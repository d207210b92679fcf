/** Walking an upstream with the product's own client (src/pull/upstream-client.ts), for the pull tests. */
import { createUpstream } from '../../src/pull/upstream-client';
import type { Upstream, UpstreamAuth, UpstreamPage } from '../../src/pull/upstream';

/** Every page from `first` to the last nextLink. */
export async function walk(upstream: Upstream, first: string, maxPageSize?: number): Promise<UpstreamPage[]> {
  const pages: UpstreamPage[] = [];
  for (let url: string | undefined = first; url; url = pages[pages.length - 1].nextLink) {
    pages.push(await upstream.page(url, maxPageSize ? { maxPageSize } : {}));
    if (pages.length > 1000) throw new Error(`more than 1000 pages from ${first}`);
  }
  return pages;
}

/** Every record `query` gives at `serviceRoot`, read straight (no faults, no pacing). */
export async function recordsAt(serviceRoot: string, auth: UpstreamAuth, query: string): Promise<Record<string, unknown>[]> {
  const upstream = createUpstream({
    baseUrl: serviceRoot, auth, requestsPerSecond: Number.POSITIVE_INFINITY, timeoutMs: 30_000, maxResponseBytes: 64 * 1024 * 1024,
    retry: { attempts: 0, firstWaitMs: 0, maxWaitMs: 0 },
  });
  try {
    return (await walk(upstream, query, 1000)).flatMap((p) => p.records.map((r) => ({ ...r })));
  } finally {
    await upstream.close();
  }
}
