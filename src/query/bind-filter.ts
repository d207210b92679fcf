/**
 * Binds $filter expressions to an entity set: names to fields (FieldNotFound, FieldRestricted,
 * FieldNotFilterable), literals to the stored form of the type they meet (LiteralInvalid when they cannot be),
 * functions to their signatures. Spec §4 "Query restrictions" and §7 are enforced here and only here.
 */
import { Errors } from '../errors/catalogue';
import type { EntitySetSpec, FieldSpec } from '../model/service-model';
import { normaliseTimestamp } from '../model/edm-values';
import { VALUE_TABLE_VALUE } from '../model/service-model';
import type { ExprNode, LambdaNode, LiteralNode } from './ast';
import { Lookups, lookupValuesOf } from './bind-enum';
import { datePartOfLiteral, hasSubMillisecond } from './literal-time';
import type {
  BoundCall, BoundField, BoundLambda, BoundPredicate, BoundScalar, BoundValue, DatePartFunction, ValueType,
} from './bound';

/** A lambda's range variable (`x` in `Appliances/any(x: x eq 'Dishwasher')`) and the element it stands for. */
interface RangeVariable {
  readonly name: string;
  readonly element: BoundField;
}

/** One element of a filterable collection, as a field: its value table's value column. */
function elementOf(f: FieldSpec): BoundField {
  return { kind: 'field', field: { ...f, collection: false, nullable: false, column: VALUE_TABLE_VALUE }, column: VALUE_TABLE_VALUE, type: fieldType(f) };
}

export function fieldType(f: FieldSpec): ValueType {
  switch (f.type) {
    case 'Edm.String': return 'string';
    case 'Edm.Boolean': return 'boolean';
    case 'Edm.Int16': case 'Edm.Int32': case 'Edm.Int64': return 'integer';
    case 'Edm.Decimal': return 'decimal';
    case 'Edm.Double': return 'double';
    case 'Edm.Date': return 'date';
    case 'Edm.DateTimeOffset': return 'dateTimeOffset';
    case 'Edm.TimeOfDay': return 'timeOfDay';
    case 'Edm.Guid': return 'guid';
  }
}

const NUMERIC: ReadonlySet<ValueType> = new Set(['integer', 'decimal', 'double']);
const DATE_PARTS: ReadonlySet<string> = new Set(['year', 'month', 'day', 'hour', 'minute', 'second']);
const KNOWN_UNSUPPORTED_FUNCTIONS: ReadonlySet<string> = new Set([
  'indexof', 'substring', 'concat', 'matchespattern', 'fractionalseconds', 'totaloffsetminutes', 'totalseconds',
  'maxdatetime', 'mindatetime', 'round', 'floor', 'ceiling', 'cast', 'isof', 'geo.distance', 'geo.intersects',
  'geo.length', 'case', 'hassubset', 'hassubsequence',
]);

export class FilterBinder {
  /** Names of the fields the filter uses. */
  readonly fieldsUsed = new Set<string>();

  constructor(
    private readonly set: EntitySetSpec,
    private readonly now: () => string = () => new Date().toISOString(),
    /** Fields the client is not licensed to see. */
    private readonly hidden: ReadonlySet<string> = new Set(),
    /** The dictionary's lookups by name, for the values enumeration literals name. */
    private readonly lookups: Lookups = new Map(),
    /** Inside a lambda: its range variable, standing for one element of the collection. */
    private readonly range?: RangeVariable,
  ) {}

  predicate(node: ExprNode): BoundPredicate {
    switch (node.kind) {
      case 'logical':
        return { kind: 'logical', op: node.op, operands: node.operands.map((o) => this.predicate(o)) };
      case 'not':
        return { kind: 'not', operand: this.predicate(node.operand) };
      case 'compare':
        return this.compare(node.op, node.left, node.right);
      case 'in':
        return this.inList(node.left, node.list);
      case 'lambda':
        return this.lambda(node);
      case 'literal':
        if (node.type === 'boolean') return { kind: 'constant', value: node.value as boolean };
        throw Errors.NotACondition(literalText(node), true);
      default: {
        const scalar = this.scalar(node);
        if (scalar.type !== 'boolean') throw Errors.NotACondition(describe(node), false);
        return { kind: 'truth', operand: scalar };
      }
    }
  }

