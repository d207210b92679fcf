/**
 * A webhook consumer's endpoint for tests: a real node:http server that records every POST (headers, parsed
 * body, when it came and when it was answered) and answers as the test says, by default 200. It also
 * notes POSTs in flight at once, which a single subscription must never have.
 */
import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedPost {
  readonly headers: IncomingHttpHeaders;
  readonly path: string;
  readonly body: any;
  /** The status it was answered with (undefined: never answered, the sender gave up). */
  status?: number;
}

/** How to answer one POST: a status and headers, after `delayMs`; `hang` never answers. */
export interface Answer {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly delayMs?: number;
  readonly hang?: boolean;
}

export class WebhookReceiver {
  readonly posts: ReceivedPost[] = [];
  /** The most POSTs that were in flight at once. */
  maxInFlight = 0;
  private inFlight = 0;
  private readonly hung = new Set<ServerResponse>();
  /** Decides each answer; the default takes everything. */
  answer: (post: ReceivedPost) => Answer = () => ({});

  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const receiver = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => receiver.take(req.headers, req.url ?? '', Buffer.concat(chunks).toString('utf8'), res));
    });
    return receiver;
  }

  /** The events of the POSTs answered with a 2xx, in the order they came. */
  acknowledged(): any[] {
    return this.posts.filter((p) => p.status !== undefined && p.status < 300).flatMap((p) => p.body.value);
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private take(headers: IncomingHttpHeaders, path: string, text: string, res: ServerResponse): void {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    const post: ReceivedPost = { headers, path, body };
    this.posts.push(post);
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    const a = this.answer(post);
    const finish = () => {
      this.inFlight--;
      if (res.destroyed) return;
      post.status = a.status ?? 200;
      res.writeHead(post.status, { 'Content-Type': 'application/json', ...a.headers });
      res.end('{}');
    };
    if (a.hang) {
      this.hung.add(res);
      res.on('close', () => { this.inFlight--; this.hung.delete(res); });
      return;
    }
    if (a.delayMs) setTimeout(finish, a.delayMs);
    else finish();
  }
}
