/**
 * Response compression (the `compression` package): gzip or brotli as the client's Accept-Encoding prefers
 * (brotli first when both are equally welcome), for bodies of 1 KiB and more. It sits inside the request log,
 * which so counts the bytes that go out. Streamed pages stay streamed: BodyWriter flushes the compressor at the
 * end of every batch (response.ts), and the compressor passes backpressure on (a full socket pauses it, and a
 * paused compressor makes writes wait), so WRITE_STALL_TIMEOUT_MS still cuts a reader that stops.
 * A HEAD response is not compressed; its Content-Length is the identity body's (wholeBodyLength). A gzip body
 * stitched from kept runs (http/odata/stitched-responses.ts) comes with its Content-Encoding set, and the
 * middleware passes it on as it is (adding Vary).
 */
import { constants } from 'node:zlib';
import type { IncomingMessage } from 'node:http';
import compression from 'compression';
import vary from 'vary';
import type { Middleware } from './pipeline';

/** Below this, a body is sent as it is: the header and framing would eat what compressing saves. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;
/**
 * zlib's default level for gzip; brotli's quality 4, which compresses better than gzip 6 at about its speed
 * (brotli's default, 11, costs tens of times more CPU). docs/benchmarks.md has the measured cost.
 */
const GZIP_LEVEL = 6;
const BROTLI_QUALITY = 4;

/** A coding the compressor may choose; a request naming none of them is answered as it is. */
const CODINGS = /\b(?:gzip|br|deflate)\b|\*/i;

/**
 * `before`: what must wrap the compressor (the ETag's coding hook, caching.ts). A request whose Accept-Encoding
 * names no coding is never compressed, so it skips both and their hooks on every header and body write: a
 * small answer such as a key fetch spent about a tenth of its CPU in them (docs/benchmarks.md). Its response
 * still says that it varies by Accept-Encoding, as every compressible one does, for caches between.
 */
export function compressResponses(before: Middleware): Middleware {
  // The package's types name Express's request and response; it uses only node's own (as it does under Connect).
  const compress = compression({
    threshold: COMPRESSION_THRESHOLD_BYTES,
    level: GZIP_LEVEL,
    brotli: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
  }) as unknown as Middleware;
  return (req, res, next) => {
    if (acceptsCoding(req)) return before(req, res, (e?: unknown) => (e ? next(e) : compress(req, res, next)));
    // vary parses and merges the header's fields; when nothing has set it yet, there is nothing to merge.
    if (res.hasHeader('Vary')) vary(res, 'Accept-Encoding');
    else res.setHeader('Vary', 'Accept-Encoding');
    next();
  };
}

function acceptsCoding(req: IncomingMessage): boolean {
  const accepted = req.headers['accept-encoding'];
  return accepted !== undefined && CODINGS.test(accepted);
}

/**
 * Gives a body sent whole its Content-Length: the compression middleware writes the headers before it hands the
 * body on, so Node can no longer add it (an uncompressed answer would go out chunked), and Node leaves it out for
 * HEAD. Inside compression, which removes it again when it compresses. A GET that accepts no coding never meets
 * the compressor, and Node gives its whole body the length itself.
 */
export function wholeBodyLength(): Middleware {
  return (req, res, next) => {
    if (req.method !== 'HEAD' && !acceptsCoding(req)) return next();
    const end = res.end;
    res.end = function (this: typeof res, chunk?: unknown, ...rest: unknown[]) {
      if (!res.headersSent && !res.hasHeader('Content-Length') && (typeof chunk === 'string' || chunk instanceof Uint8Array)) {
        res.setHeader('Content-Length', typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length);
      }
      return (end as (...a: unknown[]) => typeof res).call(this, chunk, ...rest);
    } as typeof res.end;
    next();
  };
}
