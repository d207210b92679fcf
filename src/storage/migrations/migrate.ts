/**
 * A dictionary change applied to a live database, as the start-up work and `reso-server migrate` run it
 * (under the start-up lock): the records are checked against the new dictionary first, then the schema's
 * migrations run (schema-migrator.ts), then the records are converted (record-migration.ts). `plan` says what that
 * would do without doing it (`migrate --dry-run`).
 */
import { SETTINGS_TABLE } from '../tables/internal-schema';
import { PendingMigration, SchemaMigrator } from './schema-migrator';
import { MigrationParts, MigrationRefused, RecordMigration, RecordTouch, SetConversion } from './record-migration';

export interface MigrationPlan {
  /** Schema migrations not yet applied, with their statements. */
  readonly pending: readonly PendingMigration[];
  /** What converting each set whose records are in another shape would do. */
  readonly records: readonly SetConversion[];
}

export interface MigrationReport {
  readonly applied: readonly PendingMigration[];
  readonly records: readonly SetConversion[];
}

export async function planMigration(parts: MigrationParts): Promise<MigrationPlan> {
  const migrator = new SchemaMigrator(parts.db, parts.model);
  const pending = await migrator.pending();
  const records = new RecordMigration(parts);
  // A database never started has no settings yet: every set is due, and has no records.
  const started = await migrator.hasTable(SETTINGS_TABLE);
  const due = await records.due((name) => (started ? parts.settings.get(name) : Promise.resolve(undefined)));
  return { pending, records: await records.check(due, (t) => migrator.hasTable(t)) };
}

/**
 * Applies whatever is due; throws MigrationRefused (nothing changed) when a stored record cannot take the change.
 * `touch` moves the timestamps of the records whose served content the change altered (RecordTouch).
 */
export async function migrate(parts: MigrationParts, touch: RecordTouch, log?: (line: string) => void): Promise<MigrationReport> {
  const records = new RecordMigration(parts);
  const due = await records.due();
  const migrator = new SchemaMigrator(parts.db, parts.model);
  const checked = await records.check(due, (t) => migrator.hasTable(t));
  const refused = checked.filter((c) => c.refusedCount > 0);
  if (refused.length) throw new MigrationRefused(refused);
  const applied = await migrator.apply(log);
  return { applied, records: await records.apply(due, touch, log) };
}
