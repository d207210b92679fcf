/**
 * The write mark: a number every transaction that writes records moves (RecordWriter), kept in the settings
 * table and moved under its row's lock held to the transaction's end (Settings.nextNumbers), so it moves in commit
 * order on every database, with the records it marks. A reader that reads the mark, then reads records, and later
 * finds the same mark knows that no record was written in between: what it read is what it would read now. A gzip
 * page kept whole is served again on that alone, one small read instead of its page's positions
 * (http/gzip/page-bodies.ts).
 */
import type { Executor } from '../db/database';
import type { Settings } from '../tables/settings';

const WRITE_MARK = 'record-writes';

export class WriteMark {
  /** The read going on, if any. */
  private inFlight?: Promise<string>;
  /** The read the callers that came while one was going will share, started once it ends. */
  private waiting?: Promise<string>;

  constructor(private readonly settings: Settings) {}

  /**
   * The mark now ('0' before any record was written through a RecordWriter). Callers share reads: one that comes
   * while a read is going waits for the next, which starts when that one ends and answers every caller that came
   * meanwhile. Never the read going on: it may have started before a write the caller saw commit (an ingest, then
   * its GET). Under load this is one statement per round trip instead of one per request (a MariaDB round trip is
   * a third of a kept page of 100's cost, docs/benchmarks/gzip.md).
   */
  current(): Promise<string> {
    if (!this.inFlight) return this.start();
    const next = () => {
      this.waiting = undefined;
      return this.start();
    };
    return (this.waiting ??= this.inFlight.then(next, next));
  }

  private start(): Promise<string> {
    const read = this.settings.get(WRITE_MARK).then((v) => v ?? '0');
    this.inFlight = read;
    const ended = () => {
      if (this.inFlight === read) this.inFlight = undefined;
    };
    read.then(ended, ended);
    return read;
  }

  /** Moves the mark in the writing transaction `tx` (its last statement: the row stays locked to its end). */
  async move(tx: Executor): Promise<void> {
    await this.settings.nextNumbers(tx, WRITE_MARK, 1);
  }
}
