/** Synchronous writes that a short write does not cut off. */
import { writeSync } from 'node:fs';

/** Every byte of `buf` to `fd`, in as many writes as the kernel takes to accept them (throws as writeSync does). */
export function writeAll(fd: number, buf: Uint8Array): void {
  for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off);
}
