/**
 * Turns the dictionary into the tables the runtime reads: field tables, navigations, storage schema, lookups.
 * Policy decisions that follow from the dictionary (what gets a column, which index) are made here, once.
 */
import type {
  ColumnSpec, ColumnType, EdmPrimitive, FieldSpec, LookupSpec, NavigationSpec, TableSpec, ValueTableSpec,
} from '../src/model/service-model';
import { RECORD_COLUMN, REVISION_COLUMN } from '../src/model/service-model';
import {
  changeTimestampOf, checkChangeTimestamp, checkConditionValues, checkUnindexed, dictionaryRowsOf, discriminatorOf, fieldNamesOf, followingOf,
  lookupNamesOf, parseCondition, relatedTimestampsOf,
} from './build-policy';
import { buildChangeLogs } from './build-change-log';
import type { BuiltEntitySet } from './built-entity-set';
import type { Dictionary, EntitySetDef, EntityTypeDef } from './dictionary-defs';
import { checkBindings, checkIdentifier, checkPathsAreUnique, checkSingleListingRoot } from './container-checks';
import { DictionaryError, entitySetRef, entityTypeRef } from './dictionary-error';
import { conventionalJoin } from './key-conventions';
import { columnType, fitName } from './storage-columns';
import { valueTablesOf } from './value-tables';

export interface BuiltModel {
  dictionary: Dictionary;
  namespace: string;
  containerName: string;
  entitySets: BuiltEntitySet[];
  tables: TableSpec[];
  valueTables: ValueTableSpec[];
  lookups: LookupSpec[];
}

const PRIMITIVES: ReadonlySet<string> = new Set<EdmPrimitive>([
  'Edm.String', 'Edm.Boolean', 'Edm.Int16', 'Edm.Int32', 'Edm.Int64', 'Edm.Decimal', 'Edm.Double',
  'Edm.Date', 'Edm.DateTimeOffset', 'Edm.TimeOfDay', 'Edm.Guid',
]);

/** Longest string an index may cover on MariaDB (utf8mb4, 3,072-byte key limit, beside the key and the revision). */
const MAX_INDEXED_STRING = 510;
/** MariaDB allows 64 indexes per table. */
const MAX_INDEXES = 60;
const DEFAULT_STRING_LENGTH = 255;

export function buildModel(dict: Dictionary): BuiltModel {
  const typesByName = new Map(dict.entityTypes.map((t) => [`${dict.namespace}.${t.name}`, t]));
  const setsByType = new Map(dict.entitySets.map((s) => [s.entityType, s]));
  const setsByName = new Map(dict.entitySets.map((s) => [s.name, s]));
  for (const setDef of dict.entitySets) {
    if (!typesByName.has(setDef.entityType)) throw new DictionaryError(`entity set ${setDef.name}: unknown entity type ${setDef.entityType}`, entitySetRef(setDef.name));
    checkIdentifier(setDef.name, `entity set ${setDef.name}`);
  }
  const entitySets = dict.entitySets.map((setDef) => {
    const typeDef = typesByName.get(setDef.entityType)!;
    checkBindings(setDef, typeDef, setsByName);
    const fields = fieldsOf(setDef, typeDef);
    const navigations = navigationsOf(setDef, typeDef, typesByName, setsByType);
    return entitySetOf(setDef, typeDef, fields, navigations);
  });

  checkPathsAreUnique(entitySets);
  checkSingleListingRoot(entitySets);
  for (const set of entitySets) checkChangeTimestamp(set);
  const setOf = (name: string) => entitySets.find((t) => t.name === name)!;
  for (const set of entitySets) {
    const related = relatedTimestampsOf(set.typeDef, set.fields, set.navigations, setOf);
    if (related.length) set.relatedTimestamps = related;
  }
  indexJoinColumns(entitySets);
  storeNameColumns(entitySets);
  checkExpandOrders(entitySets);
  const tables = entitySets.map(tableOf);
  tables.push(...buildChangeLogs(entitySets, tables));
  const valueTables = valueTablesOf(entitySets);
  const lookups = lookupsOf(dict, entitySets);
  checkConditionValues(entitySets, lookups);
  return {
    dictionary: dict,
    namespace: dict.namespace,
    containerName: dict.containerName,
    entitySets,
    tables,
    valueTables,
    lookups,
  };
}

