/**
 * Translates bound filters to parameterised SQL for SQLite and MariaDB with identical results.
 * - Values are always parameters; identifiers are storage columns from the generated field tables.
 * - OData compares null as a value (`null ne 'x'` is true, `null eq 'x'` false), SQL as unknown. `not` is
 *   pushed down to the comparisons (De Morgan) and each comparison gets the null-aware form it needs, so a
 *   plain `col = ?` stays plain and keeps its index.
 * - Text functions use forms that are case-sensitive on both (instr/LOCATE, not LIKE); timestamps are stored
 *   as fixed-width UTC text, so date parts are substrings.
 * Nothing is re-validated here: the binder already did.
 */
import type { Dialect } from '../storage/database';
import type { BoundCall, BoundField, BoundPredicate, BoundScalar, BoundValue } from './bound';

export interface SqlFragment {
  readonly sql: string;
  readonly params: readonly unknown[];
}

const SQL_OP = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' } as const;
const NEGATED_OP = { eq: 'ne', ne: 'eq', gt: 'le', ge: 'lt', lt: 'ge', le: 'gt' } as const;

/** Positions of date parts in stored text: timestamps `YYYY-MM-DDTHH:mm:ss.sssZ`, dates, times `HH:mm:ss.sss`. */
const PART_POSITION: Record<string, [number, number]> = { year: [1, 4], month: [6, 2], day: [9, 2], hour: [12, 2], minute: [15, 2], second: [18, 2] };
const TIME_PART_POSITION: Record<string, [number, number]> = { hour: [1, 2], minute: [4, 2], second: [7, 2] };

export function quoteIdentifier(column: string): string {
  // Both dialects accept backticks; the name is a generator-checked identifier.
  return `\`${column}\``;
}

/** `negated`: the exact complement, in OData's two-valued logic (records with nulls land on one side). */
export function translateFilter(p: BoundPredicate, dialect: Dialect, negated = false): SqlFragment {
  const params: unknown[] = [];
  const sql = new Translator(dialect, params).predicate(p, negated);
  return { sql, params };
}

class Translator {
  constructor(private readonly dialect: Dialect, private readonly params: unknown[]) {}

  predicate(p: BoundPredicate, negated: boolean): string {
    switch (p.kind) {
      case 'constant':
        return p.value !== negated ? '1 = 1' : '1 = 0';
      case 'logical':
        return this.logical(p.op, p.operands, negated);
      case 'not':
        return this.predicate(p.operand, !negated);
      case 'isNull':
        return `${this.scalar(p.operand)} IS ${p.negated !== negated ? 'NOT ' : ''}NULL`;
      case 'in': {
        // Operands are rendered afresh wherever they recur, so each placeholder gets its parameter in text order.
        const left = () => this.scalar(p.left);
        const list = () => p.values.map((v) => this.value(v)).join(', ');
        if (!negated) return `${left()} IN (${list()})`;
        return nullable(p.left) ? `(${left()} NOT IN (${list()}) OR ${left()} IS NULL)` : `${left()} NOT IN (${list()})`;
      }
      case 'truth': {
        const operand = this.scalar(p.operand);
        // A Boolean field or a boolean function; null is neither true nor false, so not(null) stays out.
        if (p.operand.kind === 'field') return `${operand} = ${negated ? 0 : 1}`;
        return negated ? `NOT (${operand})` : `(${operand})`;
      }
      case 'compare':
        return this.compare(p.op, negated, p.left, p.right);
    }
  }

