/**
 * The work a process does once before it serves or writes, in one place: the schema and the records brought to
 * the dictionary (storage/migrations/: the schema's migrations, then the records converted), the rows every instance shares (the
 * modification clock, the paging secret), the reference data (Lookup and Field), the demo client, and for a
 * server on an empty database, the demo data. Of several instances starting together on one database, one does it while
 * the others wait (storage/tables/startup-lock.ts) and then find it done; each step also creates only what is absent
 * and accepts what is there, so the work is safe to repeat after an instance died halfway.
 */
import { sha256 } from '../foundation/digest';
import type { ClientRegistry } from '../auth/clients';
import { licenceProblems } from '../auth/licence';
import { touchRecords } from '../ingest/ingest';
import { migrate } from '../storage/migrations/migrate';
import { storedShapeOf } from '../storage/migrations/record-migration';
import type { ServiceModel } from '../model/service-model';
import { SkipTokens } from '../paging/skiptoken';
import { WHOLE_RECORD } from '../query/projection';
import { seedDemoData } from '../demo/demo-data';
import { demoAnchor } from '../demo/set-plan';
import type { Database } from '../storage/db/database';
import type { RecordStores } from '../storage/records/record-stores';
import type { RecordWriter } from '../storage/records/record-writer';
import { SchemaMigrator } from '../storage/migrations/schema-migrator';
import { dictionaryRows, syncReferenceData } from '../storage/records/reference-data';
import { ensureSettingsTable } from '../storage/tables/settings-table';
import type { Settings } from '../storage/tables/settings';
import type { StartupLock } from '../storage/tables/startup-lock';

export const DEMO_CLIENT = 'demo';

/** The settings row that says demo data is being written: a start that finds it there finishes the seeding. */
const SEEDING = 'demo-seeding';
/** The settings row holding the fingerprint of the work last done under the start-up lock. */
export const PREPARED_FOR = 'prepared-for';
/** Changed when the locked work changes in a way a stored fingerprint must not hide. */
const STARTUP_WORK_VERSION = 3;

export interface StartupParts {
  readonly model: ServiceModel;
  readonly db: Database;
  readonly stores: RecordStores;
  readonly writer: RecordWriter;
  readonly settings: Settings;
  readonly clients: ClientRegistry;
  readonly startupLock: StartupLock;
}

export interface StartupOptions {
  /** Signs $skiptoken values; without it, the secret kept in the database (shared by every instance on it). */
  readonly pagingSecret?: string;
  /** Registered as a static token of the `demo` client. */
  readonly demoToken?: string;
  /** Demo listings written when the database has no demo data yet (the server's SEED_LISTINGS); none by default. */
  readonly seedListings?: number;
  readonly log?: (line: string) => void;
}

/** What the start-up work leaves the process. */
export interface Started {
  /** Signs and reads $skiptoken values. */
  readonly skipTokens: SkipTokens;
  /** Set when this start wrote the demo data and created the `demo` client without DEMO_TOKEN: its new token, to show once. */
  readonly newDemoToken?: string;
}

/**
 * Runs the start-up work. Throws StartupInProgress while another instance is doing it, DatabaseUnavailable
 * while the database cannot be used; both are worth trying again.
 */
export async function startUp(parts: StartupParts, options: StartupOptions): Promise<Started> {
  const { db, settings } = parts;
  await ensureSettingsTable(db);
  const fingerprint = workFingerprint(parts);
  // A database prepared for this dictionary already: nothing to do under the lock, so instances start side by side.
  const prepared = (await settings.get(PREPARED_FOR)) === fingerprint && !(await seedingNeeded(parts, options.seedListings ?? 0));
  const newDemoToken = prepared ? undefined : await parts.startupLock.holding(async () => {
    const token = await prepare(parts, options);
    await db.transaction((tx) => settings.set(tx, PREPARED_FOR, fingerprint));
    return token;
  }, options.log);
  // Each instance's own part: values any instance may write at once (insert-if-absent, upsert).
  const secret = options.pagingSecret ? Buffer.from(options.pagingSecret, 'utf8') : await settings.pagingSecret();
  if (options.demoToken) await ensureDemoClient(parts.clients, options.demoToken);
  return { skipTokens: new SkipTokens(secret), ...(newDemoToken ? { newDemoToken } : {}) };
}

/** The work done under the start-up lock; returns the new demo client's token when it made one. */
async function prepare(parts: StartupParts, options: StartupOptions): Promise<string | undefined> {
  await migrate(parts, (tx, set, keys) => touchRecords(parts, tx, set, keys), options.log);
  // A dictionary change can leave a client's scope naming a field that is gone: its requests are refused until corrected.
  for (const problem of licenceProblems(parts.model, await parts.clients.list())) {
    options.log?.(`${problem}; its requests are refused (403) until an operator corrects it (reso-server clients scope)`);
  }
  await parts.settings.ensureClock();
  await syncReferenceData(parts.model, parts.stores, parts.writer);
  const seeded = await seedIfEmpty(parts, options.seedListings ?? 0, options.log);
  return seeded && !options.demoToken ? ensureDemoClient(parts.clients) : undefined;
}

/**
 * What the locked work makes of a database, as a hash: the schema's migrations, the shape of every set's stored
 * records and the reference data. Stored once the work is done, it tells the next start whether there is any left to do.
 */
function workFingerprint(parts: StartupParts): string {
  const { model, db } = parts;
  const reference = model.entitySets.flatMap((s) => (s.dictionaryRows ? [dictionaryRows(model, s.dictionaryRows)] : []));
  const shapes = model.entitySets.map((s) => storedShapeOf(model, s));
  return sha256(JSON.stringify([STARTUP_WORK_VERSION, new SchemaMigrator(db, model).names, shapes, reference]));
}

/** The `demo` client (admin, all listings), with `token` as a static token; returns the token. */
export async function ensureDemoClient(clients: ClientRegistry, token?: string): Promise<string> {
  if (!(await clients.get(DEMO_CLIENT))) await clients.register({ id: DEMO_CLIENT, name: 'Demo client', admin: true });
  return clients.issueToken(DEMO_CLIENT, undefined, token);
}

/**
 * Writes the demo data when there is none (no listings, or for a dictionary without listings, no record of the first
 * set the demo writes), or when a start that was writing it died halfway (the data is deterministic and written by key,
 * so writing it again completes it); returns whether it wrote.
 */
async function seedIfEmpty(parts: StartupParts, listings: number, log?: (line: string) => void): Promise<boolean> {
  if (!(await seedingNeeded(parts, listings))) return false;
  const unfinished = (await parts.settings.get(SEEDING)) !== undefined;
  await parts.db.transaction((tx) => parts.settings.set(tx, SEEDING, String(listings)));
  log?.(`${unfinished ? 'demo data left unfinished by an earlier start' : 'empty database'}: seeding ${listings} demo listings`);
  await seedDemoData(parts, { listings }, log);
  await parts.settings.remove(SEEDING);
  return true;
}

async function seedingNeeded(parts: StartupParts, listings: number): Promise<boolean> {
  const anchor = demoAnchor(parts.model);
  if (listings <= 0 || !anchor) return false;
  if ((await parts.settings.get(SEEDING)) !== undefined) return true;
  // Whether there is any record, without counting them all.
  const key = anchor.fieldsByName[anchor.key];
  const first = await parts.stores.store(anchor).query({ orderBy: [{ field: key, column: key.column!, direction: 'asc' }], limit: 1, projection: WHOLE_RECORD });
  return first.records.length === 0;
}
