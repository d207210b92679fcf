/**
 * CRC-32 (the gzip trailer's) of bytes, and of two runs of bytes joined, from each run's CRC and the second's
 * length alone: what lets a body stitched from pieces compressed at different times carry a correct trailer
 * without reading the pieces' text again. The combination is zlib's crc32_combine (1.2.12 and later): the
 * first CRC multiplied by x^(8·len2) modulo the CRC's polynomial, in the reflected bit order CRC-32 uses, with
 * x^(2^k) taken from a table of 32 squarings.
 */
import { crc32 as zlibCrc32 } from 'node:zlib';

/** CRC-32's polynomial, reflected. */
const POLY = 0xedb88320;

/** a·b modulo the polynomial (both reflected: x^0 is the top bit). */
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** x^(2^k) modulo the polynomial, k = 0…31: each the square of the one before, from x^1. */
const X2N: readonly number[] = (() => {
  const table = [0x40000000];
  for (let k = 1; k < 32; k++) table.push(multModP(table[k - 1], table[k - 1]));
  return table;
})();

/** x^(n·2^k) modulo the polynomial. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000;
  while (n > 0) {
    if (n & 1) p = multModP(X2N[k & 31], p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** The CRC-32 of bytes, continuing from `crc` (the CRC of the bytes before them; 0 for none). */
export function crc32(bytes: Uint8Array, crc = 0): number {
  return zlibCrc32(bytes, crc) >>> 0;
}

/** The CRC-32 of A followed by B, given A's CRC, B's CRC and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(x2nModP(lengthB, 3), crcA) ^ crcB) >>> 0;
}
