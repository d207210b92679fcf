/**
 * Changes of the shipped dictionary as an MLS makes them, as text edits of the CSDL (support/dictionary-versions.ts),
 * each saying what it does to the fields and lookups: fields removed, retyped (widened or narrowed), renamed and
 * added, lookup values renamed; and what docs/dictionary.md "Changing the dictionary" says follows from them on a populated
 * database: generate refuses (one line, exit code 2) when a removed field is one the dictionary's policy still
 * names (a key, a join, a condition, …); else a start refuses (exit code 6), naming them, when some stored record
 * cannot take a change exactly (support/exact-conversion.ts); else the server serves the new dictionary.
 * `randomEdits` draws a case from a seed.
 */
import { SeededRandom } from '../../src/demo/random';
import type { EntitySetSpec, FieldSpec, ServiceModel } from '../../src/model/service-model';
import { addField, makeQueryable, makeUnqueryable, typeOf, within, withoutField } from './dictionary-versions';
import { conversionProblem, FieldShape } from './exact-conversion';
import type { Rec } from './next-links';

export interface FieldEdit {
  readonly set: string;
  readonly field: string;
  /** The field's shape after the edit; undefined: removed. */
  readonly shape?: FieldShape;
}

export interface DictionaryEdit {
  /** What it does, in words (printed with each case). */
  readonly text: string;
  readonly apply: (xml: string) => string;
  readonly fields: readonly FieldEdit[];
  /** A lookup value renamed (records holding the old one no longer fit). */
  readonly renamed?: { readonly lookup: string; readonly from: string; readonly to: string };
  /** A lookup added, with its values. */
  readonly addedLookup?: { readonly name: string; readonly values: readonly string[] };
  /** Fields ("Set.Field") whose mentions in the policy the edit removes, so that nothing names them any more. */
  readonly frees?: readonly string[];
}

export type Expected =
  | { readonly outcome: 'generate refuses'; readonly needed: ReadonlyMap<string, string> }
  | { readonly outcome: 'start refuses'; readonly refused: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>> }
  | { readonly outcome: 'serves' };

/** The entity type's name in the CSDL (the set's type, unqualified). */

export function shapeOf(f: FieldSpec): FieldShape {
  return { type: f.type, collection: f.collection, maxLength: f.maxLength, precision: f.precision, scale: f.scale, lookupName: f.lookupName };
}

/** A field's declaration in RESO's form (nullable; a lookup as RESO.OData.Metadata.LookupName). */
export function declaration(name: string, s: FieldShape): string {
  const type = s.collection ? `Collection(${s.type})` : s.type;
  const facet = (attr: string, v: number | undefined) => (v === undefined ? '' : ` ${attr}="${v}"`);
  const open = `<Property Name="${name}" Type="${type}"${facet('MaxLength', s.maxLength)}${facet('Precision', s.precision)}${facet('Scale', s.scale)}`;
  if (!s.lookupName) return `${open}/>`;
  return `${open}>\n          <Annotation Term="RESO.OData.Metadata.LookupName" String="${s.lookupName}"/>\n        </Property>`;
}

/** A field's whole declaration (its annotations with it) replaced. */
export function replaceDeclaration(xml: string, type: string, field: string, text: string): string {
  const declared = new RegExp(`<Property Name="${field}"[^>]*/>|<Property Name="${field}"[^>]*[^/]>[\\s\\S]*?</Property>`);
  return within(xml, 'EntityType', type, (t) => t.replace(declared, text));
}

/** A field renamed in its type and wherever its set's annotations name it. */
export function renameField(xml: string, type: string, set: string, from: string, to: string): string {
  const renamed = within(xml, 'EntityType', type, (t) => t.replace(`<Property Name="${from}"`, `<Property Name="${to}"`));
  try {
    return within(renamed, 'EntitySet', set, (t) => t.replace(new RegExp(`<PropertyPath>${from}</PropertyPath>`, 'g'), `<PropertyPath>${to}</PropertyPath>`));
  } catch {
    return renamed; // no annotation of the set names it
  }
}

export function removal(set: EntitySetSpec, fields: readonly string[], text = `${set.name}: remove ${fields.join(', ')}`): DictionaryEdit {
  return {
    text,
    apply: (xml) => fields.reduce((x, f) => withoutField(x, typeOf(set), set.name, f), xml),
    fields: fields.map((field) => ({ set: set.name, field })),
  };
}

