/**
 * An HTTP proxy in front of a real server that answers with scripted faults, as upstream feeds do: 429 with
 * Retry-After, 503, a body dribbled slowly, a connection dropped mid-body, a nextLink that expires, a page cut
 * mid-JSON, an HTML error page with 200, a page without `value`, a record without its key, an oversized body.
 * It asks the server for plain bodies so that it can read and change them, and compresses what it serves itself
 * in the encoding set (gzip unless told) when the client accepts it. nextLinks in bodies are rewritten to point back at the proxy.
 */
import { createServer, IncomingMessage, request as httpRequest, Server, ServerResponse } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';

export type Encoding = 'gzip' | 'deflate' | 'br';
const ENCODE: Readonly<Record<Encoding, (b: Buffer) => Buffer>> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

export type Fault =
  /** Answered by the proxy without asking the server. */
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string }
  /** The body in `chunkBytes` pieces every `everyMs`. */
  | { readonly kind: 'slow'; readonly chunkBytes: number; readonly everyMs: number }
  /** Headers and half the body, then the connection is destroyed. */
  | { readonly kind: 'drop' }
  /** A whole HTTP answer whose JSON stops halfway (Content-Length says so). */
  | { readonly kind: 'cut' }
  | { readonly kind: 'html' }
  | { readonly kind: 'no-value' }
  /** The first record of the page without its `key` field. */
  | { readonly kind: 'keyless'; readonly key: string }
  /** The page's nextLink moved to another origin. */
  | { readonly kind: 'elsewhere'; readonly origin: string }
  /** The body padded (with JSON whitespace) to at least `bytes`. */
  | { readonly kind: 'oversized'; readonly bytes: number };

export interface LinkExpiry {
  /** A nextLink is refused once it was used this many times already. */
  readonly afterUses?: number;
  /** A nextLink is refused once this long has passed since the proxy handed it out. */
  readonly afterMs?: number;
  readonly status: 400 | 410;
}

export interface Served {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly fault?: Fault['kind'] | 'link-expired';
  /** How the body was compressed, when it was. */
  readonly encoding?: Encoding;
}

interface Rule { readonly match: (url: string) => boolean; readonly fault: Fault; left: number }

export class FaultProxy {
  /** Every request answered, in order. */
  readonly served: Served[] = [];
  private server?: Server;
  private readonly queued: Fault[] = [];
  private readonly rules: Rule[] = [];
  private expiry?: LinkExpiry;
  /** nextLinks handed out (path and query): when first, and how often used since. */
  private readonly links = new Map<string, { issuedAt: number; uses: number }>();
  private readonly target: URL;
  origin = '';
  /** What bodies are compressed with, when the client accepts it. */
  encoding: Encoding = 'gzip';

  /** `target`: the server's service root, e.g. `http://127.0.0.1:4000/odata`. */
  constructor(target: string) {
    this.target = new URL(target);
  }

