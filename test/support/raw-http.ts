/**
 * HTTP as it is on the wire (node:http, which neither asks for nor decodes compression, unlike fetch): the
 * status, the headers and the body's bytes as sent, and the body decoded by its Content-Encoding.
 */
import { request, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { TEST_TOKEN } from './http';

export interface RawResult {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body's bytes as they came. */
  readonly body: Buffer;
}

/** A request with the test token unless `headers` has an Authorization ('' sends none); no Accept-Encoding unless given. */
export function rawRequest(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: withToken(headers) }, (res) => {
      collect(res).then((body) => resolve({ status: res.statusCode!, headers: res.headers, body }), reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * GET whose answer is read as it comes: `onFirst` runs when the first body bytes arrive, before the rest is
 * read, and the result waits for what it returns.
 */
export function rawStreamed(url: string, headers: Record<string, string>, onFirst: () => Promise<void>): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: withToken(headers) }, (res) => {
      const chunks: Buffer[] = [];
      let first: Promise<void> | undefined;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        first ??= onFirst();
      });
      res.on('error', reject);
      res.on('end', () => {
        (first ?? Promise.resolve()).then(() => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }), reject);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The body decoded by its Content-Encoding (gzip, br, or none). */
export function decoded(r: RawResult): string {
  const coding = r.headers['content-encoding'];
  const bytes = coding === 'gzip' ? gunzipSync(r.body) : coding === 'br' ? brotliDecompressSync(r.body) : r.body;
  if (coding !== undefined && coding !== 'gzip' && coding !== 'br') throw new Error(`unexpected Content-Encoding ${coding}`);
  return bytes.toString('utf8');
}

function withToken(headers: Record<string, string>): Record<string, string> {
  const auth = Object.keys(headers).find((h) => h.toLowerCase() === 'authorization');
  if (auth === undefined) return { ...headers, Authorization: `Bearer ${TEST_TOKEN}` };
  return headers[auth] === '' ? Object.fromEntries(Object.entries(headers).filter(([k]) => k !== auth)) : headers;
}

function collect(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
  });
}
