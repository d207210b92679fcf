/**
 * A real server on a free port over a real database, and the one HTTP client the tests use.
 *
 * The client sends what it is told and nothing else: a token only when given (`get` gives the test token). By
 * default it goes through fetch, as the service's clients do (it asks for compression and decodes it, and keeps
 * connections alive). With `wire`, it goes through node:http on a connection of its own, closed after the answer
 * (so that connections spread over a cluster's workers), asks for nothing it was not told to (no Accept-Encoding)
 * and keeps the body's bytes as they came.
 */
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Config, configFromEnv } from '../../src/config/config';
import type { ServiceModel } from '../../src/model/service-model';
import { RunningServer, ServerOptions, startServer } from '../../src/process/server';

/** The static token every test server registers for its `demo` client; `get` sends it unless told otherwise. */
export const TEST_TOKEN = 'test-token-5f0c2a9e-b1d4-47c8-9e3a-6d2f0b8c1a7e';

/**
 * The product's defaults (as with an empty environment and DATABASE_URL set), a free port, no demo data, and
 * the given changes.
 */
export function testConfig(databaseUrl: string, overrides: Partial<Config> = {}): Config {
  return { ...configFromEnv({ DATABASE_URL: databaseUrl }), port: 0, seedListings: 0, demoToken: TEST_TOKEN, ...overrides };
}

/** `options.clock`: a clock the test moves by hand (support/manual-clock.ts) for token expiry and rate windows. */
export async function startTestServer(
  model: ServiceModel, databaseUrl: string, overrides: Partial<Config> = {}, options: ServerOptions = {},
): Promise<RunningServer> {
  return startServer(model, testConfig(databaseUrl, overrides), undefined, options);
}

export interface HttpResult {
  status: number;
  headers: Headers;
  /** The body's bytes: as they came over the wire with `wire`, as fetch decoded them otherwise. */
  bytes: Buffer;
  /** The body as text (decoded by its Content-Encoding). */
  text: string;
  /** Parsed JSON body, when the body is JSON. */
  json: any;
}

export interface Ask {
  method?: string;
  /** Bearer token to send; none when left out. */
  token?: string;
  /** The Authorization header as it is (wins over `token`). */
  authorization?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Over node:http on a connection of its own, the bytes as sent (see the file's comment). */
  wire?: boolean;
  /** With `wire`: runs when the first body bytes arrive, before the rest is read; the result waits for it. */
  onFirstBytes?: () => Promise<void>;
  /** With `wire`: runs once the request is sent, with the port the connection was made from. */
  onSent?: (localPort: number) => void;
  /** With `wire`: the address to connect from (another loopback address stands for another host). */
  localAddress?: string;
}

/** A request as asked: no token unless `token` or `authorization` gives one. */
export async function request(url: string, ask: Ask = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...(ask.headers ?? {}) };
  if (ask.authorization !== undefined) headers.Authorization = ask.authorization;
  else if (ask.token !== undefined) headers.Authorization = `Bearer ${ask.token}`;
  const method = ask.method ?? 'GET';
  if (ask.wire) return overTheWire(url, method, headers, ask);
  const res = await fetch(url, { method, headers, body: ask.body });
  return result(res.status, res.headers, Buffer.from(await res.arrayBuffer()));
}

/** GET with the test token, unless `headers` has an Authorization of its own ('' sends none). */
export async function get(url: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  const auth = Object.keys(headers).find((h) => h.toLowerCase() === 'authorization');
  if (auth === undefined) return request(url, { headers, token: TEST_TOKEN });
  return request(url, { headers: headers[auth] === '' ? omit(headers, auth) : headers });
}

/** Asserts an OData error body: {"error":{"code","message","details"}} and returns the error object. */
export function odataError(r: HttpResult): { code: string; message: string; target?: string; details: unknown[] } {
  const e = r.json?.error;
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || !Array.isArray(e.details)) {
    throw new Error(`expected an OData error body, got ${r.status} ${r.text.slice(0, 300)}`);
  }
  return e;
}

function overTheWire(url: string, method: string, headers: Record<string, string>, ask: Ask): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const sized = ask.body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(ask.body)) };
    const req = httpRequest(url, { method, headers: sized, agent: false, localAddress: ask.localAddress }, (res) => {
      const chunks: Buffer[] = [];
      let first: Promise<void> | undefined;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (ask.onFirstBytes) first ??= ask.onFirstBytes();
      });
      res.on('error', reject);
      res.on('end', () => {
        const sent = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) sent.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
        const done = () => resolve(result(res.statusCode!, sent, Buffer.concat(chunks), sent.get('content-encoding')));
        (first ?? Promise.resolve()).then(done, reject);
      });
    });
    req.on('error', reject);
    if (ask.onSent) req.on('finish', () => ask.onSent!(req.socket!.localPort!));
    req.end(ask.body);
  });
}

function result(status: number, headers: Headers, bytes: Buffer, coding: string | null = null): HttpResult {
  const text = new TextDecoder().decode(decode(bytes, coding));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers, bytes, text, json };
}

/** The bytes decoded by a Content-Encoding (gzip, br, or none). */
function decode(bytes: Buffer, coding: string | null): Buffer {
  if (coding === null || coding === 'identity' || bytes.length === 0) return bytes;
  if (coding === 'gzip') return gunzipSync(bytes);
  if (coding === 'br') return brotliDecompressSync(bytes);
  throw new Error(`unexpected Content-Encoding ${coding}`);
}

function omit(h: Record<string, string>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([k]) => k !== name));
}
