/**
 * Compiles bound predicates to parameterised SQL, the same on every database but for the dialect's hooks.
 * - Values are always parameters; identifiers are storage columns from the generated field tables.
 * - OData compares null as a value (`null ne 'x'` is true, `null eq 'x'` false), SQL as unknown. `not` is
 *   pushed down to the comparisons (De Morgan) and each comparison gets the null-aware form it needs, so a
 *   plain `col = ?` stays plain and keeps its index.
 * - Text functions use forms that are case-sensitive on both (instr/LOCATE, not LIKE); timestamps are stored
 *   as fixed-width UTC text, so date parts are substrings.
 * Nothing is re-validated here: the binder already did.
 */
import { VALUE_TABLE_KEY } from '../../model/service-model';
import type { BoundCall, BoundChoice, BoundField, BoundInQuery, BoundLambda, BoundPredicate, BoundScalar, BoundValue } from '../../query/bound';
import type { SqlDialect } from './dialect';
import { join, param, raw, Fragment, fragment } from './fragment';
import { valueList } from './value-list';

const SQL_OP = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' } as const;
const NEGATED_OP = { eq: 'ne', ne: 'eq', gt: 'le', ge: 'lt', lt: 'ge', le: 'gt' } as const;

/** Positions of date parts in stored text: timestamps `YYYY-MM-DDTHH:mm:ss.sssZ`, dates, times `HH:mm:ss.sss`. */
const PART_POSITION: Record<string, [number, number]> = { year: [1, 4], month: [6, 2], day: [9, 2], hour: [12, 2], minute: [15, 2], second: [18, 2] };
const TIME_PART_POSITION: Record<string, [number, number]> = { hour: [1, 2], minute: [4, 2], second: [7, 2] };

/** Chains longer than this become a balanced tree of parentheses. */
const FLAT_CHAIN = 16;

const TRUE = raw('1 = 1');
const FALSE = raw('1 = 0');

/**
 * A condition on the rows of `table` (named as the statement's FROM names it, unaliased). `negated`: the exact
 * complement, in OData's two-valued logic (records with nulls land on one side).
 */
export function compileFilter(p: BoundPredicate, dialect: SqlDialect, table: string, negated = false): Fragment {
  return new FilterCompiler(dialect, table, 0).predicate(p, negated);
}

class FilterCompiler {
  /** `row`: how the rows being filtered are named here; `depth`: how many semi-joins enclose them. */
  constructor(private readonly d: SqlDialect, private readonly row: string, private readonly depth: number) {}

  predicate(p: BoundPredicate, negated: boolean): Fragment {
    switch (p.kind) {
      case 'constant':
        return p.value !== negated ? TRUE : FALSE;
      case 'logical':
        return this.logical(p.op, p.operands, negated);
      case 'not':
        return this.predicate(p.operand, !negated);
      case 'isNull':
        return fragment`${this.scalar(p.operand)} ${raw(p.negated !== negated ? 'IS NOT NULL' : 'IS NULL')}`;
      case 'in':
        return this.member(p.left, valueList(this.d, p.values.map(stored)), negated);
      case 'inQuery':
        return this.semiJoin(p, negated);
      case 'choice':
        return this.choice(p, negated);
      case 'truth': {
        // A Boolean field or a boolean function; null is neither true nor false, so not(null) stays out.
        if (p.operand.kind === 'field') return fragment`${this.scalar(p.operand)} = ${raw(negated ? '0' : '1')}`;
        const operand = this.scalar(p.operand);
        return negated ? fragment`NOT ${operand}` : operand;
      }
      case 'compare':
        return this.compare(p.op, negated, p.left, p.right);
      case 'lambda':
        return this.lambda(p, negated);
    }
  }

  /**
   * A correlated EXISTS on the collection's value table, which both databases answer by seeking its primary
   * key (record key, value) for each record they consider, or (MariaDB, when few records hold the values)
   * its (value, record key) index first. `all(x: p)` is "no element fails p", so an empty
   * collection meets it (OData); negation swaps EXISTS and NOT EXISTS. The set's key is qualified by the rows
   * being filtered: inside a semi-join another table that has a column of that name may enclose them.
   */
  private lambda(p: BoundLambda, negated: boolean): Fragment {
    const table = this.d.id(p.valueTable);
    const exists = (p.fn === 'any') !== negated;
    const [inner, outer] = [fragment`${table}.${this.d.id(VALUE_TABLE_KEY)}`, fragment`${this.d.id(this.row)}.${this.d.id(p.recordKey)}`];
    const correlated = exists ? fragment`${inner} = ${outer}` : this.d.antiJoinKey(inner, outer);
    const elements = p.predicate ? fragment`${correlated} AND ${this.predicate(p.predicate, p.fn === 'all')}` : correlated;
    return fragment`${raw(exists ? 'EXISTS' : 'NOT EXISTS')} (SELECT 1 FROM ${table} WHERE ${elements})`;
  }

