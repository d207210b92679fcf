/**
 * Records that talk about fields: a history row naming the field it changed (with its old and new values),
 * a Field row naming a field, a Lookup row of a lookup that fields use. The dictionary says which fields of a
 * set name another set's fields and lookups (Policy.NamesFieldOf, NamedFieldValue, NamesLookup); a client
 * from whom fields are hidden must not learn them, or their values, through such records. These conditions
 * are bound like scopes, so queries, counts, key fetches, expansions and navigation paths agree.
 */
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import type { BoundPredicate, BoundValue } from './bound';
import { fieldOf } from './predicates';

/** Hidden field names by entity set name. */
export type HiddenFields = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * For each set whose records name fields or lookups, the condition a record must meet to be shown to a
 * client with these hidden fields; none when nothing is hidden (such a client pays nothing).
 */
export function namedFieldConditions(model: ServiceModel, hidden: HiddenFields): Map<string, BoundPredicate> {
  const out = new Map<string, BoundPredicate>();
  if (![...hidden.values()].some((h) => h.size > 0)) return out;
  const lookups = lookupsOnlyHiddenFieldsUse(model, hidden);
  for (const set of model.entitySets) {
    const conditions = [namingNoHiddenField(set, hidden), namingNoHiddenLookup(set, lookups)].filter((c): c is BoundPredicate => !!c);
    if (conditions.length) out.set(set.name, conditions.length === 1 ? conditions[0] : { kind: 'logical', op: 'and', operands: conditions });
  }
  return out;
}

const strings = (values: Iterable<string>): BoundValue[] => [...values].map((value) => ({ kind: 'value', type: 'string', value }));

/**
 * Not (a hidden field's name, in a record naming its set or no set): a record that leaves its set out is
 * taken as about any set, as a join's discriminator takes an empty one as naming its parent.
 */
function namingNoHiddenField(set: EntitySetSpec, hidden: HiddenFields): BoundPredicate | undefined {
  if (!set.namesFields) return undefined;
  const name = fieldOf(set.fieldsByName[set.namesFields.field]);
  const resource = fieldOf(set.fieldsByName[set.namesFields.resource]);
  const naming: BoundPredicate[] = [...hidden].filter(([, fields]) => fields.size > 0).map(([setName, fields]) => ({
    kind: 'logical',
    op: 'and',
    operands: [
      { kind: 'logical', op: 'or', operands: [{ kind: 'compare', op: 'eq', left: resource, right: strings([setName])[0] }, { kind: 'isNull', operand: resource, negated: false }] },
      { kind: 'in', left: name, values: strings(fields) },
    ],
  }));
  if (naming.length === 0) return undefined;
  return { kind: 'not', operand: naming.length === 1 ? naming[0] : { kind: 'logical', op: 'or', operands: naming } };
}

function namingNoHiddenLookup(set: EntitySetSpec, lookups: ReadonlySet<string>): BoundPredicate | undefined {
  if (!set.namesLookups || lookups.size === 0) return undefined;
  return { kind: 'not', operand: { kind: 'in', left: fieldOf(set.fieldsByName[set.namesLookups]), values: strings(lookups) } };
}

/** Lookups some hidden field uses and no visible field does (a lookup a visible field uses is no secret). */
function lookupsOnlyHiddenFieldsUse(model: ServiceModel, hidden: HiddenFields): Set<string> {
  const ofHidden = new Set<string>();
  const ofVisible = new Set<string>();
  for (const set of model.entitySets) {
    const mine = hidden.get(set.name);
    for (const f of set.fields) if (f.lookupName) (mine?.has(f.name) ? ofHidden : ofVisible).add(f.lookupName);
  }
  return new Set([...ofHidden].filter((l) => !ofVisible.has(l)));
}
