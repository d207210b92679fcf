/**
 * `$skiptoken`: the position after the last record of a page, as that record's sort values (ending with
 * its key), never an offset. Signed with HMAC-SHA256 under the server secret, and bound to the query it
 * came from by a digest of that query's options, so a tampered token or one moved to another query is a
 * 400. Stateless: any instance holding the secret can serve the next page.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../http/odata-error';

export interface PagePosition {
  /** Sort values of the last record returned, in the order's column order. */
  readonly last: readonly unknown[];
  /** Records returned so far, for $top (which caps the total). */
  readonly returned: number;
}

const VERSION = 1;

/** What a token is bound to: the set and every option that shapes the result, as the client wrote them. */
export function queryDigest(setName: string, options: Readonly<Record<string, string | undefined>>): string {
  const parts = Object.entries(options)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  return createHash('sha256').update(`${setName}\n${parts.join('\n')}`).digest('base64url').slice(0, 22);
}

export class SkipTokens {
  constructor(private readonly secret: Buffer) {}

  encode(position: PagePosition, digest: string): string {
    const payload = Buffer.from(JSON.stringify({ v: VERSION, q: digest, l: position.last, n: position.returned })).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  decode(token: string, digest: string): PagePosition {
    const invalid = (why: string) => badRequest(`$skiptoken ${why}; follow @odata.nextLink exactly as the service sent it`, '$skiptoken');
    const dot = token.indexOf('.');
    if (dot < 1 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) throw invalid('is not one this service issued');
    const payload = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.sign(payload), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid('has been altered or was not issued by this service');
    let body: { v?: unknown; q?: unknown; l?: unknown; n?: unknown };
    try {
      body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid('is not one this service issued');
    }
    if (body.v !== VERSION || !Array.isArray(body.l) || typeof body.n !== 'number') throw invalid('is from another version of this service');
    if (body.q !== digest) throw invalid('belongs to a different query (its $filter, $orderby, $select or $top differ)');
    return { last: body.l, returned: body.n };
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url');
  }
}
