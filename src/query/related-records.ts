/**
 * Which records of a navigation's target belong to a parent, as bound predicates: the join the dictionary
 * states (`target.foreignKey = parent key`), qualified by its resource discriminator where it has one, so a
 * Member's media whose ResourceRecordKey happens to equal a ListingKey never passes for the listing's.
 */
import type { EntitySetSpec, NavigationSpec } from '../model/service-model';
import { fieldType } from './bind-filter';
import type { BoundField, BoundPredicate } from './bound';

function boundField(set: EntitySetSpec, name: string): BoundField {
  const field = set.fieldsByName[name];
  if (!field?.column) throw new Error(`${set.name}.${name} has no storage column to join on`);
  return { kind: 'field', field, column: field.column, type: fieldType(field) };
}

/**
 * Records of `target` that may belong to a record of the navigation's source: the discriminator names the
 * source's set, or is empty (records written before the resource was named).
 */
export function discriminatorOf(navigation: NavigationSpec, target: EntitySetSpec): BoundPredicate | undefined {
  const d = navigation.join?.discriminator;
  if (!d || d.on !== 'target') return undefined;
  const operand = boundField(target, d.field);
  return {
    kind: 'logical',
    op: 'or',
    operands: [
      { kind: 'compare', op: 'eq', left: operand, right: { kind: 'value', type: 'string', value: d.value } },
      { kind: 'isNull', operand, negated: false },
    ],
  };
}

/** The records of `target` related to the one parent whose key is `parentKey`. */
export function relatedTo(navigation: NavigationSpec, target: EntitySetSpec, parentKey: string | number): BoundPredicate {
  if (!navigation.join) throw new Error(`${navigation.name} has no join to follow`);
  const foreignKey = boundField(target, navigation.join.foreignKey);
  const join: BoundPredicate = { kind: 'compare', op: 'eq', left: foreignKey, right: { kind: 'value', type: foreignKey.type, value: parentKey } };
  return both(join, discriminatorOf(navigation, target))!;
}

/** `a and b`, either side optional. */
export function both(a: BoundPredicate | undefined, b: BoundPredicate | undefined): BoundPredicate | undefined {
  if (!a) return b;
  if (!b) return a;
  return { kind: 'logical', op: 'and', operands: [a, b] };
}