function entitySetOf(setDef: EntitySetDef, typeDef: EntityTypeDef, fields: FieldSpec[], navigations: NavigationSpec[]): BuiltEntitySet {
  const timestamp = changeTimestampOf(typeDef, fields);
  return {
    name: setDef.name,
    entityType: setDef.entityType,
    typeDef,
    setDef,
    pathAliases: setDef.pathAliases,
    key: typeDef.key,
    defaultOrder: timestamp ? [timestamp.name, typeDef.key] : [typeDef.key],
    changeTimestamp: timestamp?.name,
    listingRoot: setDef.listingRoot || undefined,
    deletedWhen: setDef.deletedWhen === undefined ? undefined
      : parseCondition(setDef.deletedWhen, `entity set ${setDef.name}: DeletedWhen`, { set: setDef.name, fields }, entitySetRef(setDef.name)),
    dictionaryRows: dictionaryRowsOf(setDef, typeDef),
    namesFields: fieldNamesOf(typeDef),
    namesLookups: lookupNamesOf(typeDef),
    skipSupported: setDef.skipSupported || undefined,
    pagedByTop: setDef.pagedByTop || undefined,
    table: setDef.name,
    fields,
    navigations,
  };
}

function fieldsOf(setDef: EntitySetDef, typeDef: EntityTypeDef): FieldSpec[] {
  const fieldNames = new Set(typeDef.properties.map((p) => p.name));
  for (const list of [setDef.nonFilterable, setDef.nonSortable]) {
    for (const name of list ?? []) {
      if (!fieldNames.has(name)) throw new DictionaryError(`entity set ${setDef.name}: restriction names unknown field ${name}`);
    }
  }
  const timestamp = typeDef.properties.find((p) => p.changeTimestamp)?.name ?? 'ModificationTimestamp';
  // A set the dictionary says nothing about is indexed on its key and change timestamp only:
  // indexing every field of a full RESO resource would exceed the database's limits and cost every write.
  const unstated = (name: string) => name === typeDef.key || name === timestamp;
  const filterable = (name: string) => (setDef.nonFilterable ? !setDef.nonFilterable.includes(name) : unstated(name));
  const sortable = (name: string) => (setDef.nonSortable ? !setDef.nonSortable.includes(name) : unstated(name));
  const fields = typeDef.properties.map((p) => {
    checkIdentifier(p.name, `${typeDef.name}.${p.name}`);
    const collection = p.type.startsWith('Collection(');
    const element = collection ? p.type.slice('Collection('.length, -1) : p.type;
    if (!PRIMITIVES.has(element)) throw new DictionaryError(`${typeDef.name}.${p.name}: unsupported type ${p.type}`);
    const isFilterable = filterable(p.name) && !p.restricted;
    // A collection has no single value to order by; filtering one is answered from its value table (value-tables.ts).
    const isSortable = sortable(p.name) && !p.restricted && !collection;
    if (p.ordersWhenFiltered && !(isFilterable && isSortable && element === 'Edm.DateTimeOffset' && !collection)) {
      throw new DictionaryError(`${typeDef.name}.${p.name}: OrdersWhenFiltered needs a filterable and sortable Edm.DateTimeOffset field`);
    }
    const unindexed = setDef.unindexed?.includes(p.name) ?? false;
    const indexed = !collection && !unindexed && (isFilterable || isSortable || p.name === typeDef.key || p.name === timestamp);
    checkIndexedLength(typeDef, p.name, indexed, element, p.maxLength);
    return compact({
      name: p.name,
      type: element as EdmPrimitive,
      collection,
      nullable: p.name === typeDef.key ? false : p.nullable,
      maxLength: p.maxLength,
      precision: p.precision,
      scale: p.scale,
      lookupName: p.lookupName,
      enumType: p.enumType,
      column: indexed || unindexed ? p.name : undefined,
      filterable: isFilterable,
      sortable: isSortable,
      unindexed: unindexed ? true as const : undefined,
      restricted: p.restricted,
      ordersWhenFiltered: p.ordersWhenFiltered ? true as const : undefined,
    });
  });
  checkUnindexed(setDef, typeDef, fields, timestamp);
  const keyField = fields.find((f) => f.name === typeDef.key);
  if (!keyField) {
    throw new DictionaryError(`entity type ${typeDef.name}: its key ${typeDef.key} is not one of its properties: `
      + `declare <Property Name="${typeDef.key}" Type="Edm.String" Nullable="false"/>, or name another property in its <Key>`, entityTypeRef(typeDef.name));
  }
  if (keyField.collection || !['Edm.String', 'Edm.Int16', 'Edm.Int32', 'Edm.Int64'].includes(keyField.type)) {
    throw new DictionaryError(`entity type ${typeDef.name}: key ${typeDef.key} must be a string or integer property`);
  }
  return fields;
}

function checkIndexedLength(typeDef: EntityTypeDef, name: string, indexed: boolean, element: string, maxLength: number | undefined): void {
  if (indexed && element === 'Edm.String' && (maxLength ?? DEFAULT_STRING_LENGTH) > MAX_INDEXED_STRING) {
    throw new DictionaryError(`${typeDef.name}.${name}: MaxLength ${maxLength} is too long for an indexed field (max ${MAX_INDEXED_STRING})`);
  }
}

