/** Writing responses without rebuilding records: stored record texts are spliced into the body as they are. */
import type { ServerResponse } from 'node:http';
import { without } from '../../foundation/bench-without';
import { jsonContentType } from './json-format';
import type { RequestContext } from '../request-context';
import { isPieces, pushRecord, type RecordBytes } from './record-bytes';

export { SERVICE_ROOT } from '../request-context';
export type { RecordBytes } from './record-bytes';

/** A whole JSON body; with `stallMs`, a reader that stops taking it is disconnected after that long. */
export function sendJson(ctx: RequestContext, body: string | Buffer, stallMs?: number): void {
  ctx.res.setHeader('Content-Type', jsonContentType(ctx.format));
  endWatched(ctx.res, body, stallMs);
}

/** 204: the answer is that there is nothing (a navigation that leads nowhere, a null value). */
export function noContent(res: ServerResponse): void {
  res.statusCode = 204;
  res.end();
}

/** A text/plain answer (a count, a raw value). */
export function sendText(res: ServerResponse, text: string): void {
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(text);
}

const COMMA = Buffer.from(',');

/**
 * One entity as the bytes sent: the context annotation (if any) spliced in front of the record's fields. Its
 * ETag is hashed from these bytes and the socket sends them as they are.
 */
export function entityBody(context: string | undefined, bytes: RecordBytes): Buffer {
  const record = isPieces(bytes) ? Buffer.concat(bytes) : bytes;
  if (context === undefined) return record;
  const head = `{"@odata.context":${JSON.stringify(context)}${record.length > 2 ? ',' : '}'}`;
  return record.length > 2 ? Buffer.concat([Buffer.from(head, 'utf8'), record.subarray(1)]) : Buffer.from(head, 'utf8');
}

/**
 * A collection page as the pieces of its body, in order: its head, the records comma-separated, its tail. The
 * records are their bytes as read, never copied into one body (sendPieces hands them to the socket together).
 */
export function collectionBody(context: string | undefined, records: readonly RecordBytes[], extra: { count?: Count; nextLink?: string } = {}): Buffer[] {
  const pieces: Buffer[] = [Buffer.from(collectionHead(context, extra.count), 'utf8')];
  records.forEach((r, i) => {
    if (i > 0) pieces.push(COMMA);
    pushRecord(pieces, r);
  });
  pieces.push(Buffer.from(collectionTail(extra.nextLink), 'utf8'));
  return pieces;
}

/**
 * A JSON body given as pieces: its Content-Length their sum, the pieces written while the response is corked, so
 * the socket takes them (and the headers) in one vectored write. Joining them first would copy the whole body
 * once more (a page of 100 listings, 607 KB: about 8% of its CPU, docs/benchmarks.md).
 */
export function sendPieces(ctx: RequestContext, pieces: readonly Buffer[], stallMs?: number): void {
  const res = ctx.res;
  if (without('byte-pieces')) return sendJson(ctx, Buffer.concat(pieces), stallMs);
  res.setHeader('Content-Type', jsonContentType(ctx.format));
  res.setHeader('Content-Length', pieces.reduce((n, p) => n + p.length, 0));
  res.cork();
  for (let i = 0; i < pieces.length - 1; i++) res.write(pieces[i]);
  endWatched(res, pieces[pieces.length - 1], stallMs);
  res.uncork();
}

/** A count: a number, or a string to a client that asked for IEEE754Compatible (it is an Int64). */
export type Count = number | string;

/** A collection page up to the first record; the count is known before the records (it comes first). */
export function collectionHead(context: string | undefined, count?: Count): string {
  const annotations = [
    ...(context !== undefined ? [`"@odata.context":${JSON.stringify(context)}`] : []),
    ...(count !== undefined ? [`"@odata.count":${JSON.stringify(count)}`] : []),
  ];
  return `{${annotations.map((a) => `${a},`).join('')}"value":[`;
}

/** A collection page after its last record; the next link is known only once the page is read. */
export function collectionTail(nextLink?: string): string {
  return `]${nextLink ? `,"@odata.nextLink":${JSON.stringify(nextLink)}` : ''}}`;
}

/** The client closed the connection, or took nothing for the stall timeout, while its response was written. */
export class ReaderGone extends Error {
  constructor(readonly why: 'closed' | 'stalled') {
    super(`the reader ${why === 'closed' ? 'closed the connection' : 'stopped reading'} before the response's end`);
  }
}

/** From this many characters, a whole body is encoded to bytes before it is sent (endWatched). */
const ENCODE_ONCE_CHARS = 16 * 1024;

/**
 * Bytes per part of a streamed body, at most: a batch of 100 listings (about 600 KB) goes out as one part. Each
 * part is one chunk, one write and one wait for the socket; in parts of 64 KB a walk's page of 1000 listings
 * (6.2 MB) took about 100 of each, and the walk cost 10–20% more server CPU (docs/benchmarks.md). What a slow
 * reader holds in memory is the batches of its page and one part.
 */
