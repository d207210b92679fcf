/**
 * The schema's history, applied by knex's migration machinery (knex.migrate with a migration source of our
 * own): first the service's own tables (service-migrations.ts, written by hand), then the dictionary's
 * migrations (generated/migrations/, one per dictionary change). The caller holds the start-up lock, so
 * one instance migrates while the others answer 503; knex's own lock row is freed first, since an instance
 * that died holding it is exactly what the start-up lock's takeover already decided about.
 * - SQLite: every pending migration runs in one transaction (SQLite's DDL is transactional): all or nothing.
 * - MariaDB/MySQL: DDL commits by itself, so a migration cut short (a killed process) is run again from its
 *   start; each statement either happened whole or not at all, and one that finds its work done (a column
 *   already added, an index already dropped) counts as done.
 */
import type { Knex } from 'knex';
import type { DictionaryMigration, MigrationStorage } from '../../model/migration';
import type { ServiceModel, TableSpec } from '../../model/service-model';
import type { Database } from '../db/database';
import { NO_PAD_BINARY_COLLATION } from '../sql/mysql-dialect';
import { SERVICE_MIGRATIONS } from './service-migrations';
import { rebuiltTable } from './table-rebuild';

const MIGRATIONS_TABLE = 'reso_migrations';

/** A migration as the database records it: the service's own, or the dictionary's. */
interface NamedMigration {
  /** `service/0001-…` or `dictionary/0001-…`, as recorded in reso_migrations. */
  readonly name: string;
  readonly migration: DictionaryMigration;
}

/** A pending migration as `migrate --dry-run` shows it. */
export interface PendingMigration {
  readonly name: string;
  readonly changes: readonly string[];
  /** The statements, as knex writes them for this database (SQLite's table rebuilds are said, not listed). */
  readonly statements: readonly string[];
}

/** Errors of a statement that finds its work already done (a re-run after a cut-short migration on MariaDB). */
const ALREADY_DONE = new Set(['ER_TABLE_EXISTS_ERROR', 'ER_DUP_FIELDNAME', 'ER_DUP_KEYNAME', 'ER_CANT_DROP_FIELD_OR_KEY', 'ER_BAD_TABLE_ERROR']);

export class SchemaMigrator {
  private readonly migrations: readonly NamedMigration[];

  private readonly tables: readonly string[];
  /** What the model reads: every table (value tables too), its columns, and the indexes its filters rely on. */
  private readonly expected: readonly { readonly name: string; readonly columns: readonly string[]; readonly indexes: TableSpec['indexes'] }[];

  constructor(private readonly db: Database, model: Pick<ServiceModel, 'migrations' | 'tables' | 'valueTables'>) {
    this.tables = model.tables.map((t) => t.name);
    this.expected = [...model.tables, ...model.valueTables]
      .map((t) => ({ name: t.name, columns: t.columns.map((c) => c.name), indexes: t.indexes }));
    this.migrations = [
      ...SERVICE_MIGRATIONS.map((m) => ({ name: `service/${m.name}`, migration: m })),
      ...model.migrations.map((m) => ({ name: `dictionary/${m.name}`, migration: m })),
    ];
  }

  /** Every migration's recorded name, oldest first: what a database brought up to date holds. */
  get names(): readonly string[] {
    return this.migrations.map((m) => m.name);
  }

  async hasTable(table: string): Promise<boolean> {
    return this.db.schemaWork((knex) => knex.schema.hasTable(table));
  }

  /** The migrations this database has not had yet, without changing anything. */
  async pending(): Promise<PendingMigration[]> {
    return this.db.schemaWork(async (knex) => {
      const done = new Set(await this.applied(knex));
      const adopting = done.size === 0 && (await this.isFromBeforeMigrations(knex));
      return this.migrations
        .filter((m) => !done.has(m.name) && !(adopting && this.adoptable(m)))
        .map((m) => ({ name: m.name, changes: m.migration.changes, statements: this.statements(knex, m.migration) }));
    });
  }

