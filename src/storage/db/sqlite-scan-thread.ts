/**
 * Scans on SQLite (Database.scan): a read that may visit every row of a table runs on a thread of its own, with
 * a read connection of its own, so the event loop answering every other request is never blocked by it, as a
 * better-sqlite3 call on the main thread would block it. SQLite has no statement time limit, so the statement
 * carries a guard (sqlite-functions.ts) that stops it at the statement timeout: ScanTimedOut. At most
 * SCAN_THREADS scans run at once per process; one more waits for a thread until the acquire timeout (503).
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Row } from './database';
import { Deadline, type DatabaseTimeouts, Slots } from './deadline';
import { classify, DatabaseUnavailable, isBusy, ScanTimedOut } from './errors';
import { ScanDeadlinePassed } from './sqlite-functions';
import type { ScanAnswer, ScanRequest, ScanThreadData } from './sqlite-scan-worker';

export const SCAN_THREADS = 2;
/** Pauses between attempts while the file is locked (rare for a reader in WAL mode: a checkpoint, a recovery). */
const RETRY_MS = 20;

export class SqliteScanThreads {
  private readonly slots = new Slots(SCAN_THREADS, 'scan threads');
  private readonly idle: Worker[] = [];
  private readonly started = new Set<Worker>();

  constructor(private readonly data: ScanThreadData, private readonly timeouts: DatabaseTimeouts) {}

  all(sql: string, params: readonly unknown[]): Promise<Row[]> {
    const deadline = new Deadline(this.timeouts.acquireMs);
    return this.slots.run(deadline, async () => {
      const worker = this.idle.pop() ?? this.start();
      let healthy = false;
      try {
        for (;;) {
          const answer = await ask(worker, { sql, params, ms: this.timeouts.statementMs });
          healthy = true;
          if ('rows' in answer) return answer.rows;
          const e = failure(answer.error, this.timeouts.statementMs);
          if (!isBusy(e) || deadline.remaining() === 0) throw classify(e);
          await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MS, deadline.remaining())));
        }
      } finally {
        if (healthy) this.idle.push(worker);
        else this.stop(worker);
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.started].map((w) => this.stop(w)));
  }

  private start(): Worker {
    const worker = new Worker(join(__dirname, 'sqlite-scan-worker.js'), { workerData: this.data });
    // A thread waiting for work keeps no process alive; close() ends it.
    worker.unref();
    this.started.add(worker);
    return worker;
  }

  private async stop(worker: Worker): Promise<void> {
    this.started.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at >= 0) this.idle.splice(at, 1);
    await worker.terminate();
  }
}

/** One request to a thread that has no other in progress, and its answer; a thread that dies answers unavailable. */
function ask(worker: Worker, q: ScanRequest): Promise<ScanAnswer> {
  return new Promise((resolve, reject) => {
    const done = () => {
      worker.off('message', answered);
      worker.off('error', died);
      worker.off('exit', died);
    };
    const answered = (a: ScanAnswer) => { done(); resolve(a); };
    const died = (e: unknown) => { done(); reject(new DatabaseUnavailable(`the scan thread stopped (${e instanceof Error ? e.message : `exit ${String(e)}`})`, e)); };
    worker.on('message', answered);
    worker.on('error', died);
    worker.on('exit', died);
    worker.postMessage(q);
  });
}

/** The thread's error as the main thread's storage errors: the guard's stop, or SQLite's code for classify(). */
function failure(e: { name: string; code?: string; message: string }, ms: number): unknown {
  if (e.name === ScanDeadlinePassed.name) return new ScanTimedOut(ms);
  return Object.assign(new Error(e.message), { name: e.name, code: e.code });
}