export function retype(set: EntitySetSpec, field: string, shape: FieldShape, label: string): DictionaryEdit {
  return {
    text: `${set.name}.${field}: ${label} (${declaration(field, shape).replace(/\s+/g, ' ')})`,
    apply: (xml) => replaceDeclaration(xml, typeOf(set), field, declaration(field, shape)),
    fields: [{ set: set.name, field, shape }],
  };
}

export function rename(set: EntitySetSpec, from: string, to: string): DictionaryEdit {
  return {
    text: `${set.name}.${from} renamed ${to}`,
    apply: (xml) => renameField(xml, typeOf(set), set.name, from, to),
    fields: [{ set: set.name, field: from }, { set: set.name, field: to, shape: shapeOf(set.fieldsByName[from]) }],
  };
}

export function renameLookupValue(model: ServiceModel, lookup: string, value: string, to: string): DictionaryEdit {
  const member = model.lookups.find((l) => l.name === lookup)!.values.find((v) => v.value === value)!.legacyODataValue;
  return {
    text: `lookup ${lookup}: value '${value}' renamed '${to}'`,
    apply: (xml) => within(xml, 'EnumType', lookup, (t) => t.replace(
      new RegExp(`<Member Name="${member}"( Value="\\d+")?>\\s*<Annotation Term="RESO.OData.Metadata.StandardName" String="[^"]*"/>`),
      `<Member Name="${member}Local"$1><Annotation Term="RESO.OData.Metadata.StandardName" String="${to}"/>`)),
    fields: [],
    renamed: { lookup, from: value, to },
  };
}

/** A field made filterable and sortable (out of its set's Non… lists), or neither (into them). */
export function queryability(set: EntitySetSpec, field: string, on: boolean): DictionaryEdit {
  return {
    text: `${set.name}.${field}: made ${on ? 'filterable and sortable' : 'neither filterable nor sortable'}`,
    apply: (xml) => (on ? makeQueryable : makeUnqueryable)(xml, set.name, field),
    fields: [],
  };
}

/** A local field (not RESO's), with a new lookup of its own when `values` are given, filterable or not. */
export function localField(set: EntitySetSpec, name: string, shape: FieldShape, queryable: boolean, values?: readonly string[]): DictionaryEdit {
  const lookup = values && shape.lookupName;
  const members = (values ?? []).map((v, i) => `<Member Name="${v.replace(/\W/g, '')}" Value="${i}"><Annotation Term="RESO.OData.Metadata.StandardName" String="${v}"/></Member>`);
  return {
    text: `${set.name}.${name}: new local field (${declaration(name, shape).replace(/\s+/g, ' ')}${lookup ? ` with its own lookup: ${values!.join(', ')}` : ''}), ${queryable ? 'filterable and sortable' : 'listed NonFilterable and NonSortable'}`,
    apply: (xml) => {
      let x = addField(xml, typeOf(set), declaration(name, shape));
      if (lookup) x = x.replace('<EnumType ', `<EnumType Name="${lookup}">${members.join('')}</EnumType>\n      <EnumType `);
      return queryable ? x : makeUnqueryable(x, set.name, name);
    },
    fields: [{ set: set.name, field: name, shape }],
    addedLookup: lookup ? { name: lookup, values: values! } : undefined,
  };
}

/**
 * The fields among `removed` ("Set.Field") that what the dictionary keeps still names, each with the word a
 * refusal names it by: a key; the listing root's change timestamp (or a set's whose timestamps related records
 * move); the field of DeletedWhen or of a MovedByRelated condition; a join's fields, its discriminator, an
 * expansion's order; the field a NamesFieldOf names, and the NamesFieldOf field while values of it remain; the
 * change log's fields. A field whose own annotation is the only policy naming it (a change timestamp elsewhere, a
 * NamedFieldValue) takes its policy with it.
 */