  private compare(written: string, leftNode: ExprNode, rightNode: ExprNode): BoundPredicate {
    if (written === 'has') return this.has(leftNode, rightNode);
    const cmp = written as 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
    const leftIsNull = leftNode.kind === 'literal' && leftNode.type === 'null';
    const rightIsNull = rightNode.kind === 'literal' && rightNode.type === 'null';
    if (leftIsNull && rightIsNull) return { kind: 'constant', value: cmp === 'eq' || cmp === 'ge' || cmp === 'le' };
    if (leftIsNull || rightIsNull) {
      const operand = this.scalar(leftIsNull ? rightNode : leftNode);
      // Ordering comparisons with null are null in OData, which filters the record out.
      if (cmp !== 'eq' && cmp !== 'ne') return { kind: 'constant', value: false };
      return { kind: 'isNull', operand, negated: cmp === 'ne' };
    }
    // A literal takes its type from the other side, so '2026-01-01T00:00:00Z' meets a timestamp as one (the spec's form).
    // The literal is put on the right, flipping the operator, so the field side reads left to right.
    const swap = leftNode.kind === 'literal' && rightNode.kind !== 'literal';
    const op = swap ? flip(cmp) : cmp;
    const left = this.scalar(swap ? rightNode : leftNode);
    const literal = swap ? leftNode : rightNode;
    if (literal.kind !== 'literal') {
      const right = this.scalar(literal);
      this.checkComparable(left.type, right.type, literal);
      return { kind: 'compare', op, left, right };
    }
    const right = this.lookupLiteral(left, literal) ?? this.literalAs(literal, left.type);
    if (left.type === 'dateTimeOffset' && hasSubMillisecond(literal)) {
      // Stored timestamps have millisecond precision; a literal with finer digits was truncated to the
      // millisecond, so `ge`/`gt` become `gt` it, `lt`/`le` become `le` it, and nothing equals it.
      // Nothing stored equals it, so eq is false and ne true (also for null: null ne x is true in OData).
      if (op === 'eq') return { kind: 'constant', value: false };
      if (op === 'ne') return { kind: 'constant', value: true };
      return { kind: 'compare', op: op === 'ge' || op === 'gt' ? 'gt' : 'le', left, right };
    }
    return { kind: 'compare', op, left, right };
  }

  private inList(leftNode: ExprNode, list: readonly ExprNode[]): BoundPredicate {
    const left = this.scalar(leftNode);
    const values = list.map((item) => {
      if (item.kind !== 'literal') throw Errors.InListInvalid('not-literal');
      if (item.type === 'null') throw Errors.InListInvalid('null');
      return this.lookupLiteral(left, item) ?? this.literalAs(item, left.type);
    });
    return { kind: 'in', left, values };
  }

  scalar(node: ExprNode): BoundScalar {
    switch (node.kind) {
      case 'member':
        return this.field(node.path, node.pos);
      case 'literal':
        if (node.type === 'null') throw Errors.NullComparison();
        return this.literalAs(node, natural(node));
      case 'call':
        return this.call(node.name, node.args);
      case 'arithmetic':
      case 'negate':
        throw Errors.ArithmeticNotSupported();
      default:
        throw Errors.NotAValue(describe(node));
    }
  }

