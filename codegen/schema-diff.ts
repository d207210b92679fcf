/**
 * The difference between two storage snapshots: the schema steps that take a database from one to the other
 * (create, alter, drop, in an order each database accepts), and what changed in the dictionary, said for the
 * operator. Records are not the steps' business: the values live in each record's stored JSON, so a column
 * dropped or re-typed loses nothing; storage fills new and re-typed columns from the records afterwards.
 */
import type { ColumnSpec, TableSpec, ValueTableSpec } from '../src/model/service-model';
import { VALUE_TABLE_KEY, VALUE_TABLE_VALUE } from '../src/model/service-model';
import { DictionaryError } from './dictionary';
import type { FieldShape, StorageSnapshot } from './storage-snapshot';

export interface IndexShape {
  readonly name: string;
  readonly columns: readonly string[];
}

/** A table as the steps create it. */
export interface StepTable {
  readonly name: string;
  readonly columns: readonly ColumnSpec[];
  readonly primaryKey: readonly string[];
  readonly indexes: readonly IndexShape[];
}

export type SchemaStep =
  | { readonly kind: 'createTable'; readonly table: StepTable }
  | { readonly kind: 'dropTable'; readonly table: string }
  | { readonly kind: 'dropIndexes'; readonly table: string; readonly indexes: readonly string[] }
  | { readonly kind: 'dropColumns'; readonly table: string; readonly columns: readonly string[] }
  | { readonly kind: 'addColumns'; readonly table: string; readonly columns: readonly ColumnSpec[] }
  | { readonly kind: 'widenColumns'; readonly table: string; readonly columns: readonly ColumnSpec[] }
  | { readonly kind: 'addIndexes'; readonly table: string; readonly indexes: readonly IndexShape[] }
  /**
   * Where the database reads a row's columns in their order (storage's rowsReadInColumnOrder): the table made anew
   * in its next shape, the values of the columns it keeps copied over; elsewhere the steps `inPlace`.
   */
  | { readonly kind: 'rebuildTable'; readonly table: StepTable; readonly copied: readonly string[]; readonly inPlace: readonly SchemaStep[] };

export interface SchemaDiff {
  readonly steps: readonly SchemaStep[];
  /** What changed in the dictionary, one line each (empty: nothing that storage keeps). */
  readonly changes: readonly string[];
  /** What the generator says to whoever changed the dictionary (defaults it applied). */
  readonly notices: readonly string[];
}

/** Every table a snapshot describes, value tables included, as the steps see them. */
export function stepTables(s: Pick<StorageSnapshot, 'tables' | 'valueTables'>): StepTable[] {
  const own = (t: TableSpec): StepTable => ({ ...t, primaryKey: [t.primaryKey] });
  const values = (t: ValueTableSpec): StepTable => ({ name: t.name, columns: t.columns, primaryKey: [VALUE_TABLE_KEY, VALUE_TABLE_VALUE], indexes: t.indexes });
  return [...s.tables.map(own), ...s.valueTables.map(values)];
}

/** The steps and changes from `before` (none: an empty database) to `after`. */
export function diffSnapshots(before: StorageSnapshot | undefined, after: StorageSnapshot): SchemaDiff {
  const from = new Map((before ? stepTables(before) : []).map((t) => [t.name, t]));
  const to = stepTables(after);
  const steps: SchemaStep[] = to.filter((t) => !from.has(t.name)).map((table) => ({ kind: 'createTable', table }));
  for (const t of to) {
    const old = from.get(t.name);
    if (old) steps.push(...alterations(old, t));
  }
  const kept = new Set(to.map((t) => t.name));
  steps.push(...[...from.keys()].filter((n) => !kept.has(n)).map((table): SchemaStep => ({ kind: 'dropTable', table })));
  if (!before) return { steps, changes: ['the dictionary\'s first schema: every table created'], notices: [] };
  const { changes, notices } = dictionaryChanges(before, after);
  return { steps, changes: [...changes, ...storageChanges(steps)], notices };
}

/**
 * Columns of storage's own (named with a leading underscore, never a field's) that the steps add: a change of
 * how records are stored, not of the dictionary, said all the same (the migration is named after its first line).
 */
function storageChanges(steps: readonly SchemaStep[]): string[] {
  const added = new Map<string, string[]>();
  for (const step of steps) {
    const columns = columnsAdded(step);
    if (!columns) continue;
    for (const c of columns.added.filter((x) => x.name.startsWith('_'))) added.set(c.name, [...added.get(c.name) ?? [], columns.table]);
  }
  return [...added].map(([column, tables]) => `storage column ${column} added (tables ${tables.join(', ')})`);
}

