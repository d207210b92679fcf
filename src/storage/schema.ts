/**
 * Creates the storage schema from the generated table specs. Idempotent: tables and indexes that
 * exist are left alone, so every start may call it.
 */
import type { Knex } from 'knex';
import type { ColumnSpec, TableSpec } from '../model/service-model';
import { Database, NO_PAD_BINARY_COLLATION } from './database';
import { alreadyExists, createIfAbsent } from './create-if-absent';
import { createInternalTables } from './internal-schema';

/** Width of stored timestamps: `YYYY-MM-DDTHH:mm:ss.sssZ`, so text order is time order on both databases. */
export const TIMESTAMP_WIDTH = 24;
export const DATE_WIDTH = 10;

/** Tables that gained columns: their existing rows need the new columns filled from the stored records. */
export type AddedColumns = Map<string, string[]>;

export async function ensureSchema(db: Database, tables: readonly TableSpec[]): Promise<AddedColumns> {
  const added: AddedColumns = new Map();
  await db.withSchemaBuilder(async (k) => {
    const collation = db.dialect === 'mysql' ? await binaryCollation(k) : undefined;
    await createInternalTables(k, collation);
    for (const table of tables) {
      const created = await createIfAbsent(() => k.schema.hasTable(table.name), () => k.schema.createTable(table.name, (t) => {
        if (collation) {
          t.charset('utf8mb4');
          t.collate(collation);
        }
        for (const c of table.columns) addColumn(t, c, db.dialect);
        t.primary([table.primaryKey]);
        for (const ix of table.indexes) t.index([...ix.columns], ix.name);
      }));
      if (created) continue;
      const missing = await addMissingColumns(k, table, db.dialect);
      if (missing.length) added.set(table.name, missing);
    }
  });
  return added;
}

/**
 * Strings compare by code point and trailing spaces count, as on SQLite: a binary collation without PAD
 * SPACE (utf8mb4_bin pads, so 'A' would equal 'A ').
 */
async function binaryCollation(k: Knex): Promise<string> {
  const rows = await k.raw(`SELECT ${NO_PAD_BINARY_COLLATION} AS c`);
  return (rows[0] as { c: string }[])[0].c;
}

function addColumn(t: Knex.CreateTableBuilder, c: ColumnSpec, dialect: Database['dialect']): void {
  let col: Knex.ColumnBuilder;
  switch (c.type) {
    case 'string': col = t.string(c.name, c.length ?? 255); break;
    case 'integer': col = t.bigInteger(c.name); break;
    case 'decimal': col = t.decimal(c.name, c.precision ?? 18, c.scale ?? 0); break;
    case 'double': col = t.double(c.name); break;
    case 'boolean': col = t.boolean(c.name); break;
    case 'date': col = t.string(c.name, DATE_WIDTH); break;
    case 'timestamp': col = t.string(c.name, TIMESTAMP_WIDTH); break;
    case 'text': col = dialect === 'mysql' ? t.text(c.name, 'mediumtext') : t.text(c.name); break;
  }
  if (!c.nullable) col.notNullable();
}

/**
 * A dictionary change that makes a field filterable or sortable adds its column and index to an existing
 * table (nullable: the caller fills it from the stored records). Columns are never dropped here.
 */
async function addMissingColumns(k: Knex, table: TableSpec, dialect: Database['dialect']): Promise<string[]> {
  const added: string[] = [];
  // One at a time: another instance starting at the same time may add some of them.
  for (const c of table.columns) {
    const column = () => k.schema.alterTable(table.name, (t) => addColumn(t as unknown as Knex.CreateTableBuilder, { ...c, nullable: true }, dialect));
    if (await createIfAbsent(() => k.schema.hasColumn(table.name, c.name), column)) added.push(c.name);
  }
  for (const ix of table.indexes.filter((x) => x.columns.some((c) => added.includes(c)))) {
    try {
      await k.schema.alterTable(table.name, (t) => { t.index([...ix.columns], ix.name); });
    } catch (e) {
      if (!alreadyExists(e)) throw e;
    }
  }
  return added;
}
