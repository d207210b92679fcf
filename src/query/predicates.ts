/**
 * Bound predicates the service itself writes beside a client's $filter: conjunctions of conditions, and a
 * field equal to a value (the parent key of a navigation path).
 */
import type { FieldSpec } from '../model/service-model';
import { fieldType } from './bind-filter';
import type { BoundField, BoundPredicate } from './bound';

/** `a and b`, either side optional: the predicate that holds where all of those given hold. */
export function allOf(a: BoundPredicate | undefined, b: BoundPredicate | undefined): BoundPredicate | undefined {
  if (!a) return b;
  if (!b) return a;
  return { kind: 'logical', op: 'and', operands: [a, b] };
}

export function fieldOf(field: FieldSpec): BoundField {
  return { kind: 'field', field, column: field.column!, type: fieldType(field) };
}

/** `field eq value`, the value already in stored form (a key from a path). */
export function fieldEquals(field: FieldSpec, value: string | number): BoundPredicate {
  const left = fieldOf(field);
  return { kind: 'compare', op: 'eq', left, right: { kind: 'value', type: left.type, value } };
}
