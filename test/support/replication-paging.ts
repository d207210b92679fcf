/**
 * The replication tests' paging helpers: the walker (support/next-links.ts, re-exported here for the files that
 * import it from this one) and how a client writes and sends a query.
 */
export { PagingError, Rec, Walk, walkPages, WalkOptions } from './next-links';

/** A string literal for $filter: single quotes doubled (OData ABNF). */
export function odataString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** The query string as the client actually sends it (fetch normalises the URL, e.g. ' becomes %27). */
export function sentQuery(url: string): string {
  return new URL(url).search.replace(/^\?/, '');
}