/** The columns a step adds to its table: appended, or in a table made anew (its columns not copied from the old). */
function columnsAdded(step: SchemaStep): { table: string; added: readonly { name: string }[] } | undefined {
  if (step.kind === 'addColumns') return { table: step.table, added: step.columns };
  if (step.kind === 'rebuildTable') return { table: step.table.name, added: step.table.columns.filter((c) => !step.copied.includes(c.name)) };
  return undefined;
}

function sameColumn(a: ColumnSpec, b: ColumnSpec): boolean {
  return a.type === b.type && a.length === b.length && a.precision === b.precision && a.scale === b.scale && a.nullable === b.nullable;
}

/** A longer text column, otherwise the same: altered in place (lossless on both databases). */
function widens(a: ColumnSpec, b: ColumnSpec): boolean {
  return a.type === 'string' && b.type === 'string' && (b.length ?? 0) > (a.length ?? 0) && a.nullable === b.nullable;
}

/**
 * One table's changes, in an order both databases accept: indexes on columns about to go are dropped first;
 * a column whose type changed is dropped and added again (storage refills it from the records), never
 * converted in place, where a database could truncate a value without a word.
 */
function alterations(old: StepTable, next: StepTable): SchemaStep[] {
  if (old.primaryKey.join() !== next.primaryKey.join()) {
    throw new DictionaryError(`${next.name}: its key changes from ${old.primaryKey.join(', ')} to ${next.primaryKey.join(', ')}, which a migration cannot do; `
      + 'remove the entity set in one change and add it under its new key in the next (its records are dropped with it)');
  }
  const oldColumns = new Map(old.columns.map((c) => [c.name, c]));
  const nextColumns = new Map(next.columns.map((c) => [c.name, c]));
  const removed = old.columns.filter((c) => !nextColumns.has(c.name)).map((c) => c.name);
  const widened = next.columns.filter((c) => oldColumns.has(c.name) && widens(oldColumns.get(c.name)!, c));
  const retyped = next.columns.filter((c) => oldColumns.has(c.name) && !sameColumn(oldColumns.get(c.name)!, c) && !widened.includes(c));
  const added = next.columns.filter((c) => !oldColumns.has(c.name));
  const gone = new Set([...removed, ...retyped.map((c) => c.name)]);
  const same = (a: IndexShape, b: IndexShape | undefined) => !!b && a.columns.join() === b.columns.join();
  const nextIndexes = new Map(next.indexes.map((i) => [i.name, i]));
  const oldIndexes = new Map(old.indexes.map((i) => [i.name, i]));
  const droppedIndexes = old.indexes.filter((i) => !same(i, nextIndexes.get(i.name)) || i.columns.some((c) => gone.has(c)));
  const dropped = new Set(droppedIndexes.map((i) => i.name));
  const addedIndexes = next.indexes.filter((i) => dropped.has(i.name) || !same(i, oldIndexes.get(i.name)));
  const steps: SchemaStep[] = [];
  const t = next.name;
  if (droppedIndexes.length) steps.push({ kind: 'dropIndexes', table: t, indexes: droppedIndexes.map((i) => i.name) });
  if (gone.size) steps.push({ kind: 'dropColumns', table: t, columns: [...gone] });
  if (added.length || retyped.length) steps.push({ kind: 'addColumns', table: t, columns: [...retyped, ...added] });
  if (widened.length) steps.push({ kind: 'widenColumns', table: t, columns: widened });
  if (addedIndexes.length) steps.push({ kind: 'addIndexes', table: t, indexes: addedIndexes });
  if (rebuilds(old, next, added)) {
    // A column whose type changed is not copied: storage refills it from the records, as after any re-typing.
    const copied = next.columns.filter((c) => oldColumns.has(c.name) && sameColumn(oldColumns.get(c.name)!, c)).map((c) => c.name);
    return [{ kind: 'rebuildTable', table: next, copied, inPlace: steps }];
  }
  return steps;
}

/**
 * A column of storage's own (a leading underscore) added before a column the table has: the table is made anew
 * rather than the column appended. SQLite reads a row's columns in their order, so a column stored after the
 * record column (kilobytes, in overflow pages) costs a walk over the record's pages to reach: the record's
 * revision, read by every page (storage/record-cache.ts), would cost what reading the record costs.
 */
function rebuilds(old: StepTable, next: StepTable, added: readonly ColumnSpec[]): boolean {
  const had = new Set(old.columns.map((c) => c.name));
  return added.some((c) => c.name.startsWith('_') && next.columns.slice(next.columns.indexOf(c) + 1).some((after) => had.has(after.name)));
}