  field(path: readonly string[], _pos: number): BoundField {
    if (this.range && path[0] === this.range.name) {
      if (path.length > 1) throw Errors.FieldHasNoMembers(path[0], path.join('/'), 'navigate to');
      return this.range.element;
    }
    const f = this.namedField(path);
    if (f.collection && f.filterable) throw Errors.CollectionNeedsLambda(f.name);
    if (!f.filterable || !f.column) throw Errors.FieldNotFilterable(f.name, this.set.name, filterableNames(this.set, this.hidden));
    this.fieldsUsed.add(f.name);
    return { kind: 'field', field: f, column: f.column, type: fieldType(f) };
  }

  /** A field of the set the filter may name: one the client's licence shows, not restricted, with no path into it. */
  private namedField(path: readonly string[]): FieldSpec {
    const name = path.join('/');
    const f = licensedField(this.set, path[0], this.hidden, path.length === 1);
    if (!f) {
      const nav = this.set.navigations.find((n) => n.name === path[0]);
      if (nav) throw Errors.RelatedFilterNotSupported(name, nav.target);
      throw Errors.FieldNotFound(this.set.name, path[0]);
    }
    if (path.length > 1) throw Errors.FieldHasNoMembers(path[0], name, 'navigate to');
    if (f.restricted) throw Errors.FieldRestricted(f.name, '$filter', this.set.name, filterableNames(this.set, this.hidden));
    return f;
  }

  /**
   * `any`/`all` on a collection the dictionary makes filterable (it has a value table). The predicate is bound
   * with the range variable in scope; the set's other fields stay nameable in it, a lambda inside it is not.
   */
  private lambda(node: LambdaNode): BoundLambda {
    if (this.range) throw Errors.LambdaNotSupported(node.fn, node.collection.path.join('/'));
    const f = this.namedField(node.collection.path);
    const lambda = this.lambdaOn(f, node.fn);
    if (!node.predicate || node.variable === undefined) return lambda;
    const inner = new FilterBinder(this.set, this.now, this.hidden, this.lookups, { name: node.variable, element: elementOf(f) });
    const predicate = inner.predicate(node.predicate);
    for (const name of inner.fieldsUsed) this.fieldsUsed.add(name);
    return { ...lambda, predicate };
  }

  /** A lambda on `f` without its predicate, once `f` is known to be a filterable collection. */
  private lambdaOn(f: FieldSpec, fn: 'any' | 'all'): BoundLambda {
    if (!f.collection) throw Errors.LambdaNeedsCollection(fn, f.name);
    if (!f.filterable || !f.valueTable) throw Errors.FieldNotFilterable(f.name, this.set.name, filterableNames(this.set, this.hidden));
    this.fieldsUsed.add(f.name);
    return { kind: 'lambda', fn, collection: f, valueTable: f.valueTable, recordKey: this.set.fieldsByName[this.set.key].column! };
  }

  /**
   * `Field has Namespace.Lookup'Member'` (several members: `'A,B'`, each of them): on a multi-value lookup,
   * whether the collection holds the member, as `Field/any(x: x eq …)`; on a single-value one (or a lambda's
   * variable), whether it is the member.
   */
  private has(leftNode: ExprNode, rightNode: ExprNode): BoundPredicate {
    if (leftNode.kind !== 'member' || rightNode.kind !== 'literal') throw Errors.HasNotApplicable();
    const isVariable = this.range !== undefined && leftNode.path[0] === this.range.name;
    const f = isVariable ? undefined : this.namedField(leftNode.path);
    const left = f?.collection ? elementOf(f) : this.scalar(leftNode);
    const values = left.kind === 'field' ? lookupValuesOf(left.field, rightNode, this.lookups) : undefined;
    if (!values || left.kind !== 'field') throw Errors.HasNotApplicable();
    const each = values.map((v): BoundPredicate => {
      const equals: BoundPredicate = { kind: 'compare', op: 'eq', left, right: { kind: 'value', type: 'string', value: v } };
      return f?.collection ? { ...this.lambdaOn(f, 'any'), predicate: equals } : equals;
    });
    return each.length === 1 ? each[0] : { kind: 'logical', op: 'and', operands: each };
  }

