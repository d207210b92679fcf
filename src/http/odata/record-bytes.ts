/** A record as the bytes a response writes: what the plain body, the stitched gzip body and expansions share. */
/**
 * A record as the bytes written: one Buffer, or the pieces it is spliced from (an expanded record: its own fields,
 * each navigation's head, related records and close, http/expansions.ts), handed to the socket with the rest of
 * the body and never joined into one Buffer first: joining them copied every expanded page once more (a first
 * page of 100 listings with their media, 2 MB: about a third of its CPU, docs/benchmarks.md).
 */
export type RecordBytes = Buffer | readonly Buffer[];

/** An expanded record's pieces: told apart by being an array, since a record read by a scan thread is a plain Uint8Array. */
export function isPieces(record: RecordBytes): record is readonly Buffer[] {
  return Array.isArray(record);
}

/** Adds a record's pieces to `pieces`; its size in bytes. */
export function pushRecord(pieces: Buffer[], record: RecordBytes): number {
  if (!isPieces(record)) {
    pieces.push(record);
    return record.length;
  }
  let size = 0;
  for (const piece of record) {
    pieces.push(piece);
    size += piece.length;
  }
  return size;
}
