/**
 * What an upstream's answer means: its status judged (refused, rate-limited, a nextLink expired…) and a 2xx body
 * read as one whole OData collection page or as CSDL, or a fault that says why not.
 */
import type { Exchange } from './upstream-request';
import { UpstreamFault, UpstreamPage } from './upstream';
import { retryAfterMs } from '../foundation/retry-waits';

/** Throws the fault a non-2xx answer is. `nextLink`: the URL was a nextLink the upstream gave, not a query. */
export function judgeStatus(got: Exchange, where: string, nextLink: boolean, now: number): void {
  const { status } = got;
  if (status >= 200 && status < 300) return;
  const after = retryAfterMs(got.headers['retry-after'], now);
  if (status === 401 || status === 403) throw new UpstreamFault('credentials-refused', `${where}: the upstream refused the credentials (${status})`, status);
  if (status === 429) throw new UpstreamFault('rate-limited', `${where}: rate limited (429${after === undefined ? '' : `, retry after ${after} ms`})`, status, after);
  if (status >= 500) throw new UpstreamFault('server-error', `${where}: the upstream answered ${status}`, status, after);
  if (nextLink && status >= 400) throw new UpstreamFault('link-expired', `${where}: the upstream no longer honours this nextLink (${status})`, status);
  throw new UpstreamFault('refused', `${where}: the upstream refused the request (${status}${odataErrorCode(got.body)})`, status);
}

/** A 2xx body as one whole collection page: `value` an array of objects, the nextLink made absolute. */
export function readPage(got: Exchange, url: URL, where: string): UpstreamPage {
  const text = got.body.toString('utf8');
  if (/html/i.test(String(got.headers['content-type'] ?? '')) || /^\s*</.test(text)) {
    throw new UpstreamFault('not-odata', `${where}: a ${got.status} answer that is HTML, not an OData collection`, got.status);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new UpstreamFault('malformed', `${where}: the body is not whole JSON (${(e as Error).message.slice(0, 120)})`, got.status);
  }
  const body = (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {}) as Record<string, unknown>;
  const value = body.value;
  if (!Array.isArray(value)) throw new UpstreamFault('not-odata', `${where}: the JSON answer has no "value" array`, got.status);
  if (!value.every((r) => r !== null && typeof r === 'object' && !Array.isArray(r))) {
    throw new UpstreamFault('not-odata', `${where}: "value" holds something other than records`, got.status);
  }
  const next = body['@odata.nextLink'] ?? body['@nextLink'];
  const count = body['@odata.count'] ?? body['@count'];
  if (next !== undefined && typeof next !== 'string') throw new UpstreamFault('not-odata', `${where}: the nextLink is not a string`, got.status);
  return {
    records: value as Record<string, unknown>[],
    ...(next ? { nextLink: new URL(next, baseOf(body, url)).toString() } : {}),
    ...(typeof count === 'number' ? { count } : {}),
  };
}

/** OData JSON §4.6: a relative URL is relative to the object's context URL when it has one, else to the request's. */
function baseOf(body: Record<string, unknown>, url: URL): URL {
  const context = body['@odata.context'] ?? body['@context'];
  try {
    return typeof context === 'string' ? new URL(context, url) : url;
  } catch {
    return url;
  }
}

/** A 2xx body as CSDL XML. */
export function readMetadata(got: Exchange, where: string): string {
  const text = got.body.toString('utf8');
  if (!/<(\w+:)?Edmx[\s>]/.test(text)) throw new UpstreamFault('not-odata', `${where}: the answer is not a CSDL document`, got.status);
  return text;
}

/** The OData error code of a refusal, for the message; never its free text, which may echo the request. */
function odataErrorCode(body: Buffer): string {
  try {
    const code = (JSON.parse(body.toString('utf8')) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' && /^[\w.-]{1,60}$/.test(code) ? `: ${code}` : '';
  } catch {
    return '';
  }
}

/** A URL fit for a log: the values of query options that may carry a secret are masked. */
export function shownUrl(url: URL): string {
  const secret = [...url.searchParams.keys()].filter((name) => !name.startsWith('$') && /token|key|secret|password|signature|sig$/i.test(name));
  if (!secret.length) return url.toString();
  const shown = new URL(url.toString());
  for (const name of secret) shown.searchParams.set(name, '***');
  return shown.toString();
}