export function neededFields(model: ServiceModel, removed: ReadonlySet<string>, freed: ReadonlySet<string> = new Set()): Map<string, string> {
  const needed = new Map<string, string>();
  const kept = (set: string, field: string | undefined) => field !== undefined && !removed.has(`${set}.${field}`);
  const need = (set: string, field: string | undefined, word = field) => {
    const k = `${set}.${field}`;
    if (field !== undefined && removed.has(k) && !freed.has(k)) needed.set(k, word!);
  };
  for (const s of model.entitySets) {
    need(s.name, s.key);
    const moved = (s.relatedTimestamps ?? []).filter((r) => kept(s.name, r.field));
    if (s.listingRoot || moved.length) need(s.name, s.changeTimestamp);
    need(s.name, s.deletedWhen?.field);
    for (const r of moved) {
      const target = s.navigations.find((n) => n.name === r.navigation)?.target;
      if (target) need(target, r.when?.field);
    }
    for (const n of s.navigations) {
      if (n.join) {
        need(n.target, n.join.foreignKey);
        need(s.name, n.join.referencedKey);
        need(n.join.discriminator?.on === 'source' ? s.name : n.target, n.join.discriminator?.field);
      }
      for (const f of n.order ?? []) need(n.target, f);
    }
    for (const p of s.navigationProperties) need(s.name, p.constraint?.property);
    if (s.namesFields) {
      if (kept(s.name, s.namesFields.field)) need(s.name, s.namesFields.resource);
      if (s.namesFields.values.some((v) => kept(s.name, v))) need(s.name, s.namesFields.field, 'NamesFieldOf');
    }
    if (s.changeLog) for (const f of [s.changeLog.resourceName, s.changeLog.recordKey]) need(s.name, f);
  }
  return needed;
}

/**
 * Fields some policy names, their own annotations included (change timestamps, NamesFieldOf and NamedFieldValue,
 * Restricted, OrdersWhenFiltered, the rows of the dictionary's own sets): never retyped or renamed here, as their
 * meaning is the policy's (and a retype writes the declaration anew, with a lookup as its only annotation).
 */
export function policyFields(model: ServiceModel): Set<string> {
  const all = model.entitySets.flatMap((s) => s.fields.map((f) => `${s.name}.${f.name}`));
  const out = new Set(all.filter((f) => neededFields(model, new Set([f])).size > 0));
  for (const s of model.entitySets) {
    const own = [s.changeTimestamp, ...(s.relatedTimestamps ?? []).map((r) => r.field), s.namesLookups, s.namesFields?.field, s.namesFields?.resource, ...(s.namesFields?.values ?? [])];
    for (const f of own) if (f) out.add(`${s.name}.${f}`);
    for (const f of s.fields) if (f.restricted || f.ordersWhenFiltered) out.add(`${s.name}.${f.name}`);
    if (s.dictionaryRows) for (const f of Object.values(s.dictionaryRows.fields)) out.add(`${s.name}.${f}`);
    if (s.changeLog) for (const f of s.fields) out.add(`${s.name}.${f.name}`);
  }
  return out;
}

/** What the README says follows from `edits` applied to a database holding `stored` (records by set and key). */
export function expectedOutcome(model: ServiceModel, edits: readonly DictionaryEdit[], stored: ReadonlyMap<string, ReadonlyMap<string, Rec>>): Expected {
  const removed = new Set(edits.flatMap((e) => e.fields.filter((f) => !f.shape).map((f) => `${f.set}.${f.field}`)));
  const needed = neededFields(model, removed, new Set(edits.flatMap((e) => e.frees ?? [])));
  if (needed.size) return { outcome: 'generate refuses', needed };
  const lookups = new Map(model.lookups.map((l) => [l.name, new Set(l.values.map((v) => v.value))]));
  const changedLookups = new Set<string>();
  for (const e of edits) {
    if (e.addedLookup) lookups.set(e.addedLookup.name, new Set(e.addedLookup.values));
    if (!e.renamed) continue;
    const values = lookups.get(e.renamed.lookup)!;
    values.delete(e.renamed.from);
    values.add(e.renamed.to);
    changedLookups.add(e.renamed.lookup);
  }
  const refused = new Map<string, Map<string, string[]>>();
  for (const set of model.entitySets) {
    const shapes = new Map(set.fields.map((f) => [f.name, shapeOf(f)]));
    const changed = new Set<string>();
    for (const e of edits) {
      for (const f of e.fields.filter((x) => x.set === set.name)) {
        if (!f.shape) shapes.delete(f.field);
        else if (set.fieldsByName[f.field]) { shapes.set(f.field, f.shape); changed.add(f.field); }
      }
    }
    for (const [name, shape] of shapes) if (shape.lookupName && changedLookups.has(shape.lookupName)) changed.add(name);
    for (const [key, r] of stored.get(set.name) ?? []) {
      const fields = [...changed].filter((f) => shapes.has(f) && conversionProblem(r[f], shapes.get(f)!, lookups) !== undefined);
      if (fields.length) (refused.get(set.name) ?? refused.set(set.name, new Map()).get(set.name)!).set(key, fields);
    }
  }
  return refused.size ? { outcome: 'start refuses', refused } : { outcome: 'serves' };
}
