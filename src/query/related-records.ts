/**
 * Which records of a navigation's target belong to a parent, as bound predicates: the join the dictionary
 * states (`target.foreignKey = parent key`), qualified by its resource discriminator where it has one, so a
 * Member's media whose ResourceRecordKey happens to equal a ListingKey never passes for the listing's.
 */
import type { EntitySetSpec, NavigationSpec } from '../model/service-model';
import type { BoundPredicate } from './bound';
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
