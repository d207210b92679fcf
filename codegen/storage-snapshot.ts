/**
 * The storage a dictionary gives (tables, value tables, each set's fields as they shape stored records, lookup
 * values), kept beside the migrations as `generated/migrations/schema.json`: the next `generate` diffs the
 * dictionary against it to write the next migration, as Prisma Migrate diffs its schema against its last one.
 */
import type { FieldSpec, TableSpec, ValueTableSpec } from '../src/model/service-model';
import type { BuiltModel } from './build-model';
import type { EmittedFile } from './emitted-file';

export const SNAPSHOT_FILE = 'migrations/schema.json';

/**
 * A field as it shapes stored records: what a migration compares to decide what the records must undergo;
 * `unindexed`: filterable or sortable without an index (Policy.UnindexedProperties).
 */
export type FieldShape = Pick<FieldSpec, 'name' | 'type' | 'collection' | 'nullable' | 'maxLength' | 'precision' | 'scale' | 'lookupName' | 'filterable' | 'sortable'>
  & { readonly unindexed?: true };

/** The storage a dictionary gives, as `generated/migrations/schema.json` keeps it. */
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

/** What the output folder held before this run: the snapshot and the migrations generated so far. */
export interface PreviousOutput {
  readonly snapshot?: StorageSnapshot;
  /** By file name (`0001-….ts`), in order. */
  readonly migrations: readonly EmittedFile[];
}

export function snapshotOf(model: BuiltModel, generatedBy: string, migration: string): StorageSnapshot {
  return {
    generatedBy,
    migration,
    tables: model.tables,
    valueTables: model.valueTables,
    sets: model.entitySets.map((s) => ({
      name: s.name,
      table: s.table,
      key: s.key,
      fields: s.fields.map((f): FieldShape => compact({
        name: f.name, type: f.type, collection: f.collection, nullable: f.nullable, maxLength: f.maxLength,
        precision: f.precision, scale: f.scale, lookupName: f.lookupName, filterable: f.filterable, sortable: f.sortable,
        unindexed: f.unindexed,
      })),
    })),
    lookups: model.lookups.map((l) => ({ name: l.name, values: l.values.map((v) => v.value) })),
  };
}

/** The snapshot as the file holds it: stable key order, one line per column, field and lookup value list. */
export function snapshotText(snapshot: StorageSnapshot): string {
  return `${JSON.stringify(snapshot, null, 1)}\n`;
}

function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
