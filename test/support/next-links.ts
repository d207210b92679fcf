/**
 * Following @odata.nextLink the way spec §4 "Paging" tells a client to: GET the first URL, then GET each
 * nextLink exactly as the service sent it, until a response has none. The one walker of the tests. Every page
 * must be a 200 JSON collection; anything else fails loudly with the URL, unless `endAtError` asks for the
 * failing page back (tests that judge the answers themselves).
 */
import { HttpResult, request, TEST_TOKEN } from './http';

/** A record as JSON. */
export type Rec = Record<string, any>;

export interface WalkOptions {
  /** Request headers sent with every page (e.g. Prefer: odata.maxpagesize=N, which a client repeats on each request). */
  headers?: Record<string, string>;
  /** The bearer token sent with every page: the test token unless given (an Authorization in `headers` wins). */
  token?: string;
  /** A runaway guard: a walk longer than this fails. */
  maxPages?: number;
  /** A page that is not a 200 collection ends the walk, as its last page, instead of failing it. */
  endAtError?: boolean;
  /** Called after each page is received and before the next is asked for (tests use it to change data between pages). */
  between?: (pageIndex: number, page: HttpResult) => Promise<void>;
  /** Rewrites a nextLink before it is fetched (only the cross-instance test uses it, to switch servers). */
  rewrite?: (nextLink: string, pageIndex: number) => string;
}

export interface Walk {
  /** Each page's response, in order. */
  pages: HttpResult[];
  /** The URLs fetched, in order (the first URL, then each nextLink as sent by the service). */
  urls: string[];
  /** The records of every page, concatenated. */
  records: Rec[];
}

export class PagingError extends Error {
  /** The page that was not a 200 collection (when there was an answer at all), and the URL that answered it. */
  constructor(message: string, readonly page?: HttpResult, readonly url?: string) {
    super(message);
  }
}

export async function walkPages(firstUrl: string, options: WalkOptions = {}): Promise<Walk> {
  const maxPages = options.maxPages ?? 100_000;
  const headers = options.headers ?? {};
  const hasAuthorization = Object.keys(headers).some((h) => h.toLowerCase() === 'authorization');
  const token = hasAuthorization ? undefined : options.token ?? TEST_TOKEN;
  const walk: Walk = { pages: [], urls: [], records: [] };
  let url: string | undefined = firstUrl;
  while (url !== undefined) {
    if (walk.pages.length >= maxPages) throw new PagingError(`more than ${maxPages} pages from ${firstUrl}`);
    const page = await request(url, { headers, token });
    walk.urls.push(url);
    walk.pages.push(page);
    const failure = page.status !== 200 ? `answered ${page.status}` : !Array.isArray(page.json?.value) ? 'has no value array' : undefined;
    if (failure !== undefined) {
      if (options.endAtError) return walk;
      throw new PagingError(`GET ${url} ${failure}: ${page.text.slice(0, 400)}`, page, url);
    }
    walk.records.push(...page.json.value);
    const next: unknown = page.json['@odata.nextLink'];
    if (next !== undefined && typeof next !== 'string') throw new PagingError(`GET ${url}: @odata.nextLink is not a string`);
    if (options.between && next !== undefined) await options.between(walk.pages.length - 1, page);
    url = next === undefined ? undefined : options.rewrite ? options.rewrite(next, walk.pages.length) : next;
  }
  return walk;
}

/** An answer that says "not now, later" (503 with Retry-After): a client following the spec retries, elsewhere or after the wait. */
export function refusedForNow(r: { readonly status: number; readonly headers: Headers }): boolean {
  return r.status === 503 && r.headers.get('retry-after') !== null;
}
