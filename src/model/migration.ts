/**
 * What a migration is, as the generator writes one under `generated/migrations/` per dictionary change and the
 * service writes its own (storage/migrations/service-migrations.ts): the contract generated code compiles
 * against, as a Prisma client compiles against its published runtime. A migration is the schema part of one
 * change, the steps that take the tables from the previous snapshot to the next, each a knex schema builder
 * (knex's types only: nothing here loads knex or reaches storage). Storage runs them (storage/migrations/):
 * knex's migrator, the table rebuild, and what the change does to the records (values converted, fields
 * dropped, ModificationTimestamps moved), which follows from the dictionary the server runs.
 */
import type { Knex } from 'knex';

export interface DictionaryMigration {
  /** `NNNN-slug`: the order of migrations is the order of their numbers. */
  readonly name: string;
  /** What changed in the dictionary, one line each, as `migrate --dry-run` and the start-up log say it. */
  readonly changes: readonly string[];
  /** The schema steps, in order; each is one knex schema builder (built, not yet run). */
  readonly steps: (knex: Knex, storage: MigrationStorage) => Knex.SchemaBuilder[];
}

/** What the steps may ask of the database they run on, beside knex itself. */
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
  /** A table made anew (storage/migrations/table-rebuild.ts), where rows are read in column order. */
  rebuilt(knex: Knex, table: RebuiltTable): Knex.SchemaBuilder[];
}

/** A table as a rebuild step makes it anew: its next shape, and which of its columns keep their values. */
export interface RebuiltTable {
  readonly name: string;
  /** Every column, in the next order. */
  readonly columnNames: readonly string[];
  /** The columns whose values are copied (the others start null and are refilled from the records). */
  readonly copied: readonly string[];
  /** The table's columns, in that order, and its key. */
  readonly columns: (table: Knex.CreateTableBuilder) => void;
  /** Its secondary indexes. */
  readonly indexes: (table: Knex.AlterTableBuilder) => void;
}
