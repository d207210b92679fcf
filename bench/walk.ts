/**
 * The replication client of the benchmark: follows `@odata.nextLink` from a first URL until a page has none,
 * exactly as a replicating client does, and is the same code for the product and the baseline (whose walk
 * endpoint answers in the same shape: `{"value":[…],"@odata.nextLink":"…"}`).
 *
 * Pipelined like a client that wants its data fast: the next link is read from the end of the page (it is
 * the body's last member), the next request goes out, and only then is the page read.
 *
 * Pages are not JSON.parse'd: on this machine parsing a 5 MB page of 1000 listings takes 50–120 ms, longer
 * than the server needs to produce it, and the walk would measure the client. The client instead takes each
 * record's key from its `"<keyField>":"…"` member (records are flat objects, the key is a string member of
 * each, and in JSON text that exact sequence cannot occur inside a string value, whose quotes are escaped)
 * and hashes the keys in order, so that walks can be compared for the same keys, order and count.
 * `parse: true` also parses every page in full and checks the scan against it (the deep-page capture walk does).
 */
import { createHash } from 'node:crypto';
import * as http from 'node:http';

export interface WalkOptions {
  /** Headers sent with every request (e.g. `Prefer: odata.maxpagesize=1000`). */
  headers?: Record<string, string>;
  /** Field naming each record's key. */
  keyField: string;
  /** Stop once at least this many records have been read (the position for a deep page); default: walk to the end. */
  stopAfter?: number;
  /** Keep every key (not only their hash and count). */
  keepKeys?: boolean;
  /** JSON.parse every page and check that the scanned keys and nextLink are the parsed page's. */
  parse?: boolean;
}

export interface WalkResult {
  records: number;
  requests: number;
  bytes: number;
  seconds: number;
  /** sha256 of the keys in order, one per line. */
  keysHash: string;
  keys?: string[];
  /** The nextLink of the last page read ('' when the walk reached the end). */
  lastNextLink: string;
}

/** How a page's nextLink member begins: the body's last member, read from the tail. */
export const NEXT_LINK_MEMBER = ',"@odata.nextLink":';

interface Response {
  status: number;
  body: string;
  bytes: number;
}

function getText(agent: http.Agent, url: URL, headers: Record<string, string>): Promise<Response> {
  return new Promise((resolveGet, rejectGet) => {
    const req = http.get(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const all = Buffer.concat(chunks);
        resolveGet({ status: res.statusCode ?? 0, body: all.toString('utf8'), bytes: all.length });
      });
      res.on('error', rejectGet);
    });
    req.on('error', rejectGet);
  });
}

/** The page's nextLink, read from its tail without parsing the page; undefined on the last page. */
function tailLink(body: string): string | undefined {
  const i = body.lastIndexOf(NEXT_LINK_MEMBER);
  if (i < 0 || i < body.lastIndexOf(']')) return undefined;
  return JSON.parse(body.slice(i + NEXT_LINK_MEMBER.length, body.lastIndexOf('}'))) as string;
}

const yieldToIo = () => new Promise<void>((r) => setImmediate(r));

/** The keys of the page's records, in order, from their `"<field>":"…"` members within `value`. */
function scanKeys(body: string, field: string, end: number): string[] {
  const member = `"${field}":"`;
  const keys: string[] = [];
  let i = body.indexOf('"value":[');
  if (i < 0) throw new Error(`a page without "value": ${body.slice(0, 200)}`);
  for (;;) {
    i = body.indexOf(member, i);
    if (i < 0 || i > end) break;
    const from = i + member.length - 1;
    let j = from + 1;
    while (body.charCodeAt(j) !== 34 /* " */) j += body.charCodeAt(j) === 92 /* \ */ ? 2 : 1;
    keys.push(JSON.parse(body.slice(from, j + 1)) as string);
    i = j;
  }
  return keys;
}

/** Walks from `first` (an absolute URL) through every nextLink. */
export async function walk(first: string, o: WalkOptions): Promise<WalkResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const headers = o.headers ?? {};
  const hash = createHash('sha256');
  const keys: string[] | undefined = o.keepKeys ? [] : undefined;
  let records = 0;
  let requests = 0;
  let bytes = 0;
  let lastNextLink = '';
  const started = process.hrtime.bigint();
  try {
    let url: URL | undefined = new URL(first);
    let pending: Promise<Response> | undefined = getText(agent, url, headers);
    while (pending) {
      const { status, body, bytes: size } = await pending;
      requests++;
      bytes += size;
      if (status !== 200) throw new Error(`GET ${url!.pathname}${url!.search.slice(0, 120)}: status ${status}\n${body.slice(0, 500)}`);
      const next = tailLink(body);
      const stopping = o.stopAfter !== undefined;
      // Out goes the next request (unless this walk stops at a position), then this page is read.
      const nextUrl: URL | undefined = next && !stopping ? new URL(next, url) : undefined;
      pending = nextUrl ? getText(agent, nextUrl, headers) : undefined;
      if (pending) await yieldToIo();
      const pageKeys = scanKeys(body, o.keyField, next ? body.lastIndexOf(NEXT_LINK_MEMBER) : body.length);
      if (o.parse) {
        const page = JSON.parse(body) as { value: Record<string, unknown>[]; '@odata.nextLink'?: string };
        if (page['@odata.nextLink'] !== next) throw new Error(`nextLink read from the page's end (${next}) is not the page's (${page['@odata.nextLink']})`);
        const parsed = page.value.map((r) => String(r[o.keyField]));
        if (parsed.join('\n') !== pageKeys.join('\n')) throw new Error(`the keys scanned from a page are not its records' keys (${url!.pathname}${url!.search.slice(0, 120)})`);
      }
      for (const k of pageKeys) {
        hash.update(k).update('\n');
        keys?.push(k);
      }
      records += pageKeys.length;
      lastNextLink = next ?? '';
      if (stopping) {
        if (records >= o.stopAfter! || !next) break;
        url = new URL(next, url);
        pending = getText(agent, url, headers);
        continue;
      }
      url = nextUrl;
    }
  } finally {
    agent.destroy();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { records, requests, bytes, seconds, keysHash: hash.digest('hex'), keys, lastNextLink };
}
