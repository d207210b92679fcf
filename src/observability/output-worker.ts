/**
 * The thread that writes the process's log lines to standard output (see standard-output.ts): each chunk it is
 * sent, whole and in the order sent; then it adds the chunk to the shared progress the main thread reads to bound
 * what is pending and waits on when the process exits. Blocking here blocks no request: a stalled collector
 * stalls this thread alone.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { writeSync } from 'node:fs';
import { CHARS_DONE, CHUNKS_DONE, OutputWorkerData } from './output-progress';

const { progress, fd } = workerData as OutputWorkerData;
const done = new BigInt64Array(progress);
/** Waited on while an output that does not block says it is full (EAGAIN), instead of spinning. */
const pause = new Int32Array(new SharedArrayBuffer(4));
const FULL_PAUSE_MS = 5;

function writeWhole(buf: Buffer): void {
  for (let off = 0; off < buf.length;) {
    try {
      off += writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return; // closed (EPIPE) or gone: nowhere left to write
      Atomics.wait(pause, 0, 0, FULL_PAUSE_MS);
    }
  }
}

parentPort!.on('message', (chunk: string) => {
  writeWhole(Buffer.from(chunk, 'utf8'));
  Atomics.add(done, CHARS_DONE, BigInt(chunk.length));
  Atomics.add(done, CHUNKS_DONE, 1n);
  Atomics.notify(done, CHUNKS_DONE);
});
