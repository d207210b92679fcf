/**
 * Errors in what a query asks of the data: the fields and navigations it names, the expressions of its
 * $filter, and the order, projection and expansions it wants. Messages that refuse a field say what works.
 */
import { defineErrors } from './service-error';

type FieldUse = '$filter' | '$orderby';
const VERB: Readonly<Record<FieldUse, string>> = { $filter: 'filtered on', $orderby: 'ordered by' };

export const FIELD_ERRORS = defineErrors({
  FieldNotFound: {
    message: (set: string, field: string) => `${set} has no field ${field}`,
    target: (_set: string, field: string) => field,
  },
  FieldHasNoMembers: {
    message: (field: string, path: string, purpose: 'navigate to' | 'select') => `${field} has no members to ${purpose} (${path})`,
    target: (_field: string, path: string) => path,
  },
  FieldRestricted: {
    message: (field: string, use: FieldUse, set: string, usable: string) =>
      `${field} is a restricted field and cannot be used in ${use}. ${set} can be ${VERB[use]}: ${usable}`,
    target: (field: string) => field,
  },
  FieldNotFilterable: {
    message: (field: string, set: string, filterable: string) =>
      `${field} cannot be filtered on (it is not indexed). ${set} can be filtered on: ${filterable}`,
    target: (field: string) => field,
  },
  FieldNotSortable: {
    message: (field: string, set: string, sortable: string) =>
      `${field} cannot be ordered by (it is not indexed). ${set} can be ordered by: ${sortable}`,
    target: (field: string) => field,
  },
  ScanLimitExceeded: {
    message: (fields: readonly string[], set: string, ms: number) =>
      `answering this query on ${fields.join(', ')} meant scanning ${set}, which took longer than the ${ms} ms this service allows `
      + 'one statement. Add a condition on an indexed field to narrow it',
    target: (fields: readonly string[]) => fields[0],
  },
});

export const FILTER_ERRORS = defineErrors({
  NotACondition: {
    message: (subject: string, isLiteral: boolean) => (isLiteral
      ? `${subject} is not a condition; $filter needs a true/false expression`
      : `this ${subject} is not a condition; compare it with eq, gt, …`),
    target: '$filter',
  },
  NotAValue: {
    message: (subject: string) => `a ${subject} cannot stand where a value is expected`,
    target: '$filter',
  },
  TypeMismatch: {
    message: (left: string, right: string, expression: string) => `cannot compare ${left} with ${right} (${expression})`,
    target: '$filter',
  },
  NullComparison: {
    message: () => 'null can only be compared with eq or ne',
    target: '$filter',
  },
  InListInvalid: {
    message: (problem: 'not-literal' | 'null') => (problem === 'null'
      ? 'null cannot be in a list; use eq null'
      : 'the list after in must hold literal values'),
    target: '$filter',
  },
  FilterTooComplex: {
    message: (values: number, limit: number) =>
      `the query compares ${values} values in one statement; the database takes at most ${limit}. Put comparisons of one field with many values into in (…) lists, or split the query`,
    target: '$filter',
  },
  HasNotApplicable: {
    message: () => "has tests a lookup field for the values an enumeration literal names (<field> has <namespace>.<lookup>'<value>'); otherwise compare with eq, or use in (…)",
    target: '$filter',
  },
  LiteralInvalid: {
    message: (literal: string, type: string) => `${literal} is not a valid ${type}`,
    target: '$filter',
  },
  LiteralTypeNotSupported: {
    message: (type: string) => `${type} literals are not supported`,
    target: '$filter',
  },
  FunctionUnknown: {
    message: (fn: string) => `${fn}() is not an OData function`,
    target: '$filter',
  },
  FunctionNotSupported: {
    message: (fn: string) => `the function ${fn}() is not supported`,
    target: '$filter',
  },
  FunctionArity: {
    message: (fn: string, expected: number, got: number) => `${fn}() takes ${expected} argument${expected === 1 ? '' : 's'}, not ${got}`,
    target: '$filter',
  },
  FunctionArgumentType: {
    message: (fn: string, accepted: readonly string[], got: string) => `${fn}() takes ${accepted.join(' or ')}, not ${got}`,
    target: '$filter',
  },
  DatePartInapplicable: {
    message: (fn: string, operand: 'a date' | 'a time of day') => `${fn}() does not apply to ${operand}`,
    target: '$filter',
  },
  ArithmeticNotSupported: {
    message: () => 'arithmetic (add, sub, mul, div, mod, negation) is not supported in $filter',
    target: '$filter',
  },
  LambdaNotSupported: {
    message: (fn: string, path: string) => `${fn}() on ${path} is not supported`,
    target: (_fn: string, path: string) => path,
  },
  LambdaNeedsCollection: {
    message: (fn: string, field: string) => `${fn}() tests the elements of a collection; ${field} holds a single value: compare it directly`,
    target: (_fn: string, field: string) => field,
  },
  CollectionNeedsLambda: {
    message: (field: string) => `${field} is a collection: test its elements with ${field}/any(x: x eq '…') or ${field}/all(x: …)`,
    target: (field: string) => field,
  },
  RelatedFilterNotSupported: {
    message: (navigation: string, target: string) =>
      `filtering on the related records ${navigation} is not supported; query ${target} by its own fields instead`,
    target: (navigation: string) => navigation,
  },
});

export const SHAPE_ERRORS = defineErrors({
  OrderByExpressionNotSupported: {
    message: () => '$orderby takes field names only (no expressions)',
    target: '$orderby',
  },
  OrderByPathNotSupported: {
    message: (path: string) => `ordering by ${path} is not supported`,
    target: (path: string) => path,
  },
  RelatedOrderNotSupported: {
    message: (navigation: string) => `ordering by related records (${navigation}) is not supported`,
    target: (navigation: string) => navigation,
  },
  FilterRequiresOrder: {
    message: (fields: string, key: string, given: string) =>
      `a filter on ${fields} must be ordered by ${fields} (or by ${key}); $orderby=${given} is not supported`,
    target: '$orderby',
  },
  ItemRepeated: {
    message: (option: '$orderby' | '$expand', item: string) => `${option} names ${item} twice`,
    target: (_option: string, item: string) => item,
  },
  NavigationInSelect: {
    message: (navigation: string) => `${navigation} is a navigation property; use $expand=${navigation} to include it`,
    target: (navigation: string) => navigation,
  },
  NavigationNotFound: {
    message: (set: string, navigation: string, available?: string) => (available === undefined
      ? `${set} has no navigation ${navigation} to follow`
      : `${set} has no navigation property ${navigation} (it has: ${available})`),
    target: (_set: string, navigation: string) => navigation,
  },
  NavigationNotExpandable: {
    message: (navigation: string, target: string) => `$expand=${navigation} is not supported; query ${target} by its own fields instead`,
    target: (navigation: string) => navigation,
  },
  ExpandAllNotSupported: {
    message: () => '$expand=* is not supported; name the navigation properties',
    target: '$expand',
  },
  ExpandPathNotSupported: {
    message: (path: string, navigation: string) => `$expand=${path} is not supported; expand ${navigation} itself`,
    target: (_path: string, navigation: string) => navigation,
  },
  ExpandOptionNotSupported: {
    message: (options: readonly string[], navigation: string) => `${options.join(', ')} inside $expand=${navigation}(…) is not supported`,
    target: (_options: readonly string[], navigation: string) => navigation,
  },
  ExpandOptionRepeated: {
    message: (option: string, path: string) => `$expand: ${option} is given twice for ${path}`,
    target: '$expand',
  },
});
