/**
 * Dictionary migrations as the model knows them: the generator writes one under `generated/migrations/` per
 * dictionary change, from the storage snapshots below, and the service model lists them. What their steps are
 * (schema builders) is storage's business (src/storage/migrations/dictionary-migration.ts): the model depends on
 * no SQL library.
 */
import type { FieldSpec, TableSpec, ValueTableSpec } from './service-model';

/** A migration as the model carries it: storage's DictionaryMigration, whose steps only storage runs. */
export interface ModelMigration {
  /** `NNNN-slug`: the order of migrations is the order of their numbers. */
  readonly name: string;
  /** What changed in the dictionary, one line each, as `migrate --dry-run` and the start-up log say it. */
  readonly changes: readonly string[];
  readonly steps: unknown;
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
