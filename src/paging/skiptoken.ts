/**
 * `$skiptoken`: the position after the last record of a page, as that record's sort values (ending with
 * its key), never an offset. Sealed with AES-256-GCM under a key derived from the server secret: tampering
 * is detected (SkipTokenInvalid), and the values stay unreadable, since a sort value may be a field the client is not
 * licensed to see. Bound to the query it came from by a digest of that query's options, so a token moved
 * to another query is invalid too. Stateless: any instance holding the secret serves the next page.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { sha256 } from '../foundation/digest';
import { Errors } from '../errors/catalogue';
import type { BoundOrder } from '../query/bound';
import { positionProblem } from './page-position';

export interface PagePosition {
  /** Sort values of the last record returned, in the order's column order. */
  readonly last: readonly unknown[];
  /** Records returned so far, for $top (which caps the total). */
  readonly returned: number;
  /** The client's scope epoch when the walk began (scope-epoch.ts); a later one makes the position stale. */
  readonly epoch?: string;
}

const VERSION = 2;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What a token is bound to: the path and every option that shapes the result, as the client wrote them. */
export function queryDigest(path: string, options: Readonly<Record<string, string | undefined>>): string {
  const parts = Object.entries(options)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  return sha256(`${path}\n${parts.join('\n')}`).slice(0, 22);
}

export class SkipTokens {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    this.key = createHmac('sha256', secret).update('reso-server $skiptoken v2').digest();
  }

  encode(position: PagePosition, digest: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(digest));
    const body = Buffer.concat([cipher.update(JSON.stringify({ v: VERSION, l: position.last, n: position.returned, e: position.epoch }), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The position `token` holds, checked against `order` (the query's, ending with the key). */
  decode(token: string, digest: string, order: readonly BoundOrder[]): PagePosition {
    const invalid = Errors.SkipTokenInvalid;
    if (!/^[A-Za-z0-9_-]+$/.test(token)) throw invalid('is not one this service issued');
    const raw = Buffer.from(token, 'base64url');
    if (raw.length <= IV_BYTES + TAG_BYTES) throw invalid('is not one this service issued');
    let text: string;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      // The query digest is authenticated data: a token only opens for the query it was issued for.
      decipher.setAAD(Buffer.from(digest));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw invalid('was altered, was not issued by this service, or belongs to a different query (its path, $filter, $orderby, $select or $top differ)');
    }
    let body: { v?: unknown; l?: unknown; n?: unknown; e?: unknown } | null;
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw invalid('is not one this service issued');
    }
    if (body?.v !== VERSION || !Array.isArray(body.l)) throw invalid('is from another version of this service');
    const problem = positionProblem(order, body.l, body.n);
    if (problem) throw invalid(`${problem}; it is not one this service issued for this query`);
    return { last: body.l, returned: body.n as number, ...(typeof body.e === 'string' ? { epoch: body.e } : {}) };
  }
}
