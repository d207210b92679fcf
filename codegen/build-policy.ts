/**
 * The dictionary's own policy terms (ResoServer.Policy), checked against the model and turned into the plain
 * values the field tables carry. The runtime reads only those values, so every rule here is decided once.
 */
import type {
  DictionaryRowsSpec, FieldCondition, FieldNamesSpec, FieldSpec, LookupSpec, NavigationSpec, RelatedTimestampSpec,
} from '../src/model/service-model';
import type { EntitySetDef, EntityTypeDef, NavigationDef, PropertyDef } from './dictionary-defs';
import { DictionaryError, ElementRef, entitySetRef, entityTypeRef, propertyRef } from './dictionary-error';

/** RESO's name for the change timestamp, used when a type tags none (the full RESO dictionary states no policy). */
const RESO_CHANGE_TIMESTAMP = 'ModificationTimestamp';

/** Whose fields a condition names, to say where a field is missing. */
export interface ConditionSubject {
  readonly set: string;
  readonly fields: readonly FieldSpec[];
}

/** `Field eq 'Value'`: the one condition form the policy terms take. */
export function parseCondition(text: string, where: string, of: ConditionSubject, at?: ElementRef): FieldCondition {
  const m = /^\s*([A-Za-z][A-Za-z0-9_]*)\s+eq\s+'((?:[^']|'')*)'\s*$/.exec(text);
  if (!m) throw new DictionaryError(`${where}: "${text}" is not a condition of the form Field eq 'Value'`, at);
  const field = of.fields.find((f) => f.name === m[1]);
  if (!field) {
    throw new DictionaryError(`${where}: "${text.trim()}" names unknown field ${m[1]}, which ${of.set} does not declare: `
      + 'add it as a single Edm.String property, or change the condition', at);
  }
  if (field.type !== 'Edm.String' || field.collection) throw new DictionaryError(`${where}: condition field ${m[1]} must be a single string`, at);
  return { field: m[1], value: m[2].replace(/''/g, "'") };
}

/**
 * A condition's value must be one its field can hold: where the field's lookup is closed (its values are in the
 * dictionary), a value outside it (a lookup value renamed, say) would make a condition that never holds, so the
 * listing root would never mark a removal, or a media change never move its timestamp.
 */
function checkConditionValue(condition: FieldCondition, where: string, of: ConditionSubject, lookups: readonly LookupSpec[], at?: ElementRef): void {
  const lookupName = of.fields.find((f) => f.name === condition.field)?.lookupName;
  const values = lookups.find((l) => l.name === lookupName)?.values.map((v) => v.value);
  if (!values?.length || values.includes(condition.value)) return;
  throw new DictionaryError(`${where}: "${condition.field} eq '${condition.value}'": '${condition.value}' is not a value of the lookup ${lookupName} `
    + `(${values.slice(0, 5).map((v) => `'${v}'`).join(', ')}${values.length > 5 ? ', …' : ''}): add it to the lookup, or change the condition`, at);
}

/** A set as the policy's conditions are checked on it. */
interface ConditionsOf {
  readonly name: string;
  readonly typeDef: { readonly name: string };
  readonly fields: readonly FieldSpec[];
  readonly navigations: readonly NavigationSpec[];
  readonly deletedWhen?: FieldCondition;
  readonly relatedTimestamps?: readonly RelatedTimestampSpec[];
}

/** Every DeletedWhen and MovedByRelated condition names a value its field can hold (checkConditionValue). */
export function checkConditionValues(sets: readonly ConditionsOf[], lookups: readonly LookupSpec[]): void {
  for (const set of sets) {
    if (set.deletedWhen) checkConditionValue(set.deletedWhen, `entity set ${set.name}: DeletedWhen`, { set: set.name, fields: set.fields }, lookups, entitySetRef(set.name));
    for (const r of set.relatedTimestamps ?? []) {
      const target = sets.find((t) => t.name === set.navigations.find((n) => n.name === r.navigation)?.target);
      if (r.when && target) {
        checkConditionValue(r.when, `${set.typeDef.name}.${r.field}: MovedByRelated ${r.navigation}`, { set: target.name, fields: target.fields }, lookups,
          propertyRef(set.typeDef.name, r.field));
      }
    }
  }
}

/** The field tagged Policy.ChangeTimestamp, or RESO's ModificationTimestamp when none is tagged. */
export function changeTimestampOf(typeDef: EntityTypeDef, fields: readonly FieldSpec[]): FieldSpec | undefined {
  const tagged = typeDef.properties.filter((p) => p.changeTimestamp).map((p) => p.name);
  if (tagged.length > 1) throw new DictionaryError(`entity type ${typeDef.name}: more than one change timestamp (${tagged.join(', ')})`, entityTypeRef(typeDef.name));
  const name = tagged[0] ?? RESO_CHANGE_TIMESTAMP;
  const field = fields.find((f) => f.name === name);
  if (!field) return undefined;
  if (field.type !== 'Edm.DateTimeOffset' || field.collection) {
    throw new DictionaryError(`entity type ${typeDef.name}: change timestamp ${name} must be Edm.DateTimeOffset`, propertyRef(typeDef.name, name));
  }
  return field;
}

