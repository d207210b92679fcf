/**
 * Policy.ChangeLogOf: the entity set that is the service's change log (RESO EntityEvent, RCP-027), the sets it
 * logs, and the table of prior images a licence judges an event by. Decided here once; the runtime reads the
 * resulting ChangeLogSpec and never names a set itself.
 */
import type { ChangeLogSpec, ColumnSpec, FieldSpec, LoggedSetSpec, TableSpec } from '../src/model/service-model';
import { ownedNavigations } from '../src/model/service-model';
import type { BuiltEntitySet } from './built-entity-set';
import { DictionaryError } from './dictionary';

/** RESO's names for an event's parts (DD 2.0 EntityEvent); the sequence is the type's key. */
/** RESO's EntityEvent (RCP-027): its type's name, its sequence key's type, and the fields naming each event's record. */
export const RESO_ENTITY_EVENT = {
  type: 'EntityEvent', key: 'Edm.Int64', resourceName: 'ResourceName', recordKey: 'ResourceRecordKey', recordUrl: 'ResourceRecordUrl',
} as const;
/** The prior-image table's own columns; a dictionary identifier cannot begin with `_`, so no field takes them. */
const COMMITTED = '_committed';
const EXISTED = '_existed';

/** Resolves every ChangeLogOf, sets the spec on its set, and returns the prior-image tables to create. */
export function buildChangeLogs(sets: readonly BuiltEntitySet[], tables: readonly TableSpec[]): TableSpec[] {
  const logs = sets.filter((s) => s.setDef.changeLogOf !== undefined);
  if (logs.length > 1) throw new DictionaryError(`only one entity set can be a ChangeLogOf (${logs.map((s) => s.name).join(', ')})`);
  return logs.map((log) => {
    const where = `entity set ${log.name}: ChangeLogOf`;
    const fields = eventFields(log, where);
    const logged = log.setDef.changeLogOf!.split(',').map((n) => n.trim()).filter(Boolean).map((name) => {
      const set = sets.find((s) => s.name === name);
      if (!set || set === log) throw new DictionaryError(`${where}: "${name}" is not another entity set`);
      if (set.fields.find((f) => f.name === set.key)!.type !== 'Edm.String') throw new DictionaryError(`${where}: ${name}'s key must be Edm.String (ResourceRecordKey is a string)`);
      return set;
    });
    if (new Set(logged).size !== logged.length) throw new DictionaryError(`${where}: a set is named twice`);
    const root = sets.find((s) => s.listingRoot);
    const specs = logged.map((set) => loggedSet(set, root, where));
    // Children before the listing root: a listing's event follows those of its related records.
    const ordered = [...specs.filter((s) => s.name !== root?.name), ...specs.filter((s) => s.name === root?.name)];
    const prior = priorImageTable(log, root && logged.includes(root) ? root : undefined, specs, tables, where);
    log.changeLog = {
      sequence: log.key,
      ...fields,
      sets: ordered,
      priorImage: {
        table: prior.name,
        sequence: prior.primaryKey,
        committed: COMMITTED,
        existed: EXISTED,
        listingColumns: root && logged.includes(root) ? listingColumns(root) : [],
        columns: [...new Set(specs.flatMap((s) => s.columns))],
      },
    } satisfies ChangeLogSpec;
    return prior;
  });
}

function eventFields(log: BuiltEntitySet, where: string): Pick<ChangeLogSpec, 'resourceName' | 'recordKey' | 'recordUrl'> {
  const key = log.fields.find((f) => f.name === log.key)!;
  if (key.type !== 'Edm.Int64') throw new DictionaryError(`${where}: the key ${log.key} is the event sequence and must be Edm.Int64`);
  const field = (name: string): FieldSpec | undefined => log.fields.find((f) => f.name === name);
  for (const name of [RESO_ENTITY_EVENT.resourceName, RESO_ENTITY_EVENT.recordKey]) {
    const f = field(name);
    if (!f || f.type !== 'Edm.String' || f.collection || !f.column) throw new DictionaryError(`${where}: needs ${name}, a filterable single Edm.String field`);
  }
  const url = field(RESO_ENTITY_EVENT.recordUrl);
  if (url?.column) throw new DictionaryError(`${where}: ${RESO_ENTITY_EVENT.recordUrl} is computed when read, so it cannot be filterable or sortable`);
  return { resourceName: RESO_ENTITY_EVENT.resourceName, recordKey: RESO_ENTITY_EVENT.recordKey, ...(url ? { recordUrl: url.name } : {}) };
}

/** How a logged set's records reach their listing, and which of their own columns licences read. */
function loggedSet(set: BuiltEntitySet, root: BuiltEntitySet | undefined, where: string): LoggedSetSpec {
  const own = [set.namesFields?.field, set.namesFields?.resource, set.namesLookups].filter((n): n is string => !!n);
  const columns = own.map((n) => set.fields.find((f) => f.name === n)!.column!);
  if (!root) return { name: set.name, columns };
  if (set === root) return { name: set.name, listing: { foreignKey: root.key }, columns };
  // A set the listing names (its agent's Member) is no listing's: only the listing's own records reach it.
  const nav = ownedNavigations(root).find((n) => n.target === set.name);
  if (!nav) return { name: set.name, columns };
  if (nav.join.referencedKey !== root.key) throw new DictionaryError(`${where}: ${set.name} joins ${root.name} on another field than its key`);
  const d = nav.join.discriminator;
  const discriminator = d?.on === 'target' ? { field: d.field, value: d.value } : undefined;
  return { name: set.name, listing: { foreignKey: nav.join.foreignKey, ...(discriminator ? { discriminator } : {}) }, columns };
}

/** The listing root's key and the columns of its filterable fields: what a scope can read. */
function listingColumns(root: BuiltEntitySet): string[] {
  return [...new Set([root.key, ...root.fields.filter((f) => f.filterable && f.column).map((f) => f.column!)])];
}

function priorImageTable(
  log: BuiltEntitySet, root: BuiltEntitySet | undefined, specs: readonly LoggedSetSpec[], tables: readonly TableSpec[], where: string,
): TableSpec {
  const tableOf = (name: string) => tables.find((t) => t.name === name)!;
  const logTable = tableOf(log.table);
  const name = `${log.table}Prior`;
  if (tables.some((t) => t.name === name)) throw new DictionaryError(`${where}: the table ${name} for prior images is taken`);
  const columns = new Map<string, ColumnSpec>([
    [log.key, logTable.columns.find((c) => c.name === log.key)!],
    [COMMITTED, { name: COMMITTED, type: 'timestamp', nullable: false }],
    [EXISTED, { name: EXISTED, type: 'boolean', nullable: false }],
  ]);
  const add = (from: TableSpec, column: string) => {
    const c = from.columns.find((x) => x.name === column)!;
    const had = columns.get(column);
    if (had && (had.type !== c.type || column === log.key)) throw new DictionaryError(`${where}: prior-image column ${column} has two meanings`);
    if (!had) columns.set(column, { ...c, nullable: true });
  };
  if (root) for (const c of listingColumns(root)) add(tableOf(root.table), c);
  for (const s of specs) for (const c of s.columns) add(tableOf(s.name), c);
  // Retention finds the newest event older than its cutoff by commit time.
  return { name, columns: [...columns.values()], primaryKey: log.key, indexes: [{ name: `ix_${name}_${COMMITTED}`, columns: [COMMITTED, log.key] }] };
}
