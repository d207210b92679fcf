/**
 * One HTTP exchange with an upstream: node's own http/https on a kept-alive agent, the whole response under one
 * deadline, the body decoded (gzip, deflate, br) and counted as it streams so that an oversized one is abandoned
 * before it is held. Every failure is an UpstreamFault; the status is not judged here.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { UpstreamFault } from './upstream';

export interface Exchange {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface ExchangeRequest {
  readonly url: URL;
  readonly method?: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

/** The kept-alive connections of one upstream, plain and TLS. */
export class Agents {
  private readonly plain = new http.Agent({ keepAlive: true, maxSockets: 4 });
  private readonly tls = new https.Agent({ keepAlive: true, maxSockets: 4 });

  for(url: URL): http.Agent {
    return url.protocol === 'https:' ? this.tls : this.plain;
  }

  close(): void {
    this.plain.destroy();
    this.tls.destroy();
  }
}

export function exchange(agents: Agents, r: ExchangeRequest): Promise<Exchange> {
  const where = `${r.method ?? 'GET'} ${r.url.origin}${r.url.pathname}`;
  return new Promise<Exchange>((resolve, reject) => {
    let settled = false;
    const settle = (fault: UpstreamFault | undefined, result?: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (fault) {
        request.destroy();
        reject(fault);
      } else resolve(result!);
    };
    const send = r.url.protocol === 'https:' ? https.request : http.request;
    const request = send(r.url, { method: r.method ?? 'GET', headers: r.headers, agent: agents.for(r.url) }, (res) => {
      receive(res, r.maxBytes, where).then((body) => settle(undefined, { status: res.statusCode ?? 0, headers: res.headers, body }), (f: UpstreamFault) => settle(f));
    });
    const timer = setTimeout(() => settle(new UpstreamFault('timeout', `${where}: no whole response within ${r.timeoutMs} ms`)), r.timeoutMs);
    request.on('error', (e: NodeJS.ErrnoException) => settle(new UpstreamFault('connection', `${where}: ${e.code ?? e.message}`)));
    request.end(r.body);
  });
}

/** The decoded body, or a fault: the connection dropped, the encoding is broken, or it grew past `maxBytes`. */
function receive(res: http.IncomingMessage, maxBytes: number, where: string): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const declared = Number(res.headers['content-length']);
    if (!res.headers['content-encoding'] && declared > maxBytes) {
      res.destroy();
      return reject(new UpstreamFault('too-large', `${where}: the body is ${declared} bytes, past ${maxBytes}`, res.statusCode));
    }
    const decoded = decoder(res);
    const chunks: Buffer[] = [];
    let size = 0;
    let dropped = false;
    const stop = (fault: UpstreamFault) => {
      res.destroy();
      decoded.destroy();
      reject(fault);
    };
    res.on('aborted', () => { dropped = true; });
    res.on('error', () => { dropped = true; stop(new UpstreamFault('connection', `${where}: the connection dropped mid-body`, res.statusCode)); });
    decoded.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return stop(new UpstreamFault('too-large', `${where}: the body passed ${maxBytes} bytes`, res.statusCode));
      chunks.push(chunk);
    });
    decoded.on('error', (e) => stop(dropped
      ? new UpstreamFault('connection', `${where}: the connection dropped mid-body`, res.statusCode)
      : new UpstreamFault('malformed', `${where}: the ${res.headers['content-encoding']} body does not decode (${e.message})`, res.statusCode)));
    decoded.on('end', () => {
      // A body shorter than its Content-Length ends 'aborted' rather than 'error' on some node versions.
      if (dropped || !res.complete) return stop(new UpstreamFault('connection', `${where}: the connection dropped mid-body`, res.statusCode));
      resolve(Buffer.concat(chunks, size));
    });
  });
}

function decoder(res: http.IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const stage = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip()
    : encoding === 'deflate' ? createInflate()
      : encoding === 'br' ? createBrotliDecompress() : undefined;
  if (!stage) return res;
  res.on('data', (c: Buffer) => { if (!stage.write(c)) res.pause(); });
  stage.on('drain', () => res.resume());
  res.on('end', () => { if (res.complete) stage.end(); else stage.destroy(new Error('cut')); });
  return stage;
}