  /**
   * `and`/`or` chains. Negation goes down by De Morgan. Constants fold, and equalities on one column
   * join into one IN list (`X eq a or X eq b` is `X IN (a, b)`; `not (X eq a) and not (X eq b)` is
   * `X NOT IN (a, b)`, nulls included): long key lists then cost the database one list, not a tree of
   * thousands of comparisons to plan.
   */
  private logical(written: 'and' | 'or', operands: readonly BoundPredicate[], negated: boolean): string {
    const op = (written === 'and') !== negated ? 'AND' : 'OR';
    // In an OR chain the terms that join are `X eq v`; in an AND chain, `not (X eq v)`.
    const joinable = op === 'OR';
    const lists = new Map<string, { left: BoundScalar; values: BoundValue[] }>();
    const rest: BoundPredicate[] = [];
    for (const o of operands) {
      const c = constantOf(o, negated);
      if (c !== undefined) {
        if (c === (op === 'OR')) return op === 'OR' ? '1 = 1' : '1 = 0';
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
    const terms: (() => string)[] = [
      ...[...lists.values()].map((l) => () => this.predicate({ kind: 'in', left: l.left, values: l.values }, !joinable)),
      ...rest.map((o) => () => this.predicate(o, negated)),
    ];
    if (terms.length === 0) return op === 'OR' ? '1 = 0' : '1 = 1';
    return this.balanced(terms, op);
  }

  /**
   * A chain of terms as a balanced tree of parentheses: SQLite refuses expressions nested over 1000 deep,
   * and a flat `a OR b OR …` nests one level per term there. Terms render in order, so parameters do too.
   */
  private balanced(terms: readonly (() => string)[], op: 'AND' | 'OR'): string {
    if (terms.length <= 16) return `(${terms.map((t) => t()).join(` ${op} `)})`;
    const mid = Math.ceil(terms.length / 2);
    const left = this.balanced(terms.slice(0, mid), op);
    return `(${left} ${op} ${this.balanced(terms.slice(mid), op)})`;
  }

  /**
   * A comparison in OData's two-valued sense: null eq null is true, null ne x is true, an ordering
   * comparison with null is false (so its negation is true).
   */
  private compare(written: keyof typeof SQL_OP, negated: boolean, l: BoundScalar, r: BoundScalar): string {
    const op = negated ? NEGATED_OP[written] : written;
    const left = () => this.scalar(l);
    const right = () => this.scalar(r);
    const plain = () => `${left()} ${SQL_OP[op]} ${right()}`;
    const ln = nullable(l);
    const rn = nullable(r);
    if (!ln && !rn) return plain();
    if (op === 'eq') {
      return ln && rn ? `(${plain()} OR (${left()} IS NULL AND ${right()} IS NULL))` : plain();
    }
    if (op === 'ne') {
      if (ln && rn) return `(${plain()} OR (${left()} IS NULL AND ${right()} IS NOT NULL) OR (${left()} IS NOT NULL AND ${right()} IS NULL))`;
      return `(${plain()} OR ${ln ? left() : right()} IS NULL)`;
    }
    // An ordering comparison excludes nulls; the negation of one (not (x gt v)) includes them.
    if (!negated) return plain();
    const nulls = [ln ? `${left()} IS NULL` : '', rn ? `${right()} IS NULL` : ''].filter(Boolean);
    return `(${plain()} OR ${nulls.join(' OR ')})`;
  }

  scalar(s: BoundScalar): string {
    switch (s.kind) {
      case 'field':
        return quoteIdentifier(s.column);
      case 'value':
        return this.value(s);
      case 'call':
        return this.call(s);
    }
  }

  private value(v: BoundValue): string {
    this.params.push(v.type === 'boolean' ? (v.value ? 1 : 0) : v.value);
    return '?';
  }

  /** Arguments are rendered where they stand in the SQL text, so parameters bind in text order. */
  private call(c: BoundCall): string {
    const my = this.dialect === 'mysql';
    const arg = (i: number) => this.scalar(c.args[i]);
    const length = (x: string) => (my ? `CHAR_LENGTH(${x})` : `length(${x})`);
    switch (c.name) {
      case 'contains': {
        if (!my) { const a = arg(0); return `instr(${a}, ${arg(1)}) > 0`; }
        const b = arg(1);
        return `LOCATE(${b}, ${arg(0)}) > 0`;
      }
      case 'startswith': {
        const a = arg(0);
        const len = length(arg(1));
        return `substr(${a}, 1, ${len}) = ${arg(1)}`;
      }
      case 'endswith': {
        if (my) { const a = arg(0); const len = length(arg(1)); return `RIGHT(${a}, ${len}) = ${arg(1)}`; }
        const a = arg(0);
        const la = length(arg(0));
        const lb = length(arg(1));
        return `substr(${a}, ${la} - ${lb} + 1) = ${arg(1)}`;
      }
      // SQLite's own lower/upper change ASCII only; OData's follow Unicode (the SQLite functions are registered in database.ts).
      case 'tolower':
        return my ? `LOWER(${arg(0)})` : `odata_tolower(${arg(0)})`;
      case 'toupper':
        return my ? `UPPER(${arg(0)})` : `odata_toupper(${arg(0)})`;
      case 'trim':
        return `TRIM(${arg(0)})`;
      case 'length':
        return length(arg(0));
      case 'date':
        return `substr(${arg(0)}, 1, 10)`;
      case 'time':
        return `substr(${arg(0)}, 12, 12)`;
      default: {
        const [from, len] = (c.args[0].type === 'timeOfDay' ? TIME_PART_POSITION : PART_POSITION)[c.name];
        return `CAST(substr(${arg(0)}, ${from}, ${len}) AS ${my ? 'SIGNED' : 'INTEGER'})`;
      }
    }
  }
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
