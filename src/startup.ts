/**
 * The work a process does once before it serves or writes, in one place: the schema (tables, and the columns a
 * dictionary change added, filled from the stored records), the rows every instance shares (the modification
 * clock, the paging secret), the reference data (Lookup and Field) and the demo client. Each step creates what
 * is absent and accepts what another instance created meanwhile, so that several instances starting together
 * on one database all get through it.
 */
import type { ClientRegistry } from './auth/clients';
import type { ServiceModel } from './model/service-model';
import { SkipTokens } from './paging/skiptoken';
import { WHOLE_RECORD } from './query/projection';
import type { Database } from './storage/database';
import type { RecordStores } from './storage/record-stores';
import type { RecordWriter } from './storage/record-writer';
import { syncReferenceData } from './storage/reference-data';
import { ensureSchema } from './storage/schema';
import type { Settings } from './storage/settings';

export const DEMO_CLIENT = 'demo';

export interface StartupParts {
  readonly model: ServiceModel;
  readonly db: Database;
  readonly stores: RecordStores;
  readonly writer: RecordWriter;
  readonly settings: Settings;
  readonly clients: ClientRegistry;
}

export interface StartupOptions {
  /** Signs $skiptoken values; without it, the secret kept in the database (shared by every instance on it). */
  readonly pagingSecret?: string;
  /** Registered as a static token of the `demo` client. */
  readonly demoToken?: string;
}

/** Runs the start-up work; returns what signs and reads $skiptoken values. */
export async function startUp(parts: StartupParts, options: StartupOptions): Promise<SkipTokens> {
  const { model, db, stores, writer, settings } = parts;
  const added = await ensureSchema(db, model.tables);
  for (const table of added.keys()) await backfill(model, stores, writer, table);
  await settings.ensureClock();
  const secret = options.pagingSecret ? Buffer.from(options.pagingSecret, 'utf8') : await settings.pagingSecret();
  await syncReferenceData(model, stores, writer);
  if (options.demoToken) await ensureDemoClient(parts.clients, options.demoToken);
  return new SkipTokens(secret);
}

/** The `demo` client (admin, all listings), with `token` as a static token; returns the token. */
export async function ensureDemoClient(clients: ClientRegistry, token?: string): Promise<string> {
  if (!(await clients.get(DEMO_CLIENT))) {
    try {
      await clients.add({ id: DEMO_CLIENT, name: 'Demo client', admin: true });
    } catch (e) {
      // Another instance starting at the same time added it first.
      if (!(await clients.get(DEMO_CLIENT))) throw e;
    }
  }
  return clients.issueToken(DEMO_CLIENT, undefined, token);
}

/** Rewrites every record of a table through the codec, so columns added by a dictionary change hold their values. */
async function backfill(model: ServiceModel, stores: RecordStores, writer: RecordWriter, table: string): Promise<void> {
  const set = model.entitySets.find((s) => s.table === table);
  if (!set) return;
  const store = stores.store(set);
  const key = set.fieldsByName[set.key];
  const order = [{ field: key, column: key.column!, direction: 'asc' as const }];
  let last: unknown[] | undefined;
  for (;;) {
    const page = await store.query({ after: last, orderBy: order, limit: 500, projection: WHOLE_RECORD });
    if (page.records.length === 0) return;
    await writer.transaction((tx) => tx.upsert(set, page.records.map((json) => store.encode(JSON.parse(json)))));
    last = page.sortValues[page.sortValues.length - 1];
  }
}
