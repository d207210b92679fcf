/**
 * Recursive-descent parser for OData 4.01 common expressions, by precedence:
 * or < and < not < comparison (eq ne gt ge lt le has in) < add sub < mul div divby mod < unary minus < primary.
 * Operators, lambda names and literals like null/true are case-insensitive (4.01). Nesting is bounded so
 * a hostile filter ends in a QuerySyntax error, never in a stack overflow.
 */
import { Errors, ServiceError } from '../errors/catalogue';
import type { ArithmeticOp, ComparisonOp, ExprNode, LiteralNode, MemberNode, OrderByItem } from './ast';
import { Token, tokenize } from './lexer';

export const MAX_DEPTH = 64;

const COMPARISONS = new Set<string>(['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'has']);
const ADDITIVE = new Set<string>(['add', 'sub']);
const MULTIPLICATIVE = new Set<string>(['mul', 'div', 'divby', 'mod']);
const RESERVED = new Set<string>(['and', 'or', 'not', 'in', 'asc', 'desc', ...COMPARISONS, ...ADDITIVE, ...MULTIPLICATIVE]);

export class ExpressionParser {
  private readonly tokens: Token[];
  private i = 0;
  private depth = 0;

  constructor(text: string, private readonly option: string) {
    this.tokens = tokenize(text, option);
  }

  /** A whole option that is one expression. */
  static expression(text: string, option: string): ExprNode {
    const p = new ExpressionParser(text, option);
    const e = p.parseExpression();
    p.expectEnd();
    return e;
  }

  /** `$orderby`: expressions with optional asc/desc, comma separated. */
  static orderBy(text: string, option: string): OrderByItem[] {
    const p = new ExpressionParser(text, option);
    const items: OrderByItem[] = [];
    do {
      const pos = p.peek().pos;
      const expr = p.parseExpression();
      let direction: 'asc' | 'desc' = 'asc';
      const t = p.peek();
      if (t.kind === 'ident' && /^(asc|desc)$/i.test(t.text)) {
        if (!t.spaced) throw p.error(t, 'put a space before asc/desc');
        direction = t.text.toLowerCase() as 'asc' | 'desc';
        p.i++;
      }
      items.push({ expr, direction, pos });
    } while (p.acceptPunct(','));
    p.expectEnd();
    return items;
  }

  parseExpression(): ExprNode {
    return this.nested(() => this.parseOr());
  }

  private parseOr(): ExprNode {
    return this.logical('or', () => this.parseAnd());
  }

  private parseAnd(): ExprNode {
    return this.logical('and', () => this.parseNot());
  }

  private logical(op: 'and' | 'or', next: () => ExprNode): ExprNode {
    const first = next();
    const operands = [first];
    while (this.acceptKeyword(op)) operands.push(next());
    return operands.length === 1 ? first : { kind: 'logical', op, operands, pos: first.pos };
  }

  private parseNot(): ExprNode {
    const t = this.peek();
    // The ABNF wants a space after `not`, but RESO's certification tests and many clients send `not(`; both mean the operator.
    if (this.isKeyword(t, 'not')) {
      this.i++;
      return this.nested(() => ({ kind: 'not', operand: this.parseNot(), pos: t.pos }));
    }
    return this.parseComparison();
  }

  private parseComparison(): ExprNode {
    const left = this.parseAdditive();
    const t = this.peek();
    if (t.kind === 'ident' && COMPARISONS.has(t.text.toLowerCase())) {
      this.requireSpaceAround(t);
      this.i++;
      const right = this.parseAdditive();
      return { kind: 'compare', op: t.text.toLowerCase() as ComparisonOp, left, right, pos: t.pos };
    }
    if (this.isKeyword(t, 'in')) {
      this.requireSpaceAround(t);
      this.i++;
      return { kind: 'in', left, list: this.parseList(), pos: t.pos };
    }
    return left;
  }

  /** `( a, b, … )`, the right side of `in`. */
  private parseList(): ExprNode[] {
    const open = this.peek();
    if (!this.acceptPunct('(')) throw this.error(open, 'expected "(" and a list of values after in');
    const items: ExprNode[] = [];
    if (this.acceptPunct(')')) throw this.error(open, 'the list after in is empty');
    do items.push(this.parseAdditive()); while (this.acceptPunct(','));
    this.expectPunct(')');
    return items;
  }

  private parseAdditive(): ExprNode {
    return this.arithmetic(ADDITIVE, () => this.parseMultiplicative());
  }

  private parseMultiplicative(): ExprNode {
    return this.arithmetic(MULTIPLICATIVE, () => this.parseUnary());
  }

  /** A left-associative level of arithmetic operators. */
  private arithmetic(ops: ReadonlySet<string>, next: () => ExprNode): ExprNode {
    let left = next();
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'ident' || !ops.has(t.text.toLowerCase())) return left;
      this.requireSpaceAround(t);
      this.i++;
      const right = next();
      left = { kind: 'arithmetic', op: t.text.toLowerCase() as ArithmeticOp, left, right, pos: t.pos };
    }
  }

  private parseUnary(): ExprNode {
    const t = this.peek();
    if (t.kind === 'punct' && t.text === '-') {
      this.i++;
      return this.nested(() => ({ kind: 'negate', operand: this.parseUnary(), pos: t.pos }));
    }
    return this.parsePrimary();
  }

  private parsePrimary(): ExprNode {
    const t = this.peek();
    switch (t.kind) {
      case 'punct':
        if (t.text === '(') {
          this.i++;
          const e = this.parseExpression();
          this.expectPunct(')');
          return e;
        }
        throw this.error(t, `unexpected "${t.text}"`);
      case 'string':
        this.i++;
        return lit('string', t.text, t.pos);
      case 'integer': {
        this.i++;
        const n = Number(t.text);
        return Number.isSafeInteger(n) ? lit('integer', n, t.pos) : lit('decimal', n, t.pos);
      }
      case 'decimal':
        this.i++;
        return lit('decimal', Number(t.text), t.pos);
      case 'double':
        this.i++;
        return lit('double', t.text === '-INF' ? -Infinity : Number(t.text), t.pos);
      case 'date':
      case 'dateTimeOffset':
      case 'timeOfDay':
      case 'guid':
        this.i++;
        return lit(t.kind, t.text, t.pos);
      case 'typed':
        this.i++;
        return this.typedLiteral(t);
      case 'ident':
        return this.identifierExpression(t);
      case 'eof':
        throw this.error(t, 'the expression ends too early');
    }
    throw this.error(t, 'unexpected input');
  }

  private typedLiteral(t: Token): LiteralNode {
    const prefix = t.prefix!;
    const lower = prefix.toLowerCase();
    if (lower === 'duration') return { kind: 'literal', type: 'duration', value: t.text, typeName: prefix, pos: t.pos };
    if (lower === 'binary') return { kind: 'literal', type: 'binary', value: t.text, typeName: prefix, pos: t.pos };
    if (lower.startsWith('geography') || lower.startsWith('geometry')) {
      return { kind: 'literal', type: 'geo', value: t.text, typeName: prefix, pos: t.pos };
    }
    if (prefix.includes('.')) return { kind: 'literal', type: 'enum', value: t.text, typeName: prefix, pos: t.pos };
    throw this.error(t, `${prefix}'…' is not a literal form OData knows`);
  }

  private identifierExpression(t: Token): ExprNode {
    const word = t.text;
    const lower = word.toLowerCase();
    if (this.isCallAt(this.i)) return this.call(t);
    if (lower === 'null') { this.i++; return lit('null', null, t.pos); }
    if (lower === 'true' || lower === 'false') { this.i++; return lit('boolean', lower === 'true', t.pos); }
    if (word === 'INF' || word === 'NaN') { this.i++; return lit('double', word === 'INF' ? Infinity : NaN, t.pos); }
    if (RESERVED.has(lower)) throw this.error(t, `"${word}" cannot stand here; an operand (a field, a literal or a function) was expected`);
    if (word.startsWith('@')) throw this.error(t, 'parameter aliases (@name) are not supported');
    if (word.startsWith('$')) throw this.error(t, `${word} is not supported in expressions`);
    return this.memberPath(t);
  }

  private memberPath(first: Token): ExprNode {
    const path = [first.text];
    this.i++;
    while (this.peek().kind === 'punct' && this.peek().text === '/') {
      this.i++;
      const seg = this.peek();
      if (seg.kind !== 'ident') throw this.error(seg, 'expected a name after "/"');
      const lower = seg.text.toLowerCase();
      if ((lower === 'any' || lower === 'all') && this.peekAt(this.i + 1).text === '(') {
        return this.lambda({ kind: 'member', path, pos: first.pos }, seg);
      }
      path.push(seg.text);
      this.i++;
    }
    return { kind: 'member', path, pos: first.pos };
  }

  private lambda(collection: MemberNode, fnToken: Token): ExprNode {
    const fn = fnToken.text.toLowerCase() as 'any' | 'all';
    this.i += 2; // name and "("
    if (this.acceptPunct(')')) {
      if (fn === 'all') throw this.error(fnToken, 'all() needs a variable and a predicate: all(x: <condition on x>)');
      return { kind: 'lambda', fn, collection, pos: fnToken.pos };
    }
    const v = this.peek();
    if (v.kind !== 'ident' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.text)) throw this.error(v, `expected a lambda variable name in ${fn}(x: …)`);
    this.i++;
    this.expectPunct(':');
    const predicate = this.nested(() => this.parseExpression());
    this.expectPunct(')');
    return { kind: 'lambda', fn, collection, variable: v.text, predicate, pos: fnToken.pos };
  }

  private call(t: Token): ExprNode {
    this.i += 2; // name and "("
    const args: ExprNode[] = [];
    if (!this.acceptPunct(')')) {
      do args.push(this.nested(() => this.parseExpression())); while (this.acceptPunct(','));
      this.expectPunct(')');
    }
    return { kind: 'call', name: t.text.toLowerCase(), args, pos: t.pos };
  }

  // -- token helpers

  private peek(): Token {
    return this.tokens[this.i];
  }

  private peekAt(i: number): Token {
    return this.tokens[Math.min(i, this.tokens.length - 1)];
  }

  /** A name directly followed by "(" (no space) is a function call. */
  private isCallAt(i: number): boolean {
    const t = this.peekAt(i);
    const next = this.peekAt(i + 1);
    return t.kind === 'ident' && next.kind === 'punct' && next.text === '(' && !next.spaced;
  }

  private isKeyword(t: Token, word: string): boolean {
    return t.kind === 'ident' && t.text.toLowerCase() === word;
  }

  private acceptKeyword(word: string): boolean {
    const t = this.peek();
    if (!this.isKeyword(t, word)) return false;
    this.requireSpaceAround(t);
    this.i++;
    return true;
  }

  private acceptPunct(p: string): boolean {
    const t = this.peek();
    if (t.kind === 'punct' && t.text === p) {
      this.i++;
      return true;
    }
    return false;
  }

  private expectPunct(p: string): void {
    const t = this.peek();
    if (!this.acceptPunct(p)) throw this.error(t, `expected "${p}"${t.kind === 'eof' ? ' before the end' : ` but found "${t.text}"`}`);
  }

  expectEnd(): void {
    const t = this.peek();
    if (t.kind !== 'eof') throw this.error(t, `unexpected "${t.text}" after a complete expression`);
  }

  /** Operators are words, so they need white space (or a parenthesis) on both sides. */
  private requireSpaceAround(t: Token): void {
    const prev = this.tokens[this.i - 1];
    const next = this.peekAt(this.i + 1);
    const leftOk = t.spaced || (prev?.kind === 'punct' && prev.text === ')');
    const rightOk = next.spaced || (next.kind === 'punct' && next.text === '(');
    if (!leftOk || !rightOk) throw this.error(t, `put spaces around the operator "${t.text}"`);
  }

  private nested<T>(fn: () => T): T {
    if (++this.depth > MAX_DEPTH) throw this.error(this.peek(), `the expression is nested more than ${MAX_DEPTH} levels deep`);
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  error(t: Token, message: string): ServiceError {
    return Errors.QuerySyntax(this.option, t.pos, message);
  }
}

function lit(type: LiteralNode['type'], value: LiteralNode['value'], pos: number): LiteralNode {
  return { kind: 'literal', type, value, pos };
}
