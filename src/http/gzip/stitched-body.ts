/**
 * The gzip body of a page or a record whose records are written as stored: the JSON around them as stored blocks,
 * the records in runs of RUN_RECORDS by position from the page's first record (commas between runs as stored
 * text), each run's segment taken from the kept runs (run-segments.ts) or compressed once there. A run is kept
 * by its records' keys and revisions; a run of expanded records (each spliced from its own bytes and its related
 * records', whose revisions are not known here) is kept by the digest of its text instead.
 */
import { createHash } from 'node:crypto';
import { GzipStream, type Segment } from './gzip-stream';
import { pushRecord, type RecordBytes } from '../odata/record-bytes';
import { RUN_RECORDS, runId, type RunSegments } from './run-segments';

/** Which records are written: their keys, and their revisions when the read knows them. */
export interface RecordIds {
  readonly keys: readonly unknown[];
  readonly revisions?: readonly unknown[];
}

const COMMA = Buffer.from(',');

export class StitchedBody {
  private readonly gzip = new GzipStream();
  /** Records written so far: where the next run starts, counted from the page's first record. */
  private position = 0;
  /** Kept runs found for a batch read ahead (needed), held until it is written: the LRU may give them up meanwhile. */
  private readonly held = new Map<string, Segment>();

  /**
   * `shape`: what tells how these records are written from their stored bytes (runId); `byText`: runs are kept
   * by the digest of their text (expanded records), not by revisions.
   */
  constructor(private readonly runs: RunSegments, private readonly shape: string, private readonly byText = false) {}

  /** Text written as it is (the JSON around the records); the pieces to write. */
  text(text: string | Buffer): Buffer[] {
    return this.gzip.text(text);
  }

  /**
   * Which of a batch's records must be read, `position` records into the page: those of runs not kept (a kept
   * run's segment is held for the batch's writing, whose records then need no bytes).
   */
  needed(keys: readonly unknown[], revisions: readonly unknown[], position: number): boolean[] {
    const wanted: boolean[] = [];
    this.eachRun(keys.length, position, (from, to) => {
      const id = runId(this.shape, keys.slice(from, to), revisions.slice(from, to));
      const kept = id === undefined ? undefined : this.runs.peek(id);
      if (kept) this.held.set(id!, kept);
      for (let i = from; i < to; i++) wanted.push(!kept);
    });
    return wanted;
  }

  /** Whether reading records by needed() pays: most runs lately asked for were kept. */
  get worthAsking(): boolean {
    return !this.byText && this.runs.mostlyKept;
  }

  /** Records comma-separated (`more`: after others already written), in runs; the pieces to write. */
  records(records: readonly RecordBytes[], ids: RecordIds, more: boolean): Buffer[] {
    const pieces: Buffer[] = [];
    this.eachRun(records.length, this.position, (from, to) => {
      if (more || from > 0) pieces.push(...this.gzip.text(COMMA));
      const run = records.slice(from, to);
      const id = this.byText ? textDigest(run) : runId(this.shape, ids.keys.slice(from, to), ids.revisions?.slice(from, to));
      const held = id === undefined ? undefined : this.held.get(id);
      if (held) {
        this.held.delete(id!);
        this.runs.served();
      }
      // A record not read (needed) is empty: its run must be one held, or the body would lose it.
      pieces.push(...this.gzip.segment(held ?? this.runs.of(id, () => joined(run))));
    });
    this.position += records.length;
    return pieces;
  }

  /** The runs of `count` records `position` records into the page, as index ranges [from, to). */
  private eachRun(count: number, position: number, run: (from: number, to: number) => void): void {
    for (let from = 0; from < count;) {
      const to = Math.min(count, from + RUN_RECORDS - ((position + from) % RUN_RECORDS));
      run(from, to);
      from = to;
    }
  }

  /** The final block and the trailer. */
  end(): Buffer[] {
    return this.gzip.end();
  }
}

/** A run's records comma-separated, as pieces. */
function piecesOf(records: readonly RecordBytes[]): Buffer[] {
  const pieces: Buffer[] = [];
  records.forEach((r, i) => {
    if (i > 0) pieces.push(COMMA);
    pushRecord(pieces, r);
  });
  return pieces;
}

function joined(records: readonly RecordBytes[]): Buffer {
  if (records.some((r) => r.length === 0)) throw new Error('a run of records not read was neither kept nor held');
  return Buffer.concat(piecesOf(records));
}

/** The digest of a run's text (SHA-256: hashing a page of 100 expanded listings, 2 MB, costs about 1.4 ms here). */
function textDigest(records: readonly RecordBytes[]): string {
  const hash = createHash('sha256');
  for (const piece of piecesOf(records)) hash.update(piece);
  return `text\u0000${hash.digest('base64url')}`;
}
