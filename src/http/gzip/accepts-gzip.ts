/**
 * Whether a request's Accept-Encoding admits gzip (RFC 9110 §12.5.3): named with a q-value above 0, or, not named,
 * covered by `*` above 0. A client that also accepts br is answered with gzip where the body is stitched from
 * kept runs (gzip-stream.ts): the server may choose among the codings a client accepts, and a stitched gzip costs
 * a fraction of compressing brotli on every request. A client sends the same header with every request: each
 * header text is read once (a bounded few are kept).
 */
import type { IncomingMessage } from 'node:http';
import { LRUCache } from 'lru-cache';

const read = new LRUCache<string, boolean>({ max: 64 });

export function acceptsGzip(req: IncomingMessage): boolean {
  const header = req.headers['accept-encoding'];
  if (!header) return false;
  let admitted = read.get(header);
  if (admitted === undefined) read.set(header, (admitted = gzipQuality(header) > 0));
  return admitted;
}

function gzipQuality(header: string): number {
  let named: number | undefined;
  let any: number | undefined;
  for (const part of header.split(',')) {
    const [coding, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.map((p) => /^q\s*=\s*([0-9.]+)$/.exec(p)).find((m) => m !== null);
    const quality = q ? Number(q[1]) : 1;
    if (coding === 'gzip' || coding === 'x-gzip') named = Math.max(named ?? 0, quality);
    else if (coding === '*') any = quality;
  }
  return named ?? any ?? 0;
}
