/**
 * The parts of the data service over one database, put together once: a record store per entity set, the
 * shared settings, the API clients, the meter, and readiness (the start-up work, run once). The server and
 * the operator's commands build one; each layer is handed only the parts it uses.
 */
import { ClientRegistry } from '../auth/clients';
import { Clock, systemClock } from '../foundation/clock';
import { Meter, MeterOptions } from '../metering/meter';
import { RateWindows } from '../metering/rate-limit';
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import { Readiness } from './readiness';
import { Started, startUp, StartupOptions } from './startup';
import { ChangeLog } from '../storage/records/change-log';
import { WriteMark } from '../storage/records/write-mark';
import { ChangeLogRetention, RetentionPolicy } from '../storage/records/change-log-retention';
import { ClientTable } from '../storage/tables/client-table';
import { CredentialMark } from '../storage/tables/credential-changes';
import type { Database } from '../storage/db/database';
import { RecordCache } from '../storage/records/record-cache';
import type { RecordStore } from '../storage/records/record-store';
import { RateTable } from '../storage/tables/rate-table';
import { recordStores, RecordStores } from '../storage/records/record-stores';
import { recordWriter, RecordWriter } from '../storage/records/record-writer';
import { Settings } from '../storage/tables/settings';
import { StartupLock } from '../storage/tables/startup-lock';
import { UsageTable } from '../storage/tables/usage-table';
import { SubscriptionTable } from '../storage/tables/webhook-table';

export interface ServiceOptions extends StartupOptions {
  /** Where usage counts are journaled (without a journal directory, nothing can be charged). */
  readonly usage?: MeterOptions;
  /** What token lifetimes and rate-limit windows are measured against (a test moves one by hand). */
  readonly clock?: Clock;
  /** How long the change log keeps events (ENTITY_EVENT_RETENTION_DAYS, ENTITY_EVENT_RETENTION_COUNT). */
  readonly changeLogRetention?: RetentionPolicy;
  /** Bytes of stored records kept in memory by revision (RECORD_CACHE_MB; storage/record-cache.ts); 0 keeps none. */
  readonly recordCacheBytes?: number;
}

/** RECORD_CACHE_MB's default, in bytes. */
export const DEFAULT_RECORD_CACHE_BYTES = 64 * 1024 * 1024;

export class ListingService {
  readonly stores: RecordStores;
  /** Stored records' bytes by revision, shared by every set's reads. */
  readonly recordCache: RecordCache;
  /** Write transactions over records (ingest, seeding, start-up backfill). */
  readonly writer: RecordWriter;
  readonly settings: Settings;
  readonly clients: ClientRegistry;
  readonly meter: Meter;
  /** The clients' request limits, kept in the database so that every instance on it shares them. */
  readonly rateWindows: RateWindows;
  readonly clock: Clock;
  /** The change log's retention and marks, when the dictionary declares a change log (EntityEvent). */
  readonly changeLog?: ChangeLogRetention;
  /** What every transaction that writes records moves (write-mark.ts): whether anything was written since. */
  readonly writeMark: WriteMark;
  /** Which of several instances starting together on the database does the start-up work. */
  readonly startupLock: StartupLock;
  /** Reached once the start-up work is done; its value holds what signs and reads $skiptoken values. */
  readonly readiness: Readiness<Started>;
  /** Webhook subscriptions, each also the lease of the instance delivering it (src/webhooks/). */
  readonly webhooks: SubscriptionTable;

  constructor(readonly model: ServiceModel, readonly db: Database, options: ServiceOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.settings = new Settings(db);
    this.writeMark = new WriteMark(this.settings);
    this.clients = new ClientRegistry(new ClientTable(db, this.settings), this.clock, new CredentialMark(db, this.settings));
    this.meter = new Meter(new UsageTable(db, this.settings), options.usage);
    this.rateWindows = new RateWindows(new RateTable(db), this.clock);
    this.recordCache = new RecordCache(options.recordCacheBytes ?? DEFAULT_RECORD_CACHE_BYTES);
    this.stores = recordStores(model, db, this.recordCache);
    const store = (set: EntitySetSpec | string) => this.stores.store(set);
    const changeLog = ChangeLog.of(db, model, store, this.settings);
    this.writer = recordWriter(db, this.settings, store, changeLog);
    if (changeLog) this.changeLog = new ChangeLogRetention(db, changeLog.log, options.changeLogRetention ?? {});
    this.startupLock = new StartupLock(db, this.clock);
    this.webhooks = new SubscriptionTable(db);
    this.readiness = new Readiness(() => startUp(this, options), { log: options.log });
  }

  store(set: EntitySetSpec | string): RecordStore {
    return this.stores.store(set);
  }

  /**
   * Runs the start-up work (once), waiting while another instance does it; for commands and tests that use
   * the database before anything else. Fails if the database cannot be used.
   */
  async prepare(): Promise<void> {
    await this.readiness.settle();
  }

  async close(): Promise<void> {
    this.readiness.stop();
    await this.meter.close();
    await this.db.close();
  }
}
