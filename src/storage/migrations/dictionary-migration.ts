/**
 * A dictionary migration as storage's migrator runs it (schema-migrator.ts) and the generator writes it under
 * `generated/migrations/`: the schema part of one dictionary change, the steps that take the tables from the
 * previous snapshot to the next, each a knex schema builder. What the change does to the records (values
 * converted, fields dropped, ModificationTimestamps moved) is not written here: it follows from the dictionary the
 * server runs, and storage does it after the steps (record-migration.ts). The model carries the migrations
 * without knowing what a step is (model/migration.ts, ModelMigration): knex stays in storage.
 */
import type { Knex } from 'knex';
import type { ModelMigration } from '../../model/migration';
import type { RebuiltTable } from './table-rebuild';

/** What the generated steps may ask of the database they run on, beside knex itself. */
export interface MigrationStorage {
  /** Table options every table of the service takes (MariaDB: utf8mb4 with the binary no-pad collation; SQLite: none). */
  tableOptions(table: Knex.CreateTableBuilder): void;
  /**
   * The database reads a row's columns in their order (SQLite): a column is cheap to read only when it is stored
   * before the record column (kilobytes, in overflow pages), so a table gains storage's own column by being made
   * anew, inside the migration's transaction. MariaDB reads a row whole: the column is added in place, one ALTER
   * at a time, each of which a re-run after a cut finds done.
   */
  readonly rowsReadInColumnOrder: boolean;
  /** A table made anew (table-rebuild.ts), where rows are read in column order. */
  rebuilt(knex: Knex, table: RebuiltTable): Knex.SchemaBuilder[];
}

export interface DictionaryMigration extends ModelMigration {
  /** The schema steps, in order; each is one knex schema builder (built, not yet run). */
  readonly steps: (knex: Knex, storage: MigrationStorage) => Knex.SchemaBuilder[];
}

/**
 * The model's migrations as storage runs them. Every one is a DictionaryMigration: the generator writes each with
 * that type (and `generate` keeps the import of it current in the migrations written before), so the compiler
 * has checked its steps where they are written.
 */
export function runnable(migrations: readonly ModelMigration[]): readonly DictionaryMigration[] {
  return migrations as readonly DictionaryMigration[];
}
