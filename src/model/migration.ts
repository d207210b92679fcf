/**
 * The shape of a dictionary migration, as the generator writes it under `generated/migrations/` and storage's
 * migrator runs it (src/storage/migrations/). A migration holds the schema part of one dictionary change: the
 * steps that take the tables from the previous snapshot to the next, each a knex schema builder. What the
 * change does to the records (values converted, fields dropped, ModificationTimestamps moved) is not written
 * here: it follows from the dictionary the server runs, and storage does it after the steps (record-migration.ts).
 */
import type { Knex } from 'knex';
import type { FieldSpec, TableSpec, ValueTableSpec } from './service-model';

/** What the generated steps may ask of the database they run on, beside knex itself. */
export interface MigrationStorage {
  /** Table options every table of the service takes (MariaDB: utf8mb4 with the binary no-pad collation; SQLite: none). */
  tableOptions(table: Knex.CreateTableBuilder): void;
}

export interface DictionaryMigration {
  /** `NNNN-slug`: the order of migrations is the order of their numbers. */
  readonly name: string;
  /** What changed in the dictionary, one line each, as `migrate --dry-run` and the start-up log say it. */
  readonly changes: readonly string[];
  /** The schema steps, in order; each is one knex schema builder (built, not yet run). */
  readonly steps: (knex: Knex, storage: MigrationStorage) => Knex.SchemaBuilder[];
}

/**
 * A field as it shapes stored records: what a migration compares to decide what the records must undergo;
 * `unindexed`: filterable or sortable without an index (Policy.UnindexedProperties).
 */
export type FieldShape = Pick<FieldSpec, 'name' | 'type' | 'collection' | 'nullable' | 'maxLength' | 'precision' | 'scale' | 'lookupName' | 'filterable' | 'sortable'>
  & { readonly unindexed?: true };

/** The storage a dictionary gives, as the generator keeps it beside its migrations (`generated/migrations/schema.json`). */
export interface StorageSnapshot {
  /** Names the generator and the dictionary; says not to edit. */
  readonly generatedBy: string;
  /** The migration that brings a database to this schema. */
  readonly migration: string;
  readonly tables: readonly TableSpec[];
  readonly valueTables: readonly ValueTableSpec[];
  readonly sets: readonly { readonly name: string; readonly table: string; readonly key: string; readonly fields: readonly FieldShape[] }[];
  readonly lookups: readonly { readonly name: string; readonly values: readonly string[] }[];
}