  /** Applies the pending migrations (the caller holds the start-up lock); returns the names applied. */
  async apply(log?: (line: string) => void): Promise<PendingMigration[]> {
    return this.db.schemaWork(async (knex) => {
      const pending = await this.pendingIn(knex);
      if (pending.length === 0) {
        await this.verify(knex);
        return [];
      }
      if ((await this.applied(knex)).length === 0 && (await this.isFromBeforeMigrations(knex))) await this.adopt(knex, log);
      const config = this.config();
      await knex.migrate.forceFreeMigrationsLock(config);
      const started = performance.now();
      const [, names] = (await knex.migrate.latest(config)) as [number, string[]];
      const applied = this.migrations.filter((m) => names.includes(m.name));
      await this.verify(knex);
      for (const m of applied) log?.(`migration ${m.name} applied: ${m.migration.changes.join('; ')}`);
      if (applied.length) log?.(`${applied.length} migration(s) applied in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      return applied.map((m) => ({ name: m.name, changes: m.migration.changes, statements: [] }));
    });
  }

  /**
   * Every table and column the model reads is there, and every index its filters and orders rely on. A migration
   * history that was replaced (a dictionary generated into an empty folder, whose 0001 is not the one the database
   * had) would otherwise go unnoticed until the first statement failed; an index dropped by hand, never: filters
   * the dictionary promises are indexed would scan the whole table, which is what the spec's 501 exists to prevent.
   */
  private async verify(knex: Knex): Promise<void> {
    const missing: string[] = [];
    const recreate: string[] = [];
    for (const t of this.expected) {
      const columns = await knex(t.name).columnInfo() as Record<string, unknown>;
      if (Object.keys(columns).length === 0) {
        missing.push(`table ${t.name}`);
        continue;
      }
      missing.push(...t.columns.filter((c) => !(c in columns)).map((c) => `${t.name}.${c}`));
      const indexes = new Set(((await this.db.dialect.indexNames(knex, t.name)) as { name: string }[]).map((r) => r.name));
      for (const index of t.indexes.filter((i) => !indexes.has(i.name))) {
        missing.push(`index ${index.name} of ${t.name}`);
        recreate.push(knex.schema.alterTable(t.name, (table) => { table.index([...index.columns], index.name); }).toString());
      }
    }
    if (missing.length) throw new SchemaMismatch(missing, recreate);
  }

  private async pendingIn(knex: Knex): Promise<NamedMigration[]> {
    const done = new Set(await this.applied(knex));
    return this.migrations.filter((m) => !done.has(m.name));
  }

  /** The names the database records; refuses a database that records migrations this build does not know. */
  private async applied(knex: Knex): Promise<string[]> {
    if (!(await knex.schema.hasTable(MIGRATIONS_TABLE))) return [];
    const rows = await knex(MIGRATIONS_TABLE).select('name').orderBy('id') as { name: string }[];
    const known = new Set(this.names);
    const unknown = rows.map((r) => r.name).filter((n) => !known.has(n));
    if (unknown.length) throw new NewerSchema(unknown);
    return rows.map((r) => r.name);
  }

  private config(): Knex.MigratorConfig {
    const source: Knex.MigrationSource<NamedMigration> = {
      getMigrations: async () => [...this.migrations],
      getMigrationName: (m) => m.name,
      getMigration: async (m) => ({
        up: (knex: Knex) => this.run(knex, m.migration),
        down: async () => { throw new Error('migrations only go forward: revert the dictionary change and generate again'); },
      }),
    };
    // MariaDB's DDL commits by itself: a transaction around it would promise what it cannot keep.
    return { migrationSource: source, tableName: MIGRATIONS_TABLE, disableTransactions: this.db.dialect.name === 'mysql' };
  }

  /**
   * What a migration's steps are told about this database. `listed`: for a dry run's listing, which leaves out the
   * table options (the collation is read from the server only when migrations run).
   */
  private storage(listed = false): MigrationStorage {
    const mysql = this.db.dialect.name === 'mysql';
    const tableOptions = (table: Knex.CreateTableBuilder) => {
      if (!mysql || listed) return;
      table.charset('utf8mb4');
      table.collate(this.collation!);
    };
    return { tableOptions, rowsReadInColumnOrder: !mysql, rebuilt: (knex, table) => rebuiltTable(knex, table, tableOptions) };
  }

  /** The collation every table takes on MariaDB/MySQL, which names it differently; read once from the server. */
  private collation?: string;

  private async run(knex: Knex, migration: DictionaryMigration): Promise<void> {
    if (this.db.dialect.name === 'mysql') {
      this.collation ??= ((await knex.raw(`SELECT ${NO_PAD_BINARY_COLLATION} AS c`)) as [{ c: string }[]])[0][0].c;
    }
    for (const step of migration.steps(knex, this.storage())) {
      if (this.db.dialect.name === 'sqlite') {
        await step;
        continue;
      }
      for (const s of step.toSQL()) await ranOrDone(knex.raw(s.sql, s.bindings));
    }
  }

  private statements(knex: Knex, migration: DictionaryMigration): string[] {
    return migration.steps(knex, this.storage(true)).flatMap((step) => step.toSQL().map((s: { sql: string; statementsProducer?: unknown }) => (
      s.statementsProducer ? `-- SQLite rebuilds the table to alter it (${s.sql})` : s.sql)));
  }

  /**
   * A database made by a reso-server from before migrations: it has the dictionary's tables but no history. It
   * is taken to be at the first migration of each kind (what that server created); later ones run as usual,
   * and the schema check after the start-up work says if that was wrong.
   */
  private async isFromBeforeMigrations(knex: Knex): Promise<boolean> {
    for (const table of this.tables) if (await knex.schema.hasTable(table)) return true;
    return false;
  }

  private adoptable(m: NamedMigration): boolean {
    return m.migration === SERVICE_MIGRATIONS[0] || m === this.migrations.find((x) => x.name.startsWith('dictionary/'));
  }

  private async adopt(knex: Knex, log?: (line: string) => void): Promise<void> {
    const names = this.migrations.filter((m) => this.adoptable(m)).map((m) => m.name);
    await knex.migrate.list(this.config()); // creates knex's tables
    await knex(MIGRATIONS_TABLE).insert(names.map((name) => ({ name, batch: 0, migration_time: new Date() })));
    log?.(`a database from before migrations: taken to be at ${names.join(' and ')}`);
  }
}

async function ranOrDone(statement: Promise<unknown>): Promise<void> {
  try {
    await statement;
  } catch (e) {
    if (!ALREADY_DONE.has((e as { code?: string }).code ?? '')) throw e;
  }
}

/** The database records migrations this build does not know: a newer dictionary or server has run on it. */
export class NewerSchema extends Error {
  constructor(readonly unknown: readonly string[]) {
    super(`the database has been migrated past this build (it records ${unknown.join(', ')}, which this build does not have): `
      + 'run the build that made them (or a newer one); this one would serve a stale model');
  }
}

/**
 * The schema after the migrations is not the one the model reads. `recreate`: the statements that make the missing
 * indexes again (an index is missing when it was dropped outside the migrations; tables and columns when the
 * migration history was replaced).
 */
export class SchemaMismatch extends Error {
  constructor(readonly missing: readonly string[], recreate: readonly string[] = []) {
    const structural = missing.length > recreate.length;
    super(`the database's schema does not match this build's migrations (missing: ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''}): `
      + (structural ? 'was generated/ regenerated into an empty folder? Keep generated/migrations/ and generate on top of it, so each change is the next migration' : '')
      + (structural && recreate.length ? '; ' : '')
      + (recreate.length ? `an index dropped outside the migrations; make it again with ${recreate.join('; ')}` : ''));
  }
}
