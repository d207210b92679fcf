/**
 * Log lines to standard output, written by a thread of their own (output-worker.ts). Writes on the main thread
 * would either block it (a synchronous write to a collector that has stopped reading stops the server with it) or
 * go through Node's thread pool, where a write still under way when the process exits is overtaken by whatever
 * is written after it then (measured: lines out of order under a slow reader). One writing thread keeps every
 * line in the order logged, and at exit the main thread waits for it, for EXIT_WAIT_MS at most.
 */
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { writeAll } from '../foundation/write-all';
import { CHARS_DONE, CHUNKS_DONE, OutputWorkerData, PROGRESS_SLOTS } from './output-progress';

/**
 * Request lines go out in batches of about this many characters, or at most LINE_DELAY_MS after they were logged:
 * handing a chunk to the writing thread costs the event loop a few µs whatever its size, and a busy server logs
 * thousands of request lines a second. A collector reads lines seconds apart; a tenth of a second's delay costs
 * it nothing.
 */
const BATCH_CHARS = 64 * 1024;
const LINE_DELAY_MS = 100;
/**
 * What is sent and not yet written (a stalled log collector) is bounded: past this, new lines are dropped rather
 * than the process's memory growing with every request.
 */
const PENDING_CHARS_MAX = 32 * 1024 * 1024;
/** How long an exiting process waits for its last lines to be written (longer only if the collector stopped). */
const EXIT_WAIT_MS = 5000;

/** The writing thread, and what was sent to it. */
class OutputThread {
  private readonly done: BigInt64Array;
  private readonly worker: Worker;
  private chunksSent = 0;
  private charsSent = 0;
  /** Set when the thread could not start or stopped: lines are then written here, synchronously. */
  private failed = false;

  constructor(private readonly fd: number) {
    const progress = new SharedArrayBuffer(PROGRESS_SLOTS * BigInt64Array.BYTES_PER_ELEMENT);
    this.done = new BigInt64Array(progress);
    const workerData: OutputWorkerData = { progress, fd };
    this.worker = new Worker(join(__dirname, 'output-worker.js'), { workerData, stdout: false, stderr: false });
    this.worker.unref();
    const fail = () => { this.failed = true; };
    this.worker.on('error', fail).on('exit', fail);
  }

  send(chunk: string): void {
    if (!chunk) return;
    if (this.failed) return this.writeHere(chunk);
    if (this.pendingChars() + chunk.length > PENDING_CHARS_MAX) return;
    this.worker.postMessage(chunk);
    this.chunksSent += 1;
    this.charsSent += chunk.length;
  }

  /** Blocks until the thread has written everything sent, or `ms` has passed. */
  drain(ms: number): void {
    const deadline = Date.now() + ms;
    for (;;) {
      const chunksDone = Atomics.load(this.done, CHUNKS_DONE);
      const left = deadline - Date.now();
      if (this.failed || Number(chunksDone) >= this.chunksSent || left <= 0) return;
      Atomics.wait(this.done, CHUNKS_DONE, chunksDone, left);
    }
  }

  private pendingChars(): number {
    return this.charsSent - Number(Atomics.load(this.done, CHARS_DONE));
  }

  private writeHere(chunk: string): void {
    try {
      writeAll(this.fd, Buffer.from(chunk, 'utf8'));
    } catch {
      // Standard output closed (EPIPE) or not taking anything: nowhere left to write.
    }
  }
}

/**
 * Two ways in. Request lines are held until a batch is full or the oldest is LINE_DELAY_MS old (a timer runs only
 * while lines are held). Every other line goes at once, after the request lines held before it: a line logged just
 * before a long stretch of work (seeding, say) must not wait for the event loop to be free, and the order of lines
 * stays the order they were logged in. What is held when the process exits, however it exits, is sent then, and
 * the exit waits for the thread to write it all.
 */
export function standardOutput(fd = 1): { immediate: DestinationStream; batched: DestinationStream } {
  const out = new OutputThread(fd);
  let held = '';
  let timer: NodeJS.Timeout | undefined;
  const take = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = held;
    held = '';
    return batch;
  };
  const release = () => out.send(take());
  process.once('exit', () => {
    release();
    out.drain(EXIT_WAIT_MS);
  });
  return {
    immediate: { write: (line: string) => out.send(held ? take() + line : line) },
    batched: {
      write(line: string) {
        held += line;
        if (held.length >= BATCH_CHARS) release();
        else timer ??= setTimeout(release, LINE_DELAY_MS).unref();
      },
    },
  };
}