/**
 * The sets whose policy relies on a change timestamp, each refused without one: the listing root (the spec's
 * replication by ModificationTimestamp, its default order, the mark a scope's change is judged by) and a set
 * with timestamps its related records move (MovedByRelated: a related record's change moves the record's change
 * timestamp with them, so a replicating client sees it). Sets logged by the change log need none: its events are
 * ordered by their own sequence.
 */
export function checkChangeTimestamp(
  set: { readonly name: string; readonly typeDef: EntityTypeDef; readonly changeTimestamp?: string; readonly listingRoot?: true },
): void {
  if (set.changeTimestamp) return;
  const moved = set.typeDef.properties.filter((p) => p.movedByRelated !== undefined).map((p) => p.name);
  const why = set.listingRoot ? 'is the listing root (Policy.ListingRoot)'
    : moved.length ? `has timestamps its related records move (Policy.MovedByRelated on ${moved.join(', ')})` : undefined;
  if (!why) return;
  throw new DictionaryError(`entity set ${set.name} ${why}, which needs a change timestamp: add `
    + `<Property Name="${RESO_CHANGE_TIMESTAMP}" Type="Edm.DateTimeOffset" Precision="3" Nullable="false"/> to entity type ${set.typeDef.name} `
    + '(or tag an Edm.DateTimeOffset property of it with Policy.ChangeTimestamp)', entitySetRef(set.name));
}

interface RelatedSet {
  readonly name: string;
  readonly fields: readonly FieldSpec[];
}

/** Policy.MovedByRelated on each timestamp of a type: `Nav` or `Nav/Field eq 'Value'`, comma separated. */
export function relatedTimestampsOf(
  typeDef: EntityTypeDef, fields: readonly FieldSpec[], navigations: readonly NavigationSpec[], setOf: (name: string) => RelatedSet,
): RelatedTimestampSpec[] {
  return typeDef.properties.filter((p) => p.movedByRelated !== undefined).flatMap((p) => {
    const where = `${typeDef.name}.${p.name}: MovedByRelated`;
    const at = propertyRef(typeDef.name, p.name);
    const field = fields.find((f) => f.name === p.name)!;
    if (field.type !== 'Edm.DateTimeOffset' || field.collection) throw new DictionaryError(`${where}: only an Edm.DateTimeOffset field can be moved`, at);
    return p.movedByRelated!.split(',').map((entry) => {
      const slash = entry.indexOf('/');
      const navName = (slash < 0 ? entry : entry.slice(0, slash)).trim();
      const nav = navigations.find((n) => n.name === navName);
      if (!nav?.followable) throw new DictionaryError(`${where}: ${navName} is not a followable navigation of ${typeDef.name}`, at);
      const target = setOf(nav.target);
      const when = slash < 0 ? undefined : parseCondition(entry.slice(slash + 1), `${where} ${navName}`, { set: target.name, fields: target.fields }, at);
      return when ? { field: p.name, navigation: navName, when } : { field: p.name, navigation: navName };
    });
  });
}

/** The discriminator of a join, from whichever side of the partnership declares it. */
export function discriminatorOf(
  nav: NavigationDef, partner: NavigationDef | undefined, sourceSet: string, targetSet: string,
): (FieldCondition & { on: 'source' | 'target' }) | undefined {
  if (nav.discriminator) return { field: nav.discriminator, value: targetSet, on: 'source' };
  if (partner?.discriminator) return { field: partner.discriminator, value: sourceSet, on: 'target' };
  return undefined;
}

/**
 * How a navigation can be followed, unless the dictionary turns it off (Followable false): a collection joined on
 * the source's key is a path and an expansion (followable); a single-valued one joined on the target's key is a
 * path to one record and an expansion as that record or null (navigable).
 */
export function followingOf(
  nav: NavigationDef, spec: Pick<NavigationSpec, 'collection' | 'join'>, key: string, targetKey: string | undefined, where: string,
): { followable: boolean; navigable: boolean } {
  const followable = spec.collection && spec.join?.referencedKey === key;
  const navigable = !spec.collection && spec.join !== undefined && spec.join.foreignKey === targetKey;
  if (nav.followable && !followable && !navigable) {
    throw new DictionaryError(`${where}: Followable, but only a collection joined on the key, or a single record joined on its key, can be followed`);
  }
  const on = nav.followable !== false;
  return { followable: on && followable, navigable: on && navigable };
}

/** Where RESO's Lookup and Field resources keep each part of a dictionary row. */
const DICTIONARY_ROW_FIELDS = {
  lookups: { key: 'LookupKey', lookupName: 'LookupName', value: 'LookupValue', standardValue: 'StandardLookupValue', legacyValue: 'LegacyODataValue' },
  fields: { key: 'FieldKey', resourceName: 'ResourceName', fieldName: 'FieldName' },
} as const;