const PART_BYTES = 1024 * 1024;

/**
 * A response body written in parts with backpressure: once the socket's buffer is full, the next part waits
 * until it drains, so memory holds at most the part in hand. A reader that takes nothing for `stallMs` is
 * disconnected (ReaderGone), which frees everything the response held.
 */
export class BodyWriter {
  /** The write waiting for 'drain', if any. */
  private waiting?: () => void;
  private listening = false;

  constructor(private readonly res: ServerResponse, private readonly stallMs: number) {}

  async write(chunk: string | Buffer): Promise<void> {
    const res = this.res;
    if (res.destroyed) throw new ReaderGone('closed');
    if (res.write(chunk)) return;
    await this.drained();
  }

  /** Pieces handed to the socket at once (one writev, no copy), then, as write(), held while the reader lags. */
  async writePieces(pieces: readonly Buffer[]): Promise<void> {
    const res = this.res;
    if (res.destroyed) throw new ReaderGone('closed');
    res.cork();
    let taken = true;
    for (const piece of pieces) taken = res.write(piece);
    res.uncork();
    if (!taken) await this.drained();
  }

  /** Waits for 'drain' after a write the socket did not take whole; a reader that closes or stalls meanwhile fails it. */
  private async drained(): Promise<void> {
    const res = this.res;
    if (res.destroyed) throw new ReaderGone('closed');
    if (!this.listening) {
      // One 'drain' listener for the response's life: with compression, 'drain' listeners go to the compressor,
      // where res.off cannot reach them, so adding and removing one per wait would pile them up.
      this.listening = true;
      res.on('drain', () => this.waiting?.());
    }
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: ReaderGone) => {
        stopWatch();
        this.waiting = undefined;
        res.off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const onClose = () => settle(new ReaderGone('closed'));
      const stopWatch = watchStall(res, this.stallMs, () => settle(new ReaderGone('stalled')));
      this.waiting = () => settle();
      res.on('close', onClose);
    });
  }

  /**
   * Records of a collection, comma-separated (`more`: after others already written), in parts of about
   * PART_BYTES: each part one Buffer the records are copied into, handed to the socket no faster than the reader
   * takes it.
   */
  async writeRecords(records: readonly RecordBytes[], more: boolean): Promise<void> {
    let part: Buffer[] = [];
    let size = 0;
    for (let i = 0; i < records.length; i++) {
      if (more || i > 0) part.push(COMMA);
      size += pushRecord(part, records[i]) + 1;
      if (size >= PART_BYTES) {
        await this.write(Buffer.concat(part));
        part = [];
        size = 0;
      }
    }
    if (part.length) await this.write(Buffer.concat(part));
    // A compressed body goes out as each batch ends, not when the compressor's buffer fills (http/compression.ts).
    (this.res as { flush?: () => void }).flush?.();
  }

  end(chunk: string | Buffer): void {
    endWatched(this.res, chunk, this.stallMs);
  }
}

/**
 * Ends a response; if its last part cannot all go out at once, the connection is watched until it has, and
 * cut if the reader stops taking it, so a client that never reads cannot keep a body in memory for ever.
 */
function endWatched(res: ServerResponse, chunk: string | Buffer, stallMs: number | undefined): void {
  // A large body is encoded once, here: as a string it would be measured for its Content-Length, then encoded
  // again by the socket's write (a page of 100 listings: about a quarter of its CPU, docs/benchmarks.md). A
  // small one goes as a string, which Node sends in one write with the headers.
  res.end(typeof chunk === 'string' && chunk.length >= ENCODE_ONCE_CHARS ? Buffer.from(chunk, 'utf8') : chunk);
  // A compressed body is still in the compressor when end returns: watch it until it has all gone out.
  const pending = res.writableLength > 0 || res.hasHeader('Content-Encoding');
  if (stallMs === undefined || !pending || res.destroyed) return;
  const stop = watchStall(res, stallMs, () => undefined);
  res.once('finish', stop);
  res.once('close', stop);
}

/**
 * Calls `onStall` (after destroying the response) when the data it has buffered does not shrink for
 * `stallMs`: a reader that is slow but reading is left alone, one that has stopped is cut off. Returns the
 * function that stops watching.
 */
function watchStall(res: ServerResponse, stallMs: number, onStall: () => void): () => void {
  let buffered = res.writableLength;
  const timer = setInterval(() => {
    const now = res.writableLength;
    if (now > 0 && now >= buffered) {
      clearInterval(timer);
      res.destroy();
      onStall();
    }
    buffered = now;
  }, stallMs);
  timer.unref();
  return () => clearInterval(timer);
}
