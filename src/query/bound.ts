/**
 * Bound expressions: parse trees checked against an entity set's field tables, with every name resolved
 * to a field, every literal converted to the stored form of the type it is compared with, and every
 * policy (filterable, restricted, supported) already enforced. Storage compiles them to SQL and trusts them as they are.
 */
import type { EntitySetSpec, FieldSpec, NavigationSpec } from '../model/service-model';

/** Value types of bound expressions. */
export type ValueType = 'string' | 'boolean' | 'integer' | 'decimal' | 'double' | 'date' | 'dateTimeOffset' | 'timeOfDay' | 'guid' | 'null';

export interface BoundField {
  readonly kind: 'field';
  readonly field: FieldSpec;
  /** The storage column (every filterable or sortable field has one). */
  readonly column: string;
  readonly type: ValueType;
}

export interface BoundValue {
  readonly kind: 'value';
  readonly type: ValueType;
  /** In stored form: timestamps as `YYYY-MM-DDTHH:mm:ss.sssZ`, booleans as true/false (translated to 1/0). */
  readonly value: string | number | boolean | null;
}

export type StringFunction = 'tolower' | 'toupper' | 'trim';
export type DatePartFunction = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second';

export interface BoundCall {
  readonly kind: 'call';
  readonly name: 'contains' | 'startswith' | 'endswith' | 'length' | 'date' | 'time' | StringFunction | DatePartFunction;
  readonly args: readonly BoundScalar[];
  readonly type: ValueType;
}

export type BoundScalar = BoundField | BoundValue | BoundCall;

export interface BoundCompare {
  readonly kind: 'compare';
  readonly op: 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
  readonly left: BoundScalar;
  readonly right: BoundScalar;
}

export interface BoundIsNull {
  readonly kind: 'isNull';
  readonly operand: BoundScalar;
  readonly negated: boolean;
}

export interface BoundIn {
  readonly kind: 'in';
  readonly left: BoundScalar;
  readonly values: readonly BoundValue[];
}

export interface BoundLogical {
  readonly kind: 'logical';
  readonly op: 'and' | 'or';
  readonly operands: readonly BoundPredicate[];
}

export interface BoundNot {
  readonly kind: 'not';
  readonly operand: BoundPredicate;
}

/**
 * `left` is among the `column` values of the records of `set` that match `where`: a semi-join, such as "the
 * listing this record belongs to is visible". Never written by a client; visibility builds it.
 */
export interface BoundInQuery {
  readonly kind: 'inQuery';
  readonly left: BoundField;
  readonly set: EntitySetSpec;
  readonly column: BoundField;
  readonly where: BoundPredicate;
}

/**
 * The predicate of the case `on` equals, else `otherwise`: `on` never null. Never written by a client; the
 * change log's visibility builds it, one case per logged set. Unlike an `or` of `on eq v and p` terms, it
 * offers the planner no index on `on`, so a page still scans the table in its own key order and stops at its
 * limit, instead of reading every later row of each case and sorting them.
 */
export interface BoundChoice {
  readonly kind: 'choice';
  readonly on: BoundField;
  readonly cases: readonly { readonly value: BoundValue; readonly then: BoundPredicate }[];
  readonly otherwise: BoundPredicate;
}

/** A predicate the binder could decide alone (e.g. `ModificationTimestamp eq <sub-millisecond instant>`). */
export interface BoundConstant {
  readonly kind: 'constant';
  readonly value: boolean;
}

/** A boolean-valued scalar used as a predicate: a Boolean field or a boolean function. */
export interface BoundTruth {
  readonly kind: 'truth';
  readonly operand: BoundScalar;
}

/**
 * `collection/any(x: predicate)` or `collection/all(x: predicate)` on a filterable collection: whether some
 * (every) element meets `predicate`, in which the range variable is `element`, a field whose column is the
 * value table's. Without a predicate (`any()`), whether the collection has elements.
 */
export interface BoundLambda {
  readonly kind: 'lambda';
  readonly fn: 'any' | 'all';
  readonly collection: FieldSpec;
  /** The collection's value table, and the set's key column its rows correlate with. */
  readonly valueTable: string;
  readonly recordKey: string;
  readonly predicate?: BoundPredicate;
}

export type BoundPredicate =
  | BoundCompare | BoundIsNull | BoundIn | BoundInQuery | BoundChoice | BoundLogical | BoundNot | BoundConstant | BoundTruth | BoundLambda;

export interface BoundOrder {
  readonly field: FieldSpec;
  readonly column: string;
  readonly direction: 'asc' | 'desc';
}

/**
 * How a record names the one record a single-valued navigation leads to: its field holding the related record's
 * key, and, where records of several sets share that field, the field that must name the related set (or nothing).
 */
export interface ParentLink {
  readonly key: FieldSpec;
  readonly owner?: { readonly field: FieldSpec; readonly value: string };
}

/** One `$expand` item: a navigation of the set, with its own options bound against the target set. */
export interface BoundExpand {
  readonly navigation: NavigationSpec;
  readonly target: EntitySetSpec;
  /**
   * The target's field the related records are found by: holding the parent's key (a collection), or the
   * target's key (a single-valued navigation, found by the parent's `link`).
   */
  readonly foreignKey: FieldSpec;
  /** A single-valued navigation: its related record is written as itself or null, never as an array. */
  readonly single: boolean;
  /**
   * A single-valued navigation's link; absent when the client's licence hides a field of it, so that no record's
   * related record is shown (it would tell the hidden value).
   */
  readonly link?: ParentLink;
  readonly filter?: BoundPredicate;
  readonly orderBy: readonly BoundOrder[];
  readonly select?: readonly FieldSpec[];
  /** Records per parent. */
  readonly top?: number;
}

/** A request's query, bound: what the translator and the response writer need, nothing to re-check. */
export interface BoundQuery {
  readonly filter?: BoundPredicate;
  /** Total order: always ends with the key. */
  readonly orderBy: readonly BoundOrder[];
  /** Fields to return, in dictionary order; undefined means all. */
  readonly select?: readonly FieldSpec[];
  readonly top?: number;
  readonly count: boolean;
  readonly skiptoken?: string;
  /** `$skip`, on a set whose dictionary offers it: records passed over before the first page. */
  readonly skip?: number;
  /** Fields the filter uses, for the sorting rules and for callers. */
  readonly filterFields: ReadonlySet<string>;
  readonly expand: readonly BoundExpand[];
}
