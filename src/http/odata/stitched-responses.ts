/**
 * gzip responses stitched from kept runs (http/gzip): for a request that accepts gzip and whose records are
 * written as stored (no $select, no hidden field, no format that edits a record: the plan's read is `undecoded`),
 * its page or record is sent as a gzip body made of the records' compressed runs, never compressed as a whole. A
 * page's runs are kept by their records' keys and revisions, or, expanded, by the digest of their text; a key
 * fetch with $expand goes through the middleware. Any other shape goes through the compression middleware, compressed on the spot (compression.ts).
 * The stitched body carries its own Content-Encoding, so the middleware passes it as it is; it still adds Vary,
 * and the ETag hook still names the coding (caching.ts). A HEAD is answered as before (identity length).
 */
import { COMPRESSION_THRESHOLD_BYTES } from '../compression';
import { acceptsGzip } from '../gzip/accepts-gzip';
import type { RunSegments } from '../gzip/run-segments';
import { StitchedBody } from '../gzip/stitched-body';
import type { RequestContext } from '../request-context';
import type { PageBatches } from './page-batches';
import type { EntitySetSpec } from '../../model/service-model';
import { jsonContentType } from './json-format';
import type { ExecutablePlan } from './request-plans';
import { BodyWriter, collectionBody, collectionHead, collectionTail, type Count, type RecordBytes, sendPieces } from './response';

/** Whether this request's answer is a stitched gzip body (`compression`: the service compresses at all). */
export function stitches(ctx: RequestContext, p: ExecutablePlan, compression: boolean | undefined): boolean {
  return !!compression && ctx.req.method === 'GET' && p.plan.read.undecoded && acceptsGzip(ctx.req);
}

function size(pieces: readonly Buffer[]): number {
  return pieces.reduce((n, p) => n + p.length, 0);
}

/** What a set's records are written as: whole as stored, or (a record with the context spliced in) from their second byte. */
const shapeOf = (set: EntitySetSpec, form: 'records' | 'tail') => `${set.name}\u0000${form}`;

/** The stitched body of a page of `set`'s records, made before its first batch is read (PageRead.needed). */
export function stitchedPage(runs: RunSegments, p: ExecutablePlan): StitchedBody {
  return new StitchedBody(runs, shapeOf(p.set, 'records'), p.expansions.length > 0);
}

/** A stitched page's gzip body, sent whole (a page kept whole: http/gzip/page-bodies.ts). */
export function sendStitched(ctx: RequestContext, pieces: readonly Buffer[], stallMs: number): void {
  ctx.res.setHeader('Content-Encoding', 'gzip');
  sendPieces(ctx, pieces, stallMs);
}

/**
 * A page as a stitched gzip body: whole, with its Content-Length, when it is one batch (but as it is when it is
 * smaller than the compression threshold, as the middleware would send it, if its records were read); else
 * streamed batch by batch. `keep` is handed the gzip body's pieces once all are written (none for a page sent as
 * it is).
 */
export async function writeStitchedPage(
  ctx: RequestContext, body: StitchedBody, batches: PageBatches, first: readonly RecordBytes[],
  head: { context?: string; count?: Count }, next: () => string | undefined, stallMs: number,
  keep?: (pieces: readonly Buffer[]) => void,
): Promise<void> {
  const opening = collectionHead(head.context, head.count);
  const records = first;
  if (batches.done) {
    const nextLink = next();
    // A record of a kept run is not read (empty here): such a page is sent stitched, whatever its size.
    const identity = records.every((r) => r.length > 0) ? collectionBody(head.context, records, { count: head.count, nextLink }) : undefined;
    if (identity && size(identity) < COMPRESSION_THRESHOLD_BYTES) return sendPieces(ctx, identity, stallMs);
    // The body is made before the header says gzip: a failure making it is answered as an error in plain text.
    const whole = [...body.text(opening), ...body.records(records, batches.ids, false), ...body.text(collectionTail(nextLink)), ...body.end()];
    sendStitched(ctx, whole, stallMs);
    return keep?.(whole);
  }
  const written: Buffer[] = [];
  const firstPieces = [...body.text(opening), ...body.records(records, batches.ids, false)];
  ctx.res.setHeader('Content-Type', jsonContentType(ctx.format));
  ctx.res.setHeader('Content-Encoding', 'gzip');
  const writer = new BodyWriter(ctx.res, stallMs);
  if (keep) written.push(...firstPieces);
  await writer.writePieces(firstPieces);
  while (!batches.done) {
    const pieces = body.records(await batches.next(), batches.ids, true);
    if (keep) written.push(...pieces);
    await writer.writePieces(pieces);
  }
  const last = Buffer.concat([...body.text(collectionTail(next())), ...body.end()]);
  writer.end(last);
  keep?.([...written, last]);
}

/**
 * A record fetched by key as a stitched gzip body, given its identity body (`body`: the record with the context
 * spliced in front, entityBody) and its stored bytes; false (nothing sent) when it is too small to compress.
 */
export function sendStitchedEntity(
  ctx: RequestContext, runs: RunSegments, set: EntitySetSpec, found: { key: unknown; revision?: unknown; record: Buffer }, body: Buffer, stallMs: number,
): boolean {
  const record = found.record;
  if (body.length < COMPRESSION_THRESHOLD_BYTES || record.length <= 2) return false;
  const ids = { keys: [found.key], revisions: found.revision === undefined ? undefined : [found.revision] };
  // The body is the record itself (no context), or the context's head followed by the record from its second byte.
  const whole = body === record;
  const stitched = new StitchedBody(runs, shapeOf(set, whole ? 'records' : 'tail'));
  const head = whole ? [] : stitched.text(body.subarray(0, body.length - record.length + 1));
  const pieces = [...head, ...stitched.records([whole ? record : record.subarray(1)], ids, false), ...stitched.end()];
  ctx.res.setHeader('Content-Encoding', 'gzip');
  sendPieces(ctx, pieces, stallMs);
  return true;
}
