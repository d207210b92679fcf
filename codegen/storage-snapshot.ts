/**
 * The storage a dictionary gives (tables, value tables, each set's fields as they shape stored records, lookup
 * values), kept beside the migrations as `generated/migrations/schema.json`: the next `generate` diffs the
 * dictionary against it to write the next migration, as Prisma Migrate diffs its schema against its last one.
 */
import type { FieldShape, StorageSnapshot } from '../src/model/migration';
import type { BuiltModel } from './build-model';

export const SNAPSHOT_FILE = 'migrations/schema.json';

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
