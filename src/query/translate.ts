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
import type { BoundCall, BoundPredicate, BoundScalar, BoundValue } from './bound';

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

export function translateFilter(p: BoundPredicate, dialect: Dialect): SqlFragment {
  const params: unknown[] = [];
  const sql = new Translator(dialect, params).predicate(p, false);
  return { sql, params };
}

class Translator {
  constructor(private readonly dialect: Dialect, private readonly params: unknown[]) {}

  predicate(p: BoundPredicate, negated: boolean): string {
    switch (p.kind) {
      case 'constant':
        return p.value !== negated ? '1 = 1' : '1 = 0';
      case 'logical': {
        // not (a and b) = not a or not b; not (a or b) = not a and not b
        const op = (p.op === 'and') !== negated ? 'AND' : 'OR';
        return `(${p.operands.map((o) => this.predicate(o, negated)).join(` ${op} `)})`;
      }
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
        return this.compare(negated ? NEGATED_OP[p.op] : p.op, p.left, p.right);
    }
  }

  /** `op` is already the effective (possibly negated) operator, in OData's two-valued sense. */
  private compare(op: keyof typeof SQL_OP, l: BoundScalar, r: BoundScalar): string {
    const left = () => this.scalar(l);
    const right = () => this.scalar(r);
    const plain = () => `${left()} ${SQL_OP[op]} ${right()}`;
    const ln = nullable(l);
    const rn = nullable(r);
    if (!ln && !rn) return plain();
    if (op === 'eq') {
      // null eq null is true in OData
      return ln && rn ? `(${plain()} OR (${left()} IS NULL AND ${right()} IS NULL))` : plain();
    }
    if (op === 'ne') {
      if (ln && rn) return `(${plain()} OR (${left()} IS NULL AND ${right()} IS NOT NULL) OR (${left()} IS NOT NULL AND ${right()} IS NULL))`;
      return `(${plain()} OR ${ln ? left() : right()} IS NULL)`;
    }
    // Ordering comparisons with null are false; the plain form already excludes nulls.
    return plain();
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
      case 'tolower':
        return `LOWER(${arg(0)})`;
      case 'toupper':
        return `UPPER(${arg(0)})`;
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

function nullable(s: BoundScalar): boolean {
  switch (s.kind) {
    case 'field': return s.field.nullable;
    case 'value': return s.value === null;
    case 'call': return s.args.some(nullable);
  }
}
