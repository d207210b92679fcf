/**
 * Creates the storage schema from the generated table specs and the service's own tables. Idempotent:
 * tables and indexes that exist are left alone, so every start may call it. Start-up runs it under the
 * start-up lock (startup-lock.ts), whose row lives in the settings table: that table alone is created first,
 * by every instance, so several may do that at once (create-if-absent.ts).
 */
import type { TableSpec, ValueTableSpec } from '../model/service-model';
import type { Database, Executor } from './database';
import type { SqlDialect } from './dialect';
import { runUnlessExists } from './create-if-absent';
import { INTERNAL_TABLES, SETTINGS_TABLE } from './internal-schema';
import { addColumn, createIndex, createTable, fromTableSpec, fromValueTableSpec, Table } from './schema-statements';

/**
 * Tables that gained columns or value tables (by the table, the new columns' and value tables' names): their
 * existing rows need them filled from the stored records.
 */
export type AddedColumns = Map<string, string[]>;

export async function ensureSchema(db: Database, tables: readonly TableSpec[], valueTables: readonly ValueTableSpec[] = []): Promise<AddedColumns> {
  const added: AddedColumns = new Map();
  const d = db.dialect;
  await db.schemaChange(async (ex) => {
    const collation = await binaryCollation(d, ex);
    for (const table of INTERNAL_TABLES) {
      if (!(await hasTable(d, ex, table.name))) await create(d, ex, table, collation);
    }
    const existing = new Set<string>();
    for (const spec of tables) {
      const table = fromTableSpec(spec);
      if (!(await hasTable(d, ex, table.name))) {
        await create(d, ex, table, collation);
        continue;
      }
      existing.add(table.name);
      const missing = await addMissingColumns(d, ex, table);
      if (missing.length) added.set(table.name, missing);
    }
    // A value table new beside a table with records (a dictionary change made the collection filterable, or a
    // database from before value tables): the caller fills it from the stored records, as it fills new columns.
    for (const spec of valueTables) {
      const table = fromValueTableSpec(spec);
      if (await hasTable(d, ex, table.name)) continue;
      await create(d, ex, table, collation);
      if (existing.has(spec.table)) added.set(spec.table, [...(added.get(spec.table) ?? []), table.name]);
    }
  });
  return added;
}

/** The settings table, where the start-up lock is kept, unless it is there. */
export async function ensureSettingsTable(db: Database): Promise<void> {
  const d = db.dialect;
  const table = INTERNAL_TABLES.find((t) => t.name === SETTINGS_TABLE)!;
  await db.schemaChange(async (ex) => {
    if (!(await hasTable(d, ex, table.name))) await create(d, ex, table, await binaryCollation(d, ex));
  });
}

/** The collation the tables use (strings compare by code point, trailing spaces count), where there is a choice. */
async function binaryCollation(d: SqlDialect, ex: Executor): Promise<string | undefined> {
  const q = d.collationQuery();
  return q ? ((await ex.all(q.sql, q.params))[0].c as string) : undefined;
}

async function hasTable(d: SqlDialect, ex: Executor, table: string): Promise<boolean> {
  const q = d.tableExists(table);
  return (await ex.all(q.sql, q.params)).length > 0;
}

async function create(d: SqlDialect, ex: Executor, table: Table, collation: string | undefined): Promise<void> {
  for (const statement of createTable(d, table, collation)) await runUnlessExists(ex, statement);
}

/**
 * A dictionary change that makes a field filterable or sortable adds its column and index to an existing
 * table (nullable: the caller fills it from the stored records). Columns are never dropped here.
 */
async function addMissingColumns(d: SqlDialect, ex: Executor, table: Table): Promise<string[]> {
  const q = d.columnNames(table.name);
  const present = new Set((await ex.all(q.sql, q.params)).map((r) => r.name as string));
  const missing = table.columns.filter((c) => !present.has(c.name));
  if (missing.length === 0) return [];
  // One at a time: another instance starting at the same time may add some of them (and fills what it adds).
  const added: string[] = [];
  for (const c of missing) if (await runUnlessExists(ex, addColumn(d, table.name, c))) added.push(c.name);
  const names = new Set(added);
  for (const ix of table.indexes.filter((i) => i.columns.some((c) => names.has(c)))) await runUnlessExists(ex, createIndex(d, table.name, ix));
  return added;
}