type SetShape = StorageSnapshot['sets'][number];

/** What changed in the dictionary's sets, fields and lookups, in words an operator acts on. */
function dictionaryChanges(before: StorageSnapshot, after: StorageSnapshot): { changes: string[]; notices: string[] } {
  const changes: string[] = [];
  const notices: string[] = [];
  const oldSets = new Map(before.sets.map((s) => [s.name, s]));
  for (const set of after.sets) {
    const old = oldSets.get(set.name);
    if (!old) changes.push(`${set.name}: new entity set (table ${set.table}; filterable: ${set.fields.filter((f) => f.filterable).map((f) => f.name).join(', ') || 'none'})`);
    else fieldChanges(old, set, changes, notices);
  }
  const kept = new Set(after.sets.map((s) => s.name));
  for (const old of before.sets) {
    if (!kept.has(old.name)) changes.push(`${old.name}: entity set removed; its table and every record in it are dropped`);
  }
  lookupChanges(before, after, changes);
  return { changes, notices };
}

function fieldChanges(old: SetShape, set: SetShape, changes: string[], notices: string[]): void {
  const oldFields = new Map(old.fields.map((f) => [f.name, f]));
  for (const f of set.fields) {
    const was = oldFields.get(f.name);
    const name = `${set.name}.${f.name}`;
    if (!was) {
      changes.push(`${name}: new field (${capabilities(f)}); records gain it as null, without moving their ModificationTimestamp`);
      if (f.filterable || f.sortable) {
        notices.push(`${name} is new and ${capabilities(f)}, as OData's Capabilities say for a field not listed as NonFilterable/NonSortable: `
          + 'it gets a column and an index; list it under NonFilterableProperties and NonSortableProperties to keep it unindexed');
      }
      continue;
    }
    const facets = facetChanges(was, f);
    if (facets.length) {
      changes.push(`${name}: ${facets.join(', ')}; every stored value is converted (a record whose value changes moves its ModificationTimestamp), `
        + 'or the start is refused, naming the records whose values cannot take the change');
    }
    if (capabilities(was) !== capabilities(f)) changes.push(`${name}: ${capabilities(was)} → ${capabilities(f)}`);
  }
  const kept = new Set(set.fields.map((f) => f.name));
  for (const was of old.fields) {
    if (!kept.has(was.name)) {
      changes.push(`${set.name}.${was.name}: removed; its values leave the records (a record that held a value moves its ModificationTimestamp)`);
    }
  }
}

function capabilities(f: FieldShape): string {
  const index = f.unindexed ? ' without an index (answered by a bounded scan)' : '';
  if (f.filterable && f.sortable) return `filterable and sortable${index}`;
  if (f.filterable) return `filterable, not sortable${index}`;
  return f.sortable ? `sortable, not filterable${index}` : 'neither filterable nor sortable';
}

function facetChanges(was: FieldShape, f: FieldShape): string[] {
  const typeOf = (x: FieldShape) => (x.collection ? `Collection(${x.type})` : x.type);
  const out: string[] = [];
  if (typeOf(was) !== typeOf(f)) out.push(`type ${typeOf(was)} → ${typeOf(f)}`);
  for (const facet of ['maxLength', 'precision', 'scale', 'lookupName'] as const) {
    if (was[facet] !== f[facet]) out.push(`${facet} ${was[facet] ?? 'none'} → ${f[facet] ?? 'none'}`);
  }
  if (was.nullable !== f.nullable) out.push(f.nullable ? 'now nullable' : 'now required (Nullable="false")');
  return out;
}

function lookupChanges(before: StorageSnapshot, after: StorageSnapshot, changes: string[]): void {
  const oldLookups = new Map(before.lookups.map((l) => [l.name, new Set(l.values)]));
  for (const l of after.lookups) {
    const was = oldLookups.get(l.name);
    if (!was) continue;
    const now = new Set(l.values);
    const added = l.values.filter((v) => !was.has(v));
    const removed = [...was].filter((v) => !now.has(v));
    if (added.length) changes.push(`lookup ${l.name}: ${added.length} value(s) added (${preview(added)})`);
    if (removed.length) {
      changes.push(`lookup ${l.name}: ${removed.length} value(s) removed (${preview(removed)}); the start is refused while a record holds one`);
    }
  }
}

function preview(values: readonly string[]): string {
  const shown = values.slice(0, 5).map((v) => `'${v}'`).join(', ');
  return values.length > 5 ? `${shown}, …` : shown;
}
