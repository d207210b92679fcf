/**
 * The replica digest's hashes (docs/replication.md, "Digest"): a record's hash is the first 8 bytes, read as a
 * big-endian unsigned 64-bit integer, of SHA-256 over UTF-8 of `<key>\n<timestamp>` (each as served in JSON,
 * a string without its quotes); a range's hash is the sum of its records' hashes modulo 2^64, so a replica
 * computes it from its copy in any order, and adds or takes away one record without reading the others.
 */
import { createHash, hash } from 'node:crypto';

type OneShot = (algorithm: string, data: string, encoding: 'buffer') => Buffer;
const oneShot = hash as OneShot | undefined;

const MASK = (1n << 64n) - 1n;

/** A range holding no record. */
export const EMPTY_RANGE_HASH = '0000000000000000';

/** A value as served in JSON, without the quotes of a string. */
export function servedText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** One record's hash. */
export function recordHash(key: unknown, timestamp: unknown): bigint {
  const text = `${servedText(key)}\n${servedText(timestamp)}`;
  const digest = oneShot ? oneShot('sha256', text, 'buffer') : createHash('sha256').update(text).digest();
  return digest.readBigUInt64BE(0);
}

/** The sum of records' hashes, modulo 2^64. */
export class RangeHash {
  private sum = 0n;

  add(h: bigint): void {
    this.sum = (this.sum + h) & MASK;
  }

  /** 16 lowercase hex digits. */
  hex(): string {
    return this.sum.toString(16).padStart(16, '0');
  }
}
