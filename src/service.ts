/**
 * The data service behind the HTTP layer: the database, one record store per entity set, and readiness.
 * The schema is created on first need and again after the database comes back, so the server can start,
 * answer 503 while the database is away, and recover by itself.
 */
import type { EntitySetSpec, ServiceModel } from './model/service-model';
import type { Database } from './storage/database';
import { DatabaseUnavailable } from './storage/errors';
import { syncReferenceData } from './storage/reference-data';
import { RecordStore } from './storage/record-store';
import { ensureSchema } from './storage/schema';
import { keysetAfter } from './query/keyset';
import { WHOLE_RECORD } from './query/projection';
import { Settings } from './storage/settings';
import { ClientRegistry } from './auth/clients';
import { Meter, MeterOptions } from './metering/meter';
import { SkipTokens } from './paging/skiptoken';
import type { Clock } from './clock';

export const DEMO_CLIENT = 'demo';

export class ListingService {
  readonly stores: ReadonlyMap<string, RecordStore>;
  readonly settings: Settings;
  readonly clients: ClientRegistry;
  readonly meter: Meter;
  private readyState: 'no' | 'yes' = 'no';
  private pending?: Promise<void>;
  private tokens?: SkipTokens;

  /**
   * `pagingSecret`: signs $skiptoken values; without it, a secret kept in the database is used (shared by
   * every instance on it). `demoToken`: registered as a static token of the `demo` client once the database is there.
   * `usage`: where usage counts are journaled (without a journal directory, nothing can be charged).
   * `clock`: what token lifetimes are measured against (the system clock unless a test moves one by hand).
   */
  constructor(
    readonly model: ServiceModel, readonly db: Database,
    private readonly options: { pagingSecret?: string; demoToken?: string; usage?: MeterOptions; clock?: Clock } = {},
  ) {
    this.settings = new Settings(db);
    this.clients = new ClientRegistry(db, options.clock);
    this.meter = new Meter(db, this.settings, options.usage);
    const tables = new Map(model.tables.map((t) => [t.name, t]));
    this.stores = new Map(model.entitySets.map((s) => [s.name, new RecordStore(db, s, tables.get(s.table)!, model.lookups)]));
  }

  store(set: EntitySetSpec | string): RecordStore {
    const name = typeof set === 'string' ? set : set.name;
    const s = this.stores.get(name);
    if (!s) throw new Error(`no entity set ${name}`);
    return s;
  }

  /** Resolves once the schema exists; rejects with DatabaseUnavailable while the database cannot be reached. */
  ready(): Promise<void> {
    if (this.readyState === 'yes') return Promise.resolve();
    if (!this.pending) {
      this.pending = (async () => {
        const added = await ensureSchema(this.db, this.model.tables);
        for (const table of added.keys()) await this.backfill(table);
        await this.settings.ensureClock();
        this.tokens ??= new SkipTokens(this.options.pagingSecret ? Buffer.from(this.options.pagingSecret, 'utf8') : await this.settings.pagingSecret());
        await syncReferenceData(this);
        if (this.options.demoToken) await this.ensureDemoClient(this.options.demoToken);
        this.readyState = 'yes';
      })().finally(() => { this.pending = undefined; });
    }
    return this.pending;
  }

  /** The `demo` client (admin, all listings), with `token` as a static token; returns the token. */
  async ensureDemoClient(token?: string): Promise<string> {
    if (!(await this.clients.get(DEMO_CLIENT))) await this.clients.add({ id: DEMO_CLIENT, name: 'Demo client', admin: true });
    return this.clients.issueToken(DEMO_CLIENT, undefined, token);
  }

  /** Rewrites every record of a table through the codec, so columns added by a dictionary change hold their values. */
  private async backfill(table: string): Promise<void> {
    const set = this.model.entitySets.find((s) => s.table === table);
    if (!set) return;
    const store = this.store(set);
    const key = set.fieldsByName[set.key];
    const order = [{ field: key, column: key.column!, direction: 'asc' as const }];
    let last: unknown[] | undefined;
    for (;;) {
      const page = await store.query({ after: last ? keysetAfter(order, last) : undefined, orderBy: order, limit: 500, projection: WHOLE_RECORD });
      if (page.records.length === 0) return;
      await this.db.transaction((tx) => store.upsert(tx, page.records.map((json) => store.encode(JSON.parse(json)))));
      last = page.sortValues[page.sortValues.length - 1];
    }
  }

  /** Signs and reads $skiptoken values; available once ready() has resolved. */
  get skipTokens(): SkipTokens {
    if (!this.tokens) throw new Error('skipTokens before ready()');
    return this.tokens;
  }

  /** After the database was lost, check the schema again before trusting it (it may be a new, empty server). */
  markUnavailable(e: unknown): void {
    if (e instanceof DatabaseUnavailable) this.readyState = 'no';
  }

  async close(): Promise<void> {
    await this.meter.close();
    await this.db.close();
  }
}
