/**
 * The gzip body of a page or a record whose records are written as stored: the JSON around them as stored blocks,
 * the records in runs of RUN_RECORDS by position from the page's first record (commas between runs as stored
 * text), each run's segment taken from the kept runs (run-segments.ts) or compressed once there.
 */
import { GzipStream, type Segment } from './gzip-stream';
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

  /** `shape`: what tells how these records are written from their stored bytes (runId). */
  constructor(private readonly runs: RunSegments, private readonly shape: string) {}

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
    return this.runs.mostlyKept;
  }

  /** Records comma-separated (`more`: after others already written), in runs; the pieces to write. */
  records(records: readonly Buffer[], ids: RecordIds, more: boolean): Buffer[] {
    const pieces: Buffer[] = [];
    this.eachRun(records.length, this.position, (from, to) => {
      if (more || from > 0) pieces.push(...this.gzip.text(COMMA));
      const id = runId(this.shape, ids.keys.slice(from, to), ids.revisions?.slice(from, to));
      const held = id === undefined ? undefined : this.held.get(id);
      if (held) this.held.delete(id!);
      const run = records.slice(from, to);
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

function joined(records: readonly Buffer[]): Buffer {
  if (records.some((r) => r.length === 0)) throw new Error('a run of records not read was neither kept nor held');
  const pieces: Buffer[] = [];
  records.forEach((r, i) => (i > 0 ? pieces.push(COMMA, r) : pieces.push(r)));
  return Buffer.concat(pieces);
}
