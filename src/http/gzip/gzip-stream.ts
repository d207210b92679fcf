/**
 * A gzip body (RFC 1952) stitched from pieces instead of compressed as one stream: its 10-byte header; deflate
 * segments (RFC 1951) compressed on their own, each ended by a full flush (byte-aligned, no final bit, nothing
 * referring to bytes before it), so any number of them follow one another as they are; small fixed parts (the
 * JSON around the records) as stored blocks; an empty final block; and the trailer, whose CRC-32 is combined
 * from the pieces' CRCs and lengths (crc32.ts). Pieces are handed out as they are added, so a streamed page
 * stays streamed: the header first, its segments batch by batch, the trailer last.
 */
import { constants, deflateRawSync } from 'node:zlib';
import { crc32, crc32Combine } from './crc32';

/** A piece of deflate data ended by a full flush, with the CRC-32 and length of the text it holds. */
export interface Segment {
  readonly bytes: Buffer;
  readonly crc: number;
  /** Bytes of text it holds. */
  readonly length: number;
}

/** Magic, deflate, no flags, no time, no extra flags, OS unknown. */
const HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);
/** A final block of fixed Huffman codes holding nothing but its end: BFINAL 1, BTYPE 01, code 256. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);
/** A stored block holds at most this many bytes. */
const STORED_MAX = 0xffff;

/** Text deflated on its own at `level`, ended by a full flush so that it can stand anywhere in a stream. */
export function segmentOf(text: Buffer, level: number): Segment {
  return { bytes: deflateRawSync(text, { level, finishFlush: constants.Z_FULL_FLUSH }), crc: crc32(text), length: text.length };
}

/** Text as stored (uncompressed) deflate blocks: for the few bytes around the records, cheaper than deflating. */
function storedBlocks(text: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0; at < text.length; at += STORED_MAX) {
    const part = text.subarray(at, Math.min(at + STORED_MAX, text.length));
    const head = Buffer.alloc(5);
    head.writeUInt16LE(part.length, 1);
    head.writeUInt16LE(~part.length & 0xffff, 3);
    pieces.push(head, part);
  }
  return pieces;
}

export class GzipStream {
  private crc = 0;
  /** Bytes of text so far, modulo 2^32 as the trailer holds it. */
  private length = 0;
  private started = false;

  /** Text sent as it is (stored blocks); the pieces to write. */
  text(text: Buffer | string): Buffer[] {
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    if (bytes.length === 0) return this.opening([]);
    this.crc = crc32(bytes, this.crc);
    this.length = (this.length + bytes.length) >>> 0;
    return this.opening(storedBlocks(bytes));
  }

  /** A compressed segment; the pieces to write. */
  segment(segment: Segment): Buffer[] {
    this.crc = crc32Combine(this.crc, segment.crc, segment.length);
    this.length = (this.length + segment.length) >>> 0;
    return this.opening([segment.bytes]);
  }

  /** The final block and the trailer (with the header if nothing came before). */
  end(): Buffer[] {
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(this.crc, 0);
    trailer.writeUInt32LE(this.length, 4);
    return this.opening([FINAL_BLOCK, trailer]);
  }

  private opening(pieces: Buffer[]): Buffer[] {
    if (this.started) return pieces;
    this.started = true;
    return [HEADER, ...pieces];
  }
}