  /** A literal naming a lookup value (an enumeration literal, or a member's name), as the stored value. */
  private lookupLiteral(left: BoundScalar, literal: LiteralNode): BoundValue | undefined {
    if (left.kind !== 'field') return undefined;
    const values = lookupValuesOf(left.field, literal, this.lookups);
    if (!values) return undefined;
    if (values.length !== 1) throw Errors.LiteralInvalid(literalText(literal), `single value of lookup ${left.field.lookupName}`);
    return { kind: 'value', type: 'string', value: values[0] };
  }

  private call(name: string, argNodes: readonly ExprNode[]): BoundCall | BoundValue {
    const arity = (n: number) => {
      if (argNodes.length !== n) throw Errors.FunctionArity(name, n, argNodes.length);
    };
    switch (name) {
      case 'contains': case 'startswith': case 'endswith': {
        arity(2);
        const [a, b] = argNodes.map((n) => this.scalar(n));
        this.requireType(name, a, ['string']);
        this.requireType(name, b, ['string']);
        return { kind: 'call', name, args: [a, b], type: 'boolean' };
      }
      case 'tolower': case 'toupper': case 'trim': {
        arity(1);
        const a = this.scalar(argNodes[0]);
        this.requireType(name, a, ['string']);
        return { kind: 'call', name, args: [a], type: 'string' };
      }
      case 'length': {
        arity(1);
        const a = this.scalar(argNodes[0]);
        this.requireType(name, a, ['string']);
        return { kind: 'call', name, args: [a], type: 'integer' };
      }
      case 'year': case 'month': case 'day': case 'hour': case 'minute': case 'second': {
        arity(1);
        const literal = argNodes[0];
        if (literal.kind === 'literal' && (literal.type === 'dateTimeOffset' || literal.type === 'date' || literal.type === 'timeOfDay')) {
          // A literal's parts are read in its own offset (stored values are UTC and read in UTC).
          return { kind: 'value', type: 'integer', value: datePartOfLiteral(name, literal) };
        }
        const a = this.scalar(argNodes[0]);
        this.requireType(name, a, DATE_PARTS.has(name) && ['hour', 'minute', 'second'].includes(name)
          ? ['dateTimeOffset', 'timeOfDay'] : ['dateTimeOffset', 'date']);
        return { kind: 'call', name: name as DatePartFunction, args: [a], type: 'integer' };
      }
      case 'date': case 'time': {
        arity(1);
        const a = this.scalar(argNodes[0]);
        this.requireType(name, a, ['dateTimeOffset']);
        return { kind: 'call', name, args: [a], type: name === 'date' ? 'date' : 'timeOfDay' };
      }
      case 'now':
        arity(0);
        return { kind: 'value', type: 'dateTimeOffset', value: this.now() };
      default:
        if (KNOWN_UNSUPPORTED_FUNCTIONS.has(name)) throw Errors.FunctionNotSupported(name);
        throw Errors.FunctionUnknown(name);
    }
  }

  private requireType(fn: string, arg: BoundScalar, types: readonly ValueType[]): void {
    if (!types.includes(arg.type)) throw Errors.FunctionArgumentType(fn, types, arg.type);
  }

  private checkComparable(a: ValueType, b: ValueType, node: ExprNode): void {
    if (a === b || (NUMERIC.has(a) && NUMERIC.has(b))) return;
    throw Errors.TypeMismatch(a, b, describe(node));
  }