  /**
   * A correlated EXISTS seeking the other set's row by its column for each row filtered, never an IN (SELECT …):
   * both databases would build the whole subquery's result for each statement, a scan per page (the scoped
   * EntityEvent walk read every visible record and prior image for each page of 1,000 events). The other set is
   * aliased by depth, so its condition's unqualified columns resolve to it and a set may meet itself. The column
   * is a key, never null, so NOT EXISTS is the exact complement: a null `left` is outside, as OData wants.
   */
  private semiJoin(p: BoundInQuery, negated: boolean): Fragment {
    const alias = `_q${this.depth + 1}`;
    const [inner, outer] = [fragment`${this.d.id(alias)}.${this.d.id(p.column.column)}`, fragment`${this.d.id(this.row)}.${this.d.id(p.left.column)}`];
    const correlated = negated ? this.d.antiJoinKey(inner, outer) : fragment`${inner} = ${outer}`;
    const where = new FilterCompiler(this.d, alias, this.depth + 1).predicate(p.where, false);
    return fragment`${raw(negated ? 'NOT EXISTS' : 'EXISTS')} (SELECT 1 FROM ${this.d.id(p.set.table)} ${this.d.id(alias)} WHERE ${correlated} AND ${where})`;
  }

  /**
   * `CASE on WHEN v THEN p … ELSE q END`, true where the chosen branch is. `on` is never null, so negating every
   * branch negates the whole.
   */
  private choice(p: BoundChoice, negated: boolean): Fragment {
    const branches = p.cases.map((c) => fragment`WHEN ${this.value(c.value)} THEN ${this.predicate(c.then, negated)}`);
    return fragment`(CASE ${this.scalar(p.on)} ${join(branches, ' ')} ELSE ${this.predicate(p.otherwise, negated)} END)`;
  }

  /** `left IN (…)` a list; negated, a null `left` is outside the list too. */
  private member(l: BoundScalar, list: Fragment, negated: boolean): Fragment {
    const left = this.scalar(l);
    if (!negated) return fragment`${left} IN (${list})`;
    return nullable(l) ? fragment`(${left} NOT IN (${list}) OR ${left} IS NULL)` : fragment`${left} NOT IN (${list})`;
  }

  /**
   * `and`/`or` chains. Negation goes down by De Morgan. Constants fold, and equalities on one column
   * join into one IN list (`X eq a or X eq b` is `X IN (a, b)`; `not (X eq a) and not (X eq b)` is
   * `X NOT IN (a, b)`, nulls included): long key lists then cost the database one list, not a tree of
   * thousands of comparisons to plan.
   */
  private logical(written: 'and' | 'or', operands: readonly BoundPredicate[], negated: boolean): Fragment {
    const op = (written === 'and') !== negated ? 'AND' : 'OR';
    // In an OR chain the terms that join are `X eq v`; in an AND chain, `not (X eq v)`.
    const joinable = op === 'OR';
    const lists = new Map<string, { left: BoundScalar; values: BoundValue[] }>();
    const rest: BoundPredicate[] = [];
    for (const o of operands) {
      const c = constantOf(o, negated);
      if (c !== undefined) {
        if (c === (op === 'OR')) return op === 'OR' ? TRUE : FALSE;
        continue; // true in AND, false in OR: no effect
      }
      const eq = equalityOf(o, negated);
      if (eq && eq.positive === joinable) {
        const list = lists.get(eq.left.column) ?? lists.set(eq.left.column, { left: eq.left, values: [] }).get(eq.left.column)!;
        list.values.push(eq.value);
        continue;
      }
      rest.push(o);
    }
    const terms = [
      ...[...lists.values()].map((l) => this.predicate({ kind: 'in', left: l.left, values: l.values }, !joinable)),
      ...rest.map((o) => this.predicate(o, negated)),
    ];
    if (terms.length === 0) return op === 'OR' ? FALSE : TRUE;
    return balanced(terms, op);
  }