function navigationsOf(
  setDef: EntitySetDef, typeDef: EntityTypeDef, typesByName: ReadonlyMap<string, EntityTypeDef>, setsByType: ReadonlyMap<string, EntitySetDef>,
): NavigationSpec[] {
  return typeDef.navigations.flatMap((n) => {
    const binding = setDef.bindings.find((b) => b.path === n.name);
    const collection = n.type.startsWith('Collection(');
    const targetType = collection ? n.type.slice('Collection('.length, -1) : n.type;
    const target = binding?.target ?? setsByType.get(targetType)?.name;
    if (!target) return []; // a navigation to a type the service does not serve
    const partner = n.partner ? typesByName.get(targetType)?.navigations.find((m) => m.name === n.partner) : undefined;
    const discriminator = discriminatorOf(n, partner, setDef.name, target);
    const join = partner?.constraint
      ? compact({ foreignKey: partner.constraint.property, referencedKey: partner.constraint.referencedProperty, discriminator })
      : n.constraint
        ? compact({ foreignKey: n.constraint.referencedProperty, referencedKey: n.constraint.property, discriminator })
        : discriminator ? undefined : conventionalJoin(typeDef, setDef.name, { name: n.name, collection }, typesByName.get(targetType));
    if (discriminator && !join) throw new DictionaryError(`${typeDef.name}.${n.name}: ResourceDiscriminator needs a referential constraint`);
    const where = `${typeDef.name}.${n.name}`;
    const { followable, navigable } = followingOf(n, { collection, join }, typeDef.key, typesByName.get(targetType)?.key, where);
    if (n.charged && !followable && !navigable) throw new DictionaryError(`${where}: ChargedExpansion on a navigation that cannot be expanded`);
    return [compact({
      name: n.name,
      target,
      collection,
      join,
      order: n.expandOrder?.split(',').map((f) => f.trim()),
      charged: n.charged ? true as const : undefined,
      followable: followable ? true as const : undefined,
      navigable: navigable ? true as const : undefined,
    })];
  });
}

/**
 * Columns that navigations join on must be indexed in the set that holds them, or expansion and scoping
 * would scan. The discriminators that qualify those joins need a column too, but no index of their own:
 * they are checked on the rows the join's index finds, and an index on a column with one or two values
 * (ResourceName) would tempt a planner away from the join's index into reading most of the table. The same for the
 * field naming a single-valued navigation's record (ListAgentKey): read beside records found otherwise, never searched.
 */
function indexJoinColumns(entitySets: BuiltEntitySet[]): void {
  const joinColumns = new Map<string, Set<string>>();
  const residual = new Map<string, Set<string>>();
  const need = (to: Map<string, Set<string>>, set: string, field: string) => (to.get(set) ?? to.set(set, new Set()).get(set)!).add(field);
  for (const set of entitySets) {
    for (const n of set.navigations) {
      if (!n.join) continue;
      need(joinColumns, n.target, n.join.foreignKey);
      const d = n.join.discriminator;
      if (d) need(residual, d.on === 'target' ? n.target : set.name, d.field);
      if (n.navigable) need(residual, set.name, n.join.referencedKey);
    }
  }
  for (const set of entitySets) {
    const joins = joinColumns.get(set.name) ?? new Set<string>();
    for (const name of new Set([...joins, ...(residual.get(set.name) ?? [])])) {
      const i = set.fields.findIndex((f) => f.name === name);
      if (i < 0) throw new DictionaryError(`${set.name}: navigation joins on unknown field ${name}`);
      const f = set.fields[i];
      if (f.collection) throw new DictionaryError(`${set.name}.${name}: a navigation cannot join on a collection field`);
      if (f.unindexed && joins.has(name)) {
        throw new DictionaryError(`${set.name}.${name}: listed in UnindexedProperties, but a navigation joins on it, which needs an index`);
      }
      checkIndexedLength(set.typeDef, name, true, f.type, f.maxLength);
      if (f.column) continue;
      set.fields[i] = { ...f, column: name };
      if (!joins.has(name)) (set.unindexedColumns ??= new Set()).add(name);
    }
  }
}

/**
 * Licences withhold records naming a hidden field or lookup by a condition on these fields, so each needs a
 * column; like discriminators, they are checked on rows another condition found and get no index of their own.
 */
function storeNameColumns(entitySets: BuiltEntitySet[]): void {
  for (const set of entitySets) {
    const names = [set.namesFields?.field, set.namesFields?.resource, set.namesLookups].filter((n): n is string => !!n);
    for (const name of names) {
      const i = set.fields.findIndex((f) => f.name === name);
      const f = set.fields[i];
      checkIndexedLength(set.typeDef, name, true, f.type, f.maxLength);
      if (f.column) continue;
      set.fields[i] = { ...f, column: name };
      (set.unindexedColumns ??= new Set()).add(name);
    }
  }
}