  /** A literal converted to the stored form of `type`; LiteralInvalid when it is not a value of that type. */
  literalAs(node: LiteralNode, type: ValueType): BoundValue {
    const bad = () => Errors.LiteralInvalid(literalText(node), typeLabel(type));
    const v = node.value;
    switch (type) {
      case 'string': case 'guid':
        if (node.type === 'string' || (type === 'guid' && node.type === 'guid')) return { kind: 'value', type, value: v as string };
        throw bad();
      case 'boolean':
        if (node.type === 'boolean') return { kind: 'value', type, value: v as boolean };
        throw bad();
      case 'integer': case 'decimal': case 'double':
        if ((node.type === 'integer' || node.type === 'decimal' || node.type === 'double') && Number.isFinite(v as number)) {
          return { kind: 'value', type: natural(node), value: v as number };
        }
        throw bad();
      case 'dateTimeOffset': {
        let text: string | undefined;
        if (node.type === 'dateTimeOffset' || node.type === 'string') text = normaliseTimestamp(v as string);
        else if (node.type === 'date') text = normaliseTimestamp(`${v}T00:00:00Z`);
        if (text === undefined) throw bad();
        return { kind: 'value', type, value: text };
      }
      case 'date':
        if ((node.type === 'date' || node.type === 'string') && normaliseTimestamp(`${v}T00:00:00Z`) && /^\d{4}-\d{2}-\d{2}$/.test(v as string)) {
          return { kind: 'value', type, value: v as string };
        }
        throw bad();
      case 'timeOfDay': {
        // Stored and derived times are `HH:mm:ss.sss`; the literal takes the same width so text order is time order.
        const m = (node.type === 'timeOfDay' || node.type === 'string') ? /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?$/.exec(v as string) : null;
        if (!m || +m[1] > 23 || +m[2] > 59 || +(m[3] ?? 0) > 59) throw bad();
        return { kind: 'value', type, value: `${m[1]}:${m[2]}:${m[3] ?? '00'}.${(m[4] ?? '').padEnd(3, '0').slice(0, 3)}` };
      }
      case 'null':
        throw bad();
    }
  }
}

function natural(node: LiteralNode): ValueType {
  switch (node.type) {
    case 'string': return 'string';
    case 'boolean': return 'boolean';
    case 'integer': return 'integer';
    case 'decimal': return 'decimal';
    case 'double': return 'double';
    case 'date': return 'date';
    case 'dateTimeOffset': return 'dateTimeOffset';
    case 'timeOfDay': return 'timeOfDay';
    case 'guid': return 'guid';
    case 'null': return 'null';
    default:
      throw Errors.LiteralTypeNotSupported(node.typeName ?? node.type);
  }
}


function flip<T extends string>(op: T): T {
  const m: Record<string, string> = { gt: 'lt', lt: 'gt', ge: 'le', le: 'ge', eq: 'eq', ne: 'ne' };
  return m[op] as T;
}

/** What may be filtered on, as a client sees it (its hidden fields are not named). */
export function filterableNames(set: EntitySetSpec, hidden: ReadonlySet<string> = new Set()): string {
  return set.fields.filter((f) => f.filterable && !hidden.has(f.name)).map((f) => f.name).join(', ');
}

function typeLabel(t: ValueType): string {
  return t === 'dateTimeOffset' ? 'date-time (ISO 8601 with Z or an offset)' : t === 'date' ? 'date (YYYY-MM-DD)' : t;
}

function literalText(node: LiteralNode): string {
  return node.type === 'string' ? `'${node.value}'` : String(node.value);
}

function describe(node: ExprNode): string {
  switch (node.kind) {
    case 'member': return `field ${node.path.join('/')}`;
    case 'literal': return `literal ${literalText(node)}`;
    case 'call': return `${node.name}() call`;
    default: return `${node.kind} expression`;
  }
}

/**
 * The field a client names, as its licence lets it know the field: a hidden field is answered exactly as a
 * field the set does not have (its $metadata does not show it, so no answer may), except that filtering or
 * ordering on a restricted field is refused with 403 for every client alike (spec §7), which tells nothing
 * about a licence.
 */
export function licensedField(set: EntitySetSpec, name: string, hidden: ReadonlySet<string>, filterOrOrder: boolean): FieldSpec | undefined {
  const f = set.fieldsByName[name];
  if (f && hidden.has(name) && !(filterOrOrder && f.restricted)) return undefined;
  return f;
}
