/**
 * Writing records, for ingest, seeding and start-up work: one write transaction in which records are read,
 * written and removed by entity set, and which may take a ModificationTimestamp from the service's clock.
 * When the dictionary declares a change log, every record written, removed or restamped in a logged set
 * gets its event in the same transaction (change-log.ts), and every transaction that writes a record moves the
 * write mark (write-mark.ts) as its last statement.
 */
import type { EntitySetSpec } from '../../model/service-model';
import type { ChangeLog } from './change-log';
import type { ConflictPolicy } from '../db/conflicts';
import type { Database, Executor } from '../db/database';
import type { EncodedRecord } from './record-codec';
import type { Belonging } from './record-queries';
import type { RecordStore } from './record-store';
import type { Settings } from '../tables/settings';
import { WriteMark } from './write-mark';

type Key = string | number;

export interface RecordTransaction {
  /**
   * This transaction's ModificationTimestamp: strictly after every one handed out before, so transactions
   * commit in timestamp order (settings.ts). Taken once per transaction; later calls answer the same.
   */
  modificationTime(): Promise<string>;
  /** Stored records by key, parsed, as this transaction sees them (its own writes included). */
  recordsByKeys(set: EntitySetSpec | string, keys: readonly Key[]): Promise<Map<Key, Record<string, unknown>>>;
  /** Stored records of `set` whose `field` holds one of `values` (and whose discriminator, if given, allows it). */
  recordsByParent(
    set: EntitySetSpec | string, field: string, values: readonly Key[], belongs?: Belonging,
  ): Promise<Record<string, unknown>[]>;
  /** Moves the change timestamp of the records `recordsByParent` would find to `now`, without reading them. */
  restampByParent(
    set: EntitySetSpec | string, field: string, values: readonly Key[], belongs: Belonging | undefined, now: string,
  ): Promise<void>;
  /** Inserts or replaces records by key. */
  upsert(set: EntitySetSpec | string, records: readonly EncodedRecord[]): Promise<void>;
  /**
   * Replaces stored records whose served content is unchanged (a migration's refilled columns, a new null field):
   * no change-log event, since no consumer has anything to learn.
   */
  rewrite(set: EntitySetSpec | string, records: readonly EncodedRecord[]): Promise<void>;
  deleteByKeys(set: EntitySetSpec | string, keys: readonly Key[]): Promise<void>;
  /** The transaction's statements, for the service's own rows that must commit with the records (a puller's checkpoint). */
  readonly executor: Executor;
}

export interface RecordWriter {
  /**
   * Runs `fn` in one write transaction: all of it commits, or none. Writers run one at a time. A transaction lost to
   * a conflict runs again for as long as `policy` allows (Database.transaction).
   */
  transaction<T>(fn: (tx: RecordTransaction) => Promise<T>, policy?: ConflictPolicy): Promise<T>;
}

export function recordWriter(
  db: Database, settings: Settings, store: (set: EntitySetSpec | string) => RecordStore, changeLog?: ChangeLog,
): RecordWriter {
  const mark = new WriteMark(settings);
  return {
    transaction: (fn, policy) => db.transaction(async (ex) => {
      let now: Promise<string> | undefined;
      let wrote = false;
      const modificationTime = () => (now ??= settings.nextModificationTime(ex));
      const events = changeLog?.begin(ex, modificationTime);
      const result = await fn({
        modificationTime,
        recordsByKeys: (set, keys) => store(set).recordsByKeys(ex, keys),
        recordsByParent: (set, field, values, belongs) => store(set).recordsByParent(ex, field, values, belongs),
        restampByParent: async (set, field, values, belongs, t) => {
          wrote = true;
          await events?.recordsByParent(store(set).set, field, values, belongs);
          await store(set).restampByParent(ex, field, values, belongs, t);
        },
        upsert: async (set, records) => {
          wrote ||= records.length > 0;
          await events?.records(store(set).set, records.map((r) => r.key));
          await store(set).upsert(ex, records);
        },
        rewrite: async (set, records) => {
          wrote ||= records.length > 0;
          await store(set).upsert(ex, records);
        },
        executor: ex,
        deleteByKeys: async (set, keys) => {
          wrote ||= keys.length > 0;
          await events?.records(store(set).set, keys, true);
          await store(set).deleteByKeys(ex, keys);
        },
      });
      await events?.flush();
      if (wrote) await mark.move(ex);
      return result;
    }, policy),
  };
}
