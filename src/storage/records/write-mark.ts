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
  constructor(private readonly settings: Settings) {}

  /** The mark now ('0' before any record was written through a RecordWriter). */
  async current(): Promise<string> {
    return (await this.settings.get(WRITE_MARK)) ?? '0';
  }

  /** Moves the mark in the writing transaction `tx` (its last statement: the row stays locked to its end). */
  async move(tx: Executor): Promise<void> {
    await this.settings.nextNumbers(tx, WRITE_MARK, 1);
  }
}