  /**
   * A comparison in OData's two-valued sense: null eq null is true, null ne x is true, an ordering
   * comparison with null is false (so its negation is true).
   */
  private compare(written: keyof typeof SQL_OP, negated: boolean, l: BoundScalar, r: BoundScalar): Fragment {
    const op = negated ? NEGATED_OP[written] : written;
    const left = this.scalar(l);
    const right = this.scalar(r);
    const plain = fragment`${left} ${raw(SQL_OP[op])} ${right}`;
    const ln = nullable(l);
    const rn = nullable(r);
    if (!ln && !rn) return plain;
    if (op === 'eq') {
      return ln && rn ? fragment`(${plain} OR (${left} IS NULL AND ${right} IS NULL))` : plain;
    }
    if (op === 'ne') {
      if (ln && rn) return fragment`(${plain} OR (${left} IS NULL AND ${right} IS NOT NULL) OR (${left} IS NOT NULL AND ${right} IS NULL))`;
      return fragment`(${plain} OR ${ln ? left : right} IS NULL)`;
    }
    // An ordering comparison excludes nulls; the negation of one (not (x gt v)) includes them.
    if (!negated) return plain;
    const nulls = [...(ln ? [fragment`${left} IS NULL`] : []), ...(rn ? [fragment`${right} IS NULL`] : [])];
    return fragment`(${plain} OR ${join(nulls, ' OR ')})`;
  }

  private scalar(s: BoundScalar): Fragment {
    switch (s.kind) {
      case 'field':
        return this.d.id(s.column);
      case 'value':
        return this.value(s);
      case 'call':
        // A boolean function is a comparison itself; as an operand it is parenthesised, because MariaDB gives
        // all comparison operators one precedence (`a > 0 = b > 0` would compare left to right there).
        return s.type === 'boolean' ? fragment`(${this.call(s)})` : this.call(s);
    }
  }

  private value(v: BoundValue): Fragment {
    return param(stored(v));
  }

  private call(c: BoundCall): Fragment {
    const d = this.d;
    const arg = (i: number) => this.scalar(c.args[i]);
    switch (c.name) {
      case 'contains': return d.contains(arg(0), arg(1));
      case 'startswith': return d.startsWith(arg(0), arg(1));
      case 'endswith': return d.endsWith(arg(0), arg(1));
      case 'tolower': return d.toLower(arg(0));
      case 'toupper': return d.toUpper(arg(0));
      case 'trim': return d.trim(arg(0));
      case 'length': return d.length(arg(0));
      case 'date': return d.substring(arg(0), 1, 10);
      case 'time': return d.substring(arg(0), 12, 12);
      default: {
        const [from, len] = (c.args[0].type === 'timeOfDay' ? TIME_PART_POSITION : PART_POSITION)[c.name];
        return d.castInteger(d.substring(arg(0), from, len));
      }
    }
  }
}

/**
 * A chain of terms as a balanced tree of parentheses: SQLite refuses expressions nested over 1000 deep,
 * and a flat `a OR b OR …` nests one level per term there.
 */
function balanced(terms: readonly Fragment[], op: 'AND' | 'OR'): Fragment {
  if (terms.length <= FLAT_CHAIN) return fragment`(${join(terms, ` ${op} `)})`;
  const mid = Math.ceil(terms.length / 2);
  return fragment`(${balanced(terms.slice(0, mid), op)} ${raw(op)} ${balanced(terms.slice(mid), op)})`;
}

/** A value as it is bound: booleans as 1/0, as both databases store them. */
function stored(v: BoundValue): unknown {
  return v.type === 'boolean' ? (v.value ? 1 : 0) : v.value;
}

/** A constant operand's truth under `negated`, else undefined. */
function constantOf(p: BoundPredicate, negated: boolean): boolean | undefined {
  if (p.kind === 'constant') return p.value !== negated;
  if (p.kind === 'not') return constantOf(p.operand, !negated);
  return undefined;
}

/** `field eq value` (positive) or its negation, under `negated`; else undefined. */
function equalityOf(p: BoundPredicate, negated: boolean): { left: BoundField; value: BoundValue; positive: boolean } | undefined {
  if (p.kind === 'not') return equalityOf(p.operand, !negated);
  if (p.kind !== 'compare' || (p.op !== 'eq' && p.op !== 'ne')) return undefined;
  if (p.left.kind !== 'field' || p.right.kind !== 'value') return undefined;
  return { left: p.left, value: p.right, positive: (p.op === 'eq') !== negated };
}

function nullable(s: BoundScalar): boolean {
  switch (s.kind) {
    case 'field': return s.field.nullable;
    case 'value': return s.value === null;
    case 'call': return s.args.some(nullable);
  }
}
