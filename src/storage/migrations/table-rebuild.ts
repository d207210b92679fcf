/**
 * A table made anew in its next shape (MigrationStorage.rebuilt, a generated migration's rebuild step): created
 * under another name, the values of the columns it keeps copied over, put in the old one's place, its indexes
 * made again. Only where a migration is one transaction (SQLite): a cut leaves the table as it was.
 */
import type { Knex } from 'knex';
import type { RebuiltTable } from '../../model/migration';

export function rebuiltTable(knex: Knex, t: RebuiltTable, tableOptions: (table: Knex.CreateTableBuilder) => void): Knex.SchemaBuilder[] {
  const [rebuilt, replaced] = [`${t.name}__rebuilt`, `${t.name}__replaced`];
  const values = t.columnNames.map((c) => (t.copied.includes(c) ? knex.ref(c) : knex.raw('?', [null])));
  // Identifiers and NULLs only, so rendered once by knex for the database it runs on.
  const copy = knex(rebuilt).insert(knex(t.name).select(values)).toQuery();
  return [
    knex.schema.createTable(rebuilt, (table) => {
      t.columns(table);
      tableOptions(table);
    }),
    knex.schema.raw(copy),
    // knex's types say renameTable returns a promise; it returns the schema builder, as every other call here.
    knex.schema.renameTable(t.name, replaced) as unknown as Knex.SchemaBuilder,
    knex.schema.renameTable(rebuilt, t.name) as unknown as Knex.SchemaBuilder,
    knex.schema.dropTable(replaced),
    knex.schema.alterTable(t.name, t.indexes),
  ];
}