function checkExpandOrders(entitySets: readonly BuiltEntitySet[]): void {
  for (const set of entitySets) {
    for (const n of set.navigations) {
      const target = entitySets.find((t) => t.name === n.target)!;
      for (const name of n.order ?? []) {
        if (!target.fields.find((f) => f.name === name)?.sortable) {
          throw new DictionaryError(`${set.name}.${n.name}: ExpandOrder names ${name}, which is not a sortable field of ${target.name}`);
        }
      }
    }
  }
}

function tableOf(set: BuiltEntitySet): TableSpec {
  const columns: ColumnSpec[] = set.fields
    .filter((f) => f.column)
    .map((f) => compact({
      name: f.column!,
      type: columnType(f),
      nullable: f.name !== set.key && f.name !== set.changeTimestamp,
      length: f.type === 'Edm.String' ? f.maxLength ?? DEFAULT_STRING_LENGTH : undefined,
      precision: f.type === 'Edm.Decimal' ? f.precision ?? 18 : undefined,
      scale: f.type === 'Edm.Decimal' ? f.scale ?? 0 : undefined,
    }));
  columns.push({ name: REVISION_COLUMN, type: 'integer', nullable: true }, { name: RECORD_COLUMN, type: 'text', nullable: false });
  const scanned = new Set(set.fields.filter((f) => f.unindexed).map((f) => f.column));
  const indexes = columns
    .filter((c) => c.name !== set.key && c.name !== RECORD_COLUMN && c.name !== REVISION_COLUMN && !set.unindexedColumns?.has(c.name) && !scanned.has(c.name))
    // The revision last: a first page's positions and revisions are read from the index alone (prepared-reads.ts).
    .map((c) => ({ name: indexName(set.table, c.name), columns: [c.name, set.key, REVISION_COLUMN] }));
  if (indexes.length > MAX_INDEXES) {
    throw new DictionaryError(`${set.name}: ${indexes.length} indexed fields exceed the limit of ${MAX_INDEXES} `
      + '(list the ones to be answered by a bounded scan instead in the set\'s Policy.UnindexedProperties)');
  }
  checkRowSize(set.name, columns);
  return { name: set.table, columns, primaryKey: set.key, indexes };
}

/**
 * MariaDB's limit on what one row's declared columns may take, whatever the storage engine: 65,535 bytes, a
 * VARCHAR(n) of utf8mb4 counting 4n bytes and its length prefix (dates and timestamps are VARCHAR(10) and (24)), a
 * MEDIUMTEXT 11 (its text is stored apart). Past it, creating the table fails; the generator says so first.
 */
const MAX_ROW_BYTES = 65_535;
const COLUMN_BYTES: Readonly<Record<ColumnType, number>> = { string: 0, integer: 8, decimal: 0, double: 8, boolean: 1, date: 41, timestamp: 97, text: 11 };

function checkRowSize(set: string, columns: readonly ColumnSpec[]): void {
  const bytes = columns.reduce((sum, c) => sum + columnBytes(c), 0);
  if (bytes > MAX_ROW_BYTES) {
    throw new DictionaryError(`${set}: its columns take ${bytes} bytes of a row, more than MariaDB's ${MAX_ROW_BYTES} `
      + '(fewer filterable or sortable text fields, or shorter MaxLengths)');
  }
}

function columnBytes(c: ColumnSpec): number {
  if (c.type === 'string') {
    const bytes = 4 * (c.length ?? DEFAULT_STRING_LENGTH);
    return bytes + (bytes > 255 ? 2 : 1);
  }
  // DECIMAL(p): 4 bytes per 9 digits, each side of the point, rounded up.
  if (c.type === 'decimal') return 4 * (Math.ceil(((c.precision ?? 18) - (c.scale ?? 0)) / 9) + Math.ceil((c.scale ?? 0) / 9));
  return COLUMN_BYTES[c.type];
}

/**
 * Named after the column, so adding a field to the dictionary never renames another index; MariaDB allows
 * 64 characters, so a long name is shortened with a hash of the full one.
 */
function indexName(table: string, column: string): string {
  return fitName(`ix_${table}_${column}`);
}

function lookupsOf(dict: Dictionary, sets: BuiltEntitySet[]): LookupSpec[] {
  const used = new Set(sets.flatMap((s) => s.fields.map((f) => f.lookupName).filter((n): n is string => !!n)));
  return dict.enums
    .filter((e) => used.has(e.name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((e) => ({ name: e.name, values: e.members.map((m) => ({ value: m.standardName, legacyODataValue: m.name })) }));
}

/** Drops undefined members so generated literals stay small and stable. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
