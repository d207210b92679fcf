/**
 * Writing records, for ingest, seeding and start-up work: one write transaction in which records are read,
 * written and removed by entity set, and which may take a ModificationTimestamp from the service's clock.
 */
import type { EntitySetSpec } from '../model/service-model';
import type { Database } from './database';
import type { EncodedRecord } from './record-codec';
import type { RecordStore } from './record-store';
import type { Settings } from './settings';

type Key = string | number;

export interface RecordTransaction {
  /**
   * This transaction's ModificationTimestamp: strictly after every one handed out before, so transactions
   * commit in timestamp order (settings.ts). Take it once, before the writes it stamps.
   */
  modificationTime(): Promise<string>;
  /** Stored records by key, parsed, as this transaction sees them (its own writes included). */
  recordsByKeys(set: EntitySetSpec | string, keys: readonly Key[]): Promise<Map<Key, Record<string, unknown>>>;
  /** Stored records of `set` whose `field` holds one of `values` (and whose discriminator, if given, allows it). */
  recordsByParent(
    set: EntitySetSpec | string, field: string, values: readonly Key[], belongs?: { readonly field: string; readonly value: string },
  ): Promise<Record<string, unknown>[]>;
  /** Moves the change timestamp of the records `recordsByParent` would find to `now`, without reading them. */
  restampByParent(
    set: EntitySetSpec | string, field: string, values: readonly Key[], belongs: { readonly field: string; readonly value: string } | undefined, now: string,
  ): Promise<void>;
  /** Inserts or replaces records by key. */
  upsert(set: EntitySetSpec | string, records: readonly EncodedRecord[]): Promise<void>;
  deleteByKeys(set: EntitySetSpec | string, keys: readonly Key[]): Promise<void>;
}

export interface RecordWriter {
  /** Runs `fn` in one write transaction: all of it commits, or none. Writers run one at a time. */
  transaction<T>(fn: (tx: RecordTransaction) => Promise<T>): Promise<T>;
}

export function recordWriter(db: Database, settings: Settings, store: (set: EntitySetSpec | string) => RecordStore): RecordWriter {
  return {
    transaction: (fn) => db.transaction((ex) => fn({
      modificationTime: () => settings.nextModificationTime(ex),
      recordsByKeys: (set, keys) => store(set).recordsByKeys(ex, keys),
      recordsByParent: (set, field, values, belongs) => store(set).recordsByParent(ex, field, values, belongs),
      restampByParent: (set, field, values, belongs, now) => store(set).restampByParent(ex, field, values, belongs, now),
      upsert: (set, records) => store(set).upsert(ex, records),
      deleteByKeys: (set, keys) => store(set).deleteByKeys(ex, keys),
    })),
  };
}
