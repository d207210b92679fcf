/**
 * Tokens of OData 4.01 expressions ($filter, $orderby, $select, $expand). Keywords are plain identifiers
 * here; the parser decides, case-insensitively, what they mean where they stand.
 */
import { Errors } from '../errors/catalogue';

export type TokenKind =
  | 'ident' | 'string' | 'integer' | 'decimal' | 'double' | 'date' | 'dateTimeOffset' | 'timeOfDay' | 'guid'
  | 'typed' | 'punct' | 'eof';

export interface Token {
  readonly kind: TokenKind;
  /** Text as written (for strings: the value with '' undone; for typed literals: the quoted part's value). */
  readonly text: string;
  /** For `typed` literals (duration'P1D', Namespace.Type'Value'): the prefix. */
  readonly prefix?: string;
  readonly pos: number;
  /** Whether white space stood right before this token (OData requires it around operators). */
  readonly spaced: boolean;
}

const WS = /[ \t]/;
const IDENT_START = /[A-Za-z_$@]/;
const IDENT_PART = /[A-Za-z0-9_.$@]/;

const GUID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/;
// A '+' offset that arrived form-decoded as a space is read back as '+' (HTTP clients send '+' for spaces).
const DATE_TIME_OFFSET = /^-?\d{4,}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2}| \d{2}:\d{2}(?![\d:]))/;
const DATE = /^-?\d{4,}-\d{2}-\d{2}(?![\dTt:])/;
const TIME_OF_DAY = /^\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?![\d:])/;
const NUMBER = /^[-+]?\d+(\.\d+)?([eE][+-]?\d+)?/;

/**
 * Type suffixes of OData 2.0 and 3.0 numeric literals (`3L` Int64, `1.5M` Decimal, `2.5d` Double, `2.5f` Single),
 * which 4.01 dropped but generated clients still send (SAP Cloud SDK writes Int64 values as `3L`). They are read
 * leniently, as common servers do: the number as if unsuffixed, of the suffix's kind, so a suffixed literal meets
 * a field exactly as the plain one would. The forms follow 3.0's ABNF: `L` after an integer, `M` after digits
 * with an optional fraction, `d` and `f` after any number.
 */
function suffixed(number: RegExpExecArray, next: string | undefined): TokenKind | undefined {
  const [, fraction, exponent] = number;
  if (next === 'L') return fraction || exponent ? undefined : 'integer';
  if (next === 'M' || next === 'm') return exponent ? undefined : 'decimal';
  if (next === 'd' || next === 'D' || next === 'f' || next === 'F') return 'double';
  return undefined;
}

export function tokenize(input: string, option: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let spaced = false;
  while (i < input.length) {
    const c = input[i];
    if (WS.test(c)) {
      i++;
      spaced = true;
      continue;
    }
    const start = i;
    const push = (kind: TokenKind, text: string, end: number, prefix?: string) => {
      tokens.push({ kind, text, pos: start, spaced, ...(prefix !== undefined ? { prefix } : {}) });
      i = end;
      spaced = false;
    };
    if ('(),:/;=*'.includes(c)) {
      push('punct', c, i + 1);
      continue;
    }
    if (c === "'") {
      const [value, end] = readQuoted(input, i, option);
      push('string', value, end);
      continue;
    }
    const rest = input.slice(i);
    if (/^[0-9]/.test(c) || ((c === '-' || c === '+') && /^[-+][0-9]/.test(rest))) {
      let m: RegExpExecArray | null;
      if ((m = GUID.exec(rest)) && !/[0-9A-Za-z]/.test(rest[m[0].length] ?? '')) push('guid', m[0], i + m[0].length);
      else if ((m = DATE_TIME_OFFSET.exec(rest))) push('dateTimeOffset', m[0].replace(/ (\d{2}:\d{2})$/, '+$1'), i + m[0].length);
      else if ((m = DATE.exec(rest))) push('date', m[0], i + m[0].length);
      else if ((m = TIME_OF_DAY.exec(rest))) push('timeOfDay', m[0], i + m[0].length);
      else if ((m = NUMBER.exec(rest))) {
        const suffix = suffixed(m, rest[m[0].length]);
        const kind = suffix ?? (m[2] ? 'double' : m[1] ? 'decimal' : 'integer');
        const end = i + m[0].length + (suffix ? 1 : 0);
        if (IDENT_START.test(input[end] ?? '')) throw Errors.QuerySyntax(option, end, 'a number must be followed by a space or an operator');
        push(kind, m[0], end);
      } else throw Errors.QuerySyntax(option, i, `unexpected "${c}"`);
      continue;
    }
    if (c === '-' && /^-INF\b/.test(rest)) {
      push('double', '-INF', i + 4);
      continue;
    }
    if (c === '-') {
      push('punct', '-', i + 1);
      continue;
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < input.length && IDENT_PART.test(input[j])) j++;
      const word = input.slice(i, j);
      if (input[j] === "'") {
        // typed literal: duration'P1D', binary'..', geography'..', Namespace.EnumType'Value'
        const [value, end] = readQuoted(input, j, option);
        push('typed', value, end, word);
        continue;
      }
      if (word.endsWith('.')) throw Errors.QuerySyntax(option, j - 1, 'a name cannot end with "."');
      push('ident', word, j);
      continue;
    }
    throw Errors.QuerySyntax(option, i, `unexpected "${c}"`);
  }
  tokens.push({ kind: 'eof', text: '', pos: input.length, spaced });
  return tokens;
}

/** Reads '…' from `start` (a quote), undoing doubled quotes; returns the value and the offset after it. */
function readQuoted(input: string, start: number, option: string): [string, number] {
  let out = '';
  let i = start + 1;
  for (;;) {
    const q = input.indexOf("'", i);
    if (q < 0) throw Errors.QuerySyntax(option, start, 'a quoted string is not closed (double any quote inside it)');
    out += input.slice(i, q);
    if (input[q + 1] === "'") {
      out += "'";
      i = q + 2;
      continue;
    }
    return [out, q + 1];
  }
}
