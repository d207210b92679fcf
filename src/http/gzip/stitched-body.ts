/**
 * The gzip body of a page or a record whose records are written as stored: the JSON around them as stored blocks,
 * the records in runs of RUN_RECORDS by position from the page's first record (commas between runs as stored
 * text), each run's segment taken from the kept runs (run-segments.ts) or compressed once there.
 */
import { GzipStream } from './gzip-stream';
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

  /** `shape`: what tells how these records are written from their stored bytes (runId). */
  constructor(private readonly runs: RunSegments, private readonly shape: string) {}

  /** Text written as it is (the JSON around the records); the pieces to write. */
  text(text: string | Buffer): Buffer[] {
    return this.gzip.text(text);
  }

  /** Records comma-separated (`more`: after others already written), in runs; the pieces to write. */
  records(records: readonly Buffer[], ids: RecordIds, more: boolean): Buffer[] {
    const pieces: Buffer[] = [];
    for (let from = 0; from < records.length;) {
      const to = Math.min(records.length, from + RUN_RECORDS - ((this.position + from) % RUN_RECORDS));
      if (more || from > 0) pieces.push(...this.gzip.text(COMMA));
      const id = runId(this.shape, ids.keys.slice(from, to), ids.revisions?.slice(from, to));
      const run = records.slice(from, to);
      pieces.push(...this.gzip.segment(this.runs.of(id, () => joined(run))));
      from = to;
    }
    this.position += records.length;
    return pieces;
  }

  /** The final block and the trailer. */
  end(): Buffer[] {
    return this.gzip.end();
  }
}

function joined(records: readonly Buffer[]): Buffer {
  const pieces: Buffer[] = [];
  records.forEach((r, i) => (i > 0 ? pieces.push(COMMA, r) : pieces.push(r)));
  return Buffer.concat(pieces);
}
