/**
 * Caching headers. Data is private to its client and may change at any moment: `private, no-cache` (a client
 * may keep it, and must ask again before using it). `$metadata` and an entity fetched by key carry a strong
 * ETag, the hash of the representation the client is sent (a licence changes both, so it is per licence), and
 * answer `If-None-Match` with 304 Not Modified. A compressed response's tag names its coding (`"…-br"`), as a
 * strong tag must differ between codings; If-None-Match matches with or without it.
 *
 * A 304 to a key fetch is still a transaction (class A): the record was read under the client's licence to
 * know it had not changed, as spec §8 counts a fetch by key whatever its answer carries.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware } from './pipeline';
import { LRUCache } from 'lru-cache';
import onHeaders from 'on-headers';
import { sha256 } from '../foundation/digest';

export const DATA_CACHE_CONTROL = 'private, no-cache';

export function entityTag(body: string | Buffer): string {
  return `"${sha256(body).slice(0, 32)}"`;
}

/** The tags of metadata documents, each hashed once per document text (a view's text lives as long as the view). */
export class MetadataTags {
  private readonly tags = new LRUCache<string, string>({ max: 64 });

  of(document: string): string {
    let tag = this.tags.get(document);
    if (tag === undefined) this.tags.set(document, (tag = entityTag(document)));
    return tag;
  }
}

/**
 * Sets the ETag and Cache-Control of a response about to be sent; when the client's If-None-Match names this
 * tag (weak comparison, as RFC 9110 §13.1.2 asks, with or without a coding suffix), answers 304 and returns true.
 */
export function notModified(req: IncomingMessage, res: ServerResponse, tag: string): boolean {
  res.setHeader('ETag', tag);
  if (!res.hasHeader('Cache-Control')) res.setHeader('Cache-Control', DATA_CACHE_CONTROL);
  const given = req.headers['if-none-match'];
  if (!given || !matches(given, tag)) return false;
  res.statusCode = 304;
  res.removeHeader('Content-Type');
  res.end();
  return true;
}

function matches(header: string, tag: string): boolean {
  if (header.trim() === '*') return true;
  const opaque = tag.slice(1, -1);
  return header.split(',').some((t) => {
    const m = /^\s*(?:W\/)?"([^"]*)"\s*$/.exec(t);
    return m !== null && m[1].replace(/-(?:gzip|br|deflate)$/, '') === opaque;
  });
}

/**
 * Data answers are private and revalidated; and a tag set on a response that ends up compressed gets its coding
 * appended. Mounted before the compression middleware, so that its header hook runs after compression's.
 */
export function cachingHeaders(): Middleware {
  return (_req, res, next) => {
    onHeaders(res, () => {
      const coding = res.getHeader('Content-Encoding');
      const tag = res.getHeader('ETag');
      if (typeof coding === 'string' && typeof tag === 'string' && tag.endsWith('"')) res.setHeader('ETag', `${tag.slice(0, -1)}-${coding}"`);
    });
    next();
  };
}
