/** Page size from `Prefer: odata.maxpagesize` (capped by the service maximum), and the nextLink URL. */
import type { IncomingMessage } from 'node:http';

const MAX_PAGE_SIZE_PREFERENCE = /(?:^|[,;\s])(?:odata\.)?maxpagesize\s*=\s*"?(\d{1,9})"?/i;

export interface PageSize {
  readonly size: number;
  /** Value for Preference-Applied when the client asked for a page size. */
  readonly applied?: string;
}

export function pageSize(req: IncomingMessage, defaultSize: number, maxSize: number): PageSize {
  const prefer = req.headers.prefer;
  const m = typeof prefer === 'string' ? MAX_PAGE_SIZE_PREFERENCE.exec(prefer) : null;
  if (!m) return { size: Math.min(defaultSize, maxSize) };
  const size = Math.max(1, Math.min(Number(m[1]), maxSize));
  return { size, applied: `odata.maxpagesize=${size}` };
}

/**
 * The request's own URL (`path` from the service root, `search` its query as the client encoded it) with
 * `$skiptoken` replaced: every other option is repeated exactly as the client encoded it, so following the link
 * asks the same query for the next page.
 */
export function nextLink(serviceRoot: string, path: string, search: string, skiptoken: string): string {
  const kept = search.split('&').filter((part) => {
    if (!part) return false;
    const name = safeDecode(part.split('=')[0]).toLowerCase();
    return name !== '$skiptoken' && name !== 'skiptoken';
  });
  kept.push(`$skiptoken=${skiptoken}`);
  return `${serviceRoot}${path}?${kept.join('&')}`;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}
