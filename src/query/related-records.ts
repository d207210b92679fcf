/**
 * Which records of a navigation's target belong to a parent, as bound predicates: the join the dictionary
 * states (`target.foreignKey = parent key`), qualified by its resource discriminator where it has one, so a
 * Member's media whose ResourceRecordKey happens to equal a ListingKey never passes for the listing's. And the
 * other way, the one record a single-valued navigation leads to: the target whose key the parent names.
 */
import type { EntitySetSpec, NavigationSpec } from '../model/service-model';
import type { BoundPredicate, ParentLink } from './bound';
import { allOf, fieldEquals, fieldOf } from './predicates';

/**
 * Records of `target` that may belong to a record of the navigation's source: the discriminator names the
 * source's set, or is empty (records written before the resource was named).
 */
export function discriminatorOf(navigation: NavigationSpec, target: EntitySetSpec): BoundPredicate | undefined {
  const d = navigation.join?.discriminator;
  if (!d || d.on !== 'target') return undefined;
  const field = target.fieldsByName[d.field];
  return {
    kind: 'logical',
    op: 'or',
    operands: [fieldEquals(field, d.value), { kind: 'isNull', operand: fieldOf(field), negated: false }],
  };
}

/** The records of `target` related to the one parent whose key is `parentKey`. */
export function relatedTo(navigation: NavigationSpec, target: EntitySetSpec, parentKey: string | number): BoundPredicate {
  if (!navigation.join) throw new Error(`${navigation.name} has no join to follow`);
  return allOf(fieldEquals(target.fieldsByName[navigation.join.foreignKey], parentKey), discriminatorOf(navigation, target))!;
}

/**
 * How a record of `source` names the one record the single-valued `navigation` leads to, as the client may know
 * it: undefined when its licence hides the field holding the key or the discriminator (`hidden`), since the record
 * shown would tell their values.
 */
export function parentLinkOf(navigation: NavigationSpec, source: EntitySetSpec, hidden: ReadonlySet<string>): ParentLink | undefined {
  const join = navigation.join;
  if (!join || navigation.collection) return undefined;
  const d = join.discriminator?.on === 'source' ? join.discriminator : undefined;
  if (hidden.has(join.referencedKey) || (d && hidden.has(d.field))) return undefined;
  const key = source.fieldsByName[join.referencedKey];
  return d ? { key, owner: { field: source.fieldsByName[d.field], value: d.value } } : { key };
}

/**
 * The key of the record a parent's link names, from the parent's values of the link's fields (`valueOf`), or
 * undefined when it names none: no key, or a discriminator naming another set (a Member's photo names no listing).
 */
export function linkedKey(link: ParentLink, valueOf: (field: ParentLink['key']) => unknown): unknown {
  const key = valueOf(link.key);
  if (key === null || key === undefined) return undefined;
  const owner = link.owner && valueOf(link.owner.field);
  return link.owner && owner !== null && owner !== undefined && owner !== link.owner.value ? undefined : key;
}
