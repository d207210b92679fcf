/**
 * Schema statements from table specs, through the dialect's hooks: CREATE TABLE with its primary key and
 * indexes, and the ALTER TABLE that adds a column a dictionary change made filterable or sortable.
 */
import type { ColumnSpec, TableSpec, ValueTableSpec } from '../model/service-model';
import { VALUE_TABLE_KEY, VALUE_TABLE_VALUE } from '../model/service-model';
import type { SqlDialect } from './dialect';

export interface Table {
  readonly name: string;
  readonly columns: readonly ColumnSpec[];
  readonly primaryKey: readonly string[];
  readonly indexes: readonly { readonly name: string; readonly columns: readonly string[] }[];
}

export function fromTableSpec(t: TableSpec): Table {
  return { ...t, primaryKey: [t.primaryKey] };
}

/** A value table: each record's elements once, found by record (the primary key) or by value (the index). */
export function fromValueTableSpec(t: ValueTableSpec): Table {
  return { name: t.name, columns: t.columns, primaryKey: [VALUE_TABLE_KEY, VALUE_TABLE_VALUE], indexes: t.indexes };
}

/** CREATE TABLE, then one CREATE INDEX per index. `collation`: the one every table uses, where there is a choice. */
export function createTable(d: SqlDialect, t: Table, collation: string | undefined): string[] {
  const columns = t.columns.map((c) => columnDefinition(d, c));
  const key = `PRIMARY KEY (${names(d, t.primaryKey)})`;
  return [
    `CREATE TABLE ${d.id(t.name).sql} (${[...columns, key].join(', ')})${d.tableOptions(collation)}`,
    ...t.indexes.map((ix) => createIndex(d, t.name, ix)),
  ];
}

/** A column added to a table with rows: nullable, whatever the spec says (the caller fills it in). */
export function addColumn(d: SqlDialect, table: string, c: ColumnSpec): string {
  return `ALTER TABLE ${d.id(table).sql} ${d.addColumn()} ${columnDefinition(d, { ...c, nullable: true })}`;
}

export function createIndex(d: SqlDialect, table: string, ix: Table['indexes'][number]): string {
  return `CREATE INDEX ${d.id(ix.name).sql} ON ${d.id(table).sql} (${names(d, ix.columns)})`;
}

function columnDefinition(d: SqlDialect, c: ColumnSpec): string {
  return `${d.id(c.name).sql} ${d.columnType(c)}${c.nullable ? '' : ' NOT NULL'}`;
}

function names(d: SqlDialect, columns: readonly string[]): string {
  return columns.map((c) => d.id(c).sql).join(', ');
}