/** Policy.DescribesDictionary: "Lookups" or "Fields", mapped onto the parts of a row the set declares. */
export function dictionaryRowsOf(setDef: EntitySetDef, typeDef: EntityTypeDef): DictionaryRowsSpec | undefined {
  if (setDef.describesDictionary === undefined) return undefined;
  const kind = setDef.describesDictionary.toLowerCase();
  if (kind !== 'lookups' && kind !== 'fields') {
    throw new DictionaryError(`entity set ${setDef.name}: DescribesDictionary must be "Lookups" or "Fields", not "${setDef.describesDictionary}"`);
  }
  const parts = DICTIONARY_ROW_FIELDS[kind];
  if (parts.key !== typeDef.key) throw new DictionaryError(`entity set ${setDef.name}: describing ${setDef.describesDictionary} needs the key ${parts.key}`);
  const declared = new Set(typeDef.properties.map((p) => p.name));
  const fields = Object.fromEntries(Object.entries(parts).filter(([, name]) => declared.has(name)));
  return { kind, fields } as DictionaryRowsSpec;
}

const isSingleString = (p: PropertyDef | undefined) => p?.type === 'Edm.String';

/**
 * Policy.NamesFieldOf and Policy.NamedFieldValue: the field whose value names another set's field, the field
 * naming that set, and the fields holding the named field's values. Licences read these to withhold records
 * about hidden fields, so a dictionary that tags values without saying whose they are is refused.
 */
export function fieldNamesOf(typeDef: EntityTypeDef): FieldNamesSpec | undefined {
  const naming = typeDef.properties.filter((p) => p.namesFieldOf !== undefined);
  const values = typeDef.properties.filter((p) => p.namedFieldValue).map((p) => p.name);
  if (naming.length === 0) {
    if (values.length === 0) return undefined;
    throw new DictionaryError(`entity type ${typeDef.name}: NamedFieldValue on ${values.join(', ')}, but no field is tagged NamesFieldOf to say which field they hold`);
  }
  if (naming.length > 1) throw new DictionaryError(`entity type ${typeDef.name}: more than one NamesFieldOf (${naming.map((p) => p.name).join(', ')})`);
  const field = naming[0];
  const where = `${typeDef.name}.${field.name}: NamesFieldOf`;
  if (!isSingleString(field)) throw new DictionaryError(`${where}: only a single Edm.String field can name a field`);
  const resource = typeDef.properties.find((p) => p.name === field.namesFieldOf && p !== field);
  if (!isSingleString(resource)) throw new DictionaryError(`${where} "${field.namesFieldOf}": not another single Edm.String field of ${typeDef.name}`);
  for (const v of values) {
    if (v === field.name || v === resource!.name) throw new DictionaryError(`${typeDef.name}.${v}: NamedFieldValue on a field that names, not one that holds a value`);
  }
  return { field: field.name, resource: resource!.name, values };
}

/** Policy.NamesLookup: the one single string field of a type naming a lookup. */
export function lookupNamesOf(typeDef: EntityTypeDef): string | undefined {
  const tagged = typeDef.properties.filter((p) => p.namesLookup);
  if (tagged.length > 1) throw new DictionaryError(`entity type ${typeDef.name}: more than one NamesLookup (${tagged.map((p) => p.name).join(', ')})`);
  if (tagged.length === 1 && !isSingleString(tagged[0])) {
    throw new DictionaryError(`${typeDef.name}.${tagged[0].name}: NamesLookup: only a single Edm.String field can name a lookup`);
  }
  return tagged[0]?.name;
}

/**
 * Policy.UnindexedProperties: fields answered without an index. Each must be a field of the set's type that a
 * filter or an order may name, and a single value: a collection is answered from its value table, the key and the
 * change timestamp carry every page's order, and a field whose filter orders by it must be read in that order.
 */
export function checkUnindexed(setDef: EntitySetDef, typeDef: EntityTypeDef, fields: readonly FieldSpec[], changeTimestamp: string): void {
  for (const name of setDef.unindexed ?? []) {
    const f = fields.find((x) => x.name === name);
    const where = `entity set ${setDef.name}: UnindexedProperties names ${name}`;
    if (!f) throw new DictionaryError(`${where}, which is not a field of ${typeDef.name}`);
    if (f.collection) throw new DictionaryError(`${where}, a collection: a filterable collection is answered from its own value table`);
    if (name === typeDef.key || name === changeTimestamp) throw new DictionaryError(`${where}, which orders every page and is always indexed`);
    if (!f.filterable && !f.sortable) throw new DictionaryError(`${where}, which is neither filterable nor sortable: nothing would read it`);
    if (f.ordersWhenFiltered) throw new DictionaryError(`${where}, whose filter orders by it (OrdersWhenFiltered): it needs its index`);
  }
}