  /** The service root through the proxy. */
  get url(): string {
    return `${this.origin}${this.target.pathname}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => { this.handle(req, res).catch(() => res.destroy()); });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The next requests, one fault each in order (then requests pass again). */
  queue(...faults: Fault[]): this {
    this.queued.push(...faults);
    return this;
  }

  /** Requests whose path and query match get `fault`, `times` times. Rules come before the queue. */
  when(match: RegExp | ((url: string) => boolean), fault: Fault, times = Number.POSITIVE_INFINITY): this {
    const test = match instanceof RegExp ? (u: string) => match.test(u) : match;
    this.rules.push({ match: test, fault, left: times });
    return this;
  }

  expireLinks(expiry: LinkExpiry | undefined): this {
    this.expiry = expiry;
    return this;
  }

  /** Faults left queued, and rules left, removed. */
  clear(): void {
    this.queued.length = 0;
    this.rules.length = 0;
    this.expiry = undefined;
  }

  count(kind: Served['fault']): number {
    return this.served.filter((s) => s.fault === kind).length;
  }

  private nextFault(url: string): Fault | undefined {
    const rule = this.rules.find((r) => r.left > 0 && r.match(url));
    if (rule) {
      rule.left--;
      return rule.fault;
    }
    return this.queued.shift();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const record = (status: number, fault?: Served['fault'], encoding?: Encoding) => this.served.push({ method: req.method ?? 'GET', url, status, ...(fault ? { fault } : {}), ...(encoding ? { encoding } : {}) });
    const requestBody = await readAll(req);
    const expired = this.expired(url);
    if (expired) {
      record(expired, 'link-expired');
      return answer(res, expired, { error: { code: 'link-expired', message: 'this nextLink has expired', target: null, details: [] } });
    }
    const fault = this.nextFault(url);
    if (fault?.kind === 'status') {
      record(fault.status, 'status');
      const headers: Record<string, string> = fault.retryAfter === undefined ? {} : { 'Retry-After': fault.retryAfter };
      return answer(res, fault.status, { error: { code: String(fault.status), message: 'scripted by the fault proxy', target: null, details: [] } }, headers);
    }
    const upstream = await this.forward(req, requestBody);
    let body = this.pointLinksHere(upstream.body);
    this.noteLinks(body);
    if (fault) body = reshape(body, fault);
    const headers: Record<string, string> = { 'Content-Type': fault?.kind === 'html' ? 'text/html' : upstream.contentType };
    if (upstream.retryAfter) headers['Retry-After'] = upstream.retryAfter;
    const accepted = String(req.headers['accept-encoding'] ?? '').split(',').map((e) => e.trim().split(';')[0]);
    const encoding = accepted.includes(this.encoding) && fault?.kind !== 'cut' ? this.encoding : undefined;
    if (encoding) {
      body = ENCODE[encoding](body);
      headers['Content-Encoding'] = encoding;
    }
    record(upstream.status, fault?.kind, encoding);
    await deliver(res, upstream.status, headers, body, fault);
  }

  /** The status a nextLink is refused with, when it has expired. */
  private expired(url: string): number | undefined {
    const link = this.links.get(url);
    if (!link || !this.expiry) {
      if (link) link.uses++;
      return undefined;
    }
    const { afterUses, afterMs, status } = this.expiry;
    const used = afterUses !== undefined && link.uses >= afterUses;
    const old = afterMs !== undefined && Date.now() - link.issuedAt >= afterMs;
    link.uses++;
    return used || old ? status : undefined;
  }

  private noteLinks(body: Buffer): void {
    const m = /"@(?:odata\.)?nextLink"\s*:\s*"([^"]+)"/.exec(body.toString('utf8'));
    if (!m) return;
    const link = new URL(m[1], this.url);
    const key = `${link.pathname}${link.search}`;
    if (!this.links.has(key)) this.links.set(key, { issuedAt: Date.now(), uses: 0 });
  }

  private pointLinksHere(body: Buffer): Buffer {
    const text = body.toString('utf8');
    return text.includes(this.target.origin) ? Buffer.from(text.split(this.target.origin).join(this.origin)) : body;
  }

  private forward(req: IncomingMessage, body: Buffer): Promise<{ status: number; contentType: string; retryAfter?: string; body: Buffer }> {
    const headers = { ...req.headers, host: this.target.host, 'accept-encoding': 'identity' };
    delete headers.connection;
    return new Promise((resolve, reject) => {
      const out = httpRequest(new URL(req.url ?? '/', this.target.origin), { method: req.method, headers }, (res) => {
        readAll(res).then((b) => resolve({
          status: res.statusCode ?? 502,
          contentType: String(res.headers['content-type'] ?? 'application/json'),
          ...(res.headers['retry-after'] ? { retryAfter: String(res.headers['retry-after']) } : {}),
          body: b,
        }), reject);
      });
      out.on('error', reject);
      out.end(body);
    });
  }
}

function reshape(body: Buffer, fault: Fault): Buffer {
  switch (fault.kind) {
    case 'cut': return body.subarray(0, Math.floor(body.length / 2));
    case 'html': return Buffer.from('<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>');
    case 'no-value': {
      const page = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      delete page.value;
      return Buffer.from(JSON.stringify(page));
    }
    case 'keyless': {
      const page = JSON.parse(body.toString('utf8')) as { value?: Record<string, unknown>[] };
      if (page.value?.[0]) delete page.value[0][fault.key];
      return Buffer.from(JSON.stringify(page));
    }
    case 'oversized': {
      const text = body.toString('utf8');
      const pad = Math.max(0, fault.bytes - body.length);
      return Buffer.from(`${text.slice(0, 1)}${' '.repeat(pad)}${text.slice(1)}`);
    }
    case 'elsewhere': {
      const page = JSON.parse(body.toString('utf8')) as Record<string, string>;
      for (const name of ['@odata.nextLink', '@nextLink']) if (page[name]) page[name] = `${fault.origin}${new URL(page[name]).pathname}${new URL(page[name]).search}`;
      return Buffer.from(JSON.stringify(page));
    }
    default: return body;
  }
}

async function deliver(res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer, fault?: Fault): Promise<void> {
  res.writeHead(status, { ...headers, 'Content-Length': String(body.length) });
  if (fault?.kind === 'drop') {
    res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy());
    return;
  }
  if (fault?.kind !== 'slow') {
    res.end(body);
    return;
  }
  for (let at = 0; at < body.length && !res.destroyed; at += fault.chunkBytes) {
    res.write(body.subarray(at, at + fault.chunkBytes));
    await new Promise((resolve) => setTimeout(resolve, fault.everyMs));
  }
  res.end();
}

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}
