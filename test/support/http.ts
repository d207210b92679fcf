/** A real server on a free port over a real database, and a small client for it. */
import { Config, configFromEnv } from '../../src/config';
import type { ServiceModel } from '../../src/model/service-model';
import { RunningServer, ServerOptions, startServer } from '../../src/server';

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
  text: string;
  /** Parsed JSON body, when the body is JSON. */
  json: any;
}

/** GET with the test token, unless `headers` has an Authorization of its own ('' sends none). */
export async function get(url: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  const auth = Object.keys(headers).find((h) => h.toLowerCase() === 'authorization');
  const sent = auth === undefined ? { ...headers, Authorization: `Bearer ${TEST_TOKEN}` } : headers[auth] === '' ? omit(headers, auth) : headers;
  return request(url, { headers: sent });
}

/** Any request, as it is sent; the body is read as text and parsed when it is JSON. */
export async function request(url: string, init: RequestInit = {}): Promise<HttpResult> {
  const res = await fetch(url, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Asserts an OData error body: {"error":{"code","message","details"}} and returns the error object. */
export function odataError(r: HttpResult): { code: string; message: string; target?: string; details: unknown[] } {
  const e = r.json?.error;
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || !Array.isArray(e.details)) {
    throw new Error(`expected an OData error body, got ${r.status} ${r.text.slice(0, 300)}`);
  }
  return e;
}

function omit(h: Record<string, string>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([k]) => k !== name));
}
