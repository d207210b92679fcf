/**
 * Grammar conformance of the parse stage (model-free) against the OASIS OData ABNF test cases
 * (../shared/odata/abnf/odata-abnf-testcases.yaml, with our derived read-only classification beside it).
 *
 * Of the read-only core cases, those whose grammar is ours to parse are run through the functions the
 * server uses: query strings through `parseQueryString` (form decoding: '+' is a space) and
 * `parseQueryOptions`; bare expressions through `ExpressionParser.expression` after the same decoding;
 * URL forms of primitive literals as a whole $filter expression that must come out as a literal of that
 * kind; full URLs by their query part only. Resource paths, key predicates, context URLs, headers and
 * payload (body/CSDL) value forms are not the query parser's job: they are listed as not applicable,
 * with the reason, by rule.
 *
 * A positive case passes when parsing succeeds. A negative one (FailAt) passes when parsing fails, or,
 * for a literal rule, when the input comes out as something else ("INF" is a valid double, not a date).
 * Whether the error points at FailAt is counted, not required. The suite holds a floor (the counts
 * measured when it was written) and requires every failing applicable case to be in EXCLUSIONS, which is
 * therefore the documented list of what we do not support, and why; an entry that starts passing must
 * be removed (and the floor raised).
 *
 * Alone: `npx mocha --no-config dist/test/abnf-conformance.test.js` (without --no-config, .mocharc.json
 * adds the whole suite). ABNF_VERBOSE=1 lists every case. Numbers and tables: docs/abnf-conformance.md.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { ServiceError } from '../src/errors/catalogue';
import { httpAnswer } from '../src/http/error-status';
import { parseQueryString } from '../src/http/query-string';
import type { ExprNode, LiteralType } from '../src/query/ast';
import { ExpressionParser } from '../src/query/parse-expression';
import { parseQueryOptions, systemOptionName } from '../src/query/parse-options';
import { requireShared, sharedPath } from './support/shared';

// js-yaml is in node_modules (through mocha) but not one of our own dependencies, and has no types here.
// The failsafe schema keeps every scalar a string: the default schema turns `Input: 2012-09-03` into a Date.
const yaml = require('js-yaml') as { load(text: string, options: { schema: unknown }): unknown; FAILSAFE_SCHEMA: unknown };

// ---------------------------------------------------------------------------------------------------------
// Measured floor (raise it when the parser gets better; a drop is a regression)

const FLOOR = { applicable: 223, passing: 215, positivePassing: 201, negativePassing: 14 };

// ---------------------------------------------------------------------------------------------------------
// Applicable cases our parser fails, on purpose. `index` is the case's position in TestCases (names repeat).

interface Exclusion { index: number; name: string; reason: string }

const BINDER_REJECTS = 'model-free parse stage accepts it; the binder then answers 400';
const REPEATED = 'a repeated query option is answered with 400 by design (src/http/query-string.ts); the grammar alone allows repeats';

const EXCLUSIONS: readonly Exclusion[] = [
  // Numbers with an explicit plus sign
  // 4.01 features beyond what the service supports
  { index: 252, name: '4.8 Addressing the Count - in $filter with filtered collection',
    reason: '$count with its own options inside an expression (Products/$count($filter=…), 4.01) is not supported' },
  // Invalid input the parse stage lets through, on purpose or because a later stage rejects it
  { index: 310, name: '5.1.1 Filter: no spaces', reason: 'lenient: white space at the start of an option value is skipped ("$filter= true")' },
  { index: 442, name: '5.1.1.13.1 any() - requires a path prefix', reason: `${BINDER_REJECTS} ("any() is not an OData function")` },
  { index: 725, name: 'lists can only contain primitive literals', reason: `${BINDER_REJECTS} ("the list after in must hold literal values")` },
  { index: 510, name: '5.1.2 Expand - no $count after $count',
    reason: 'options after an /$count expand segment are not checked; the binder answers 501 to any $expand' },
  // Query-string rules of the server, stricter than the grammar or outside it
  { index: 615, name: '5.1.8 Format', reason: REPEATED },
  { index: 617, name: '5.1.8 Format - value is case-insensitive', reason: REPEATED },
  { index: 629, name: 'Next Link: no Ampersand',
    reason: 'in a query string "&" ends the option, so "this" is a valid custom option; the case is negative only for the lone skiptoken rule' },
];

// ---------------------------------------------------------------------------------------------------------
// Which rules the parse stage answers for, and how each is run

/** Complete $filter/$orderby-style expressions. */
const EXPRESSION_RULES: ReadonlySet<string> = new Set(['commonExpr', 'boolCommonExpr', 'boolcommonExpr', 'notExpr', 'firstMemberExpr']);

/** Fragments run after a prefix that makes them a complete expression. */
const FRAGMENT_RULES: Readonly<Record<string, string>> = {
  anyExpr: 'Products/', // the lambda after a collection path
};

const NUMERIC: readonly LiteralType[] = ['integer', 'decimal', 'double'];

/** URL forms of primitive literals: run as a whole $filter expression that must come out as one of these literal types. */
const LITERAL_RULES: Readonly<Record<string, readonly LiteralType[]>> = {
  null: ['null'],
  boolean: ['boolean'],
  guid: ['guid'],
  date: ['date'],
  dateTimeOffsetLiteral: ['dateTimeOffset'],
  dateTimeOffsetValueInUrl: ['dateTimeOffset'],
  timeOfDayLiteral: ['timeOfDay'],
  decimalLiteral: NUMERIC,
  doubleLiteral: NUMERIC,
  singleLiteral: NUMERIC,
  sbyteLiteral: NUMERIC,
  int16Literal: NUMERIC,
  int32Literal: NUMERIC,
  int64Literal: NUMERIC, // beyond 2^53 the parser makes it a decimal
  stringLiteral: ['string'],
  // Without the prefix these are plain strings to a model-free parser; the binder coerces them by field type.
  durationLiteral: ['duration', 'string'],
  enumLiteral: ['enum', 'string'],
  binaryLiteral: ['binary'],
  primitiveLiteral: ['null', 'boolean', 'guid', 'date', 'dateTimeOffset', 'timeOfDay', ...NUMERIC, 'string', 'duration', 'enum', 'binary', 'geo'],
};

/** Query strings (one option or several): parseQueryString then parseQueryOptions, as the server does. */
const QUERY_RULES: ReadonlySet<string> = new Set(['filter', 'orderby', 'select', 'expand', 'queryOptions', 'skiptoken', 'customQueryOption']);

/** Whole URLs: only the query part (after '?') is ours; a URL without one is routing only. */
const URI_RULES: ReadonlySet<string> = new Set(['odataUri', 'odataRelativeUri']);

const PAYLOAD = 'payload form (request body, header value or CSDL DefaultValue): the server reads no request bodies and writes, never parses, CSDL; URL forms are covered by the *Literal rules';

const NOT_APPLICABLE: Readonly<Record<string, string>> = {
  resourcePath: 'resource path and key predicate: Express routing and the key-predicate parser, not the query parser',
  entitySetName: 'entity set name in a resource path: Express routing',
  functionParameter: 'function parameter in a resource path: routing (functions are not served)',
  odataIdentifier: 'lexical rule for one name; names are exercised through the $filter/$select/$expand cases',
  context: 'context URL fragment: written by the server in responses, never parsed',
  header: 'HTTP header, not a query option',
  prefer: 'HTTP Prefer header, not a query option',
  preference: 'HTTP Prefer header, not a query option',
  maxpagesizePreference: 'HTTP Prefer header, not a query option',
  stringInUrl: 'a JSON string inside a JSON array/object literal, not a complete option value',
  booleanValue: PAYLOAD, dateValue: PAYLOAD, dateTimeOffsetValue: PAYLOAD, decimalValue: PAYLOAD, doubleValue: PAYLOAD,
  singleValue: PAYLOAD, byteValue: PAYLOAD, sbyteValue: PAYLOAD, int16Value: PAYLOAD, int32Value: PAYLOAD, int64Value: PAYLOAD,
  durationValue: PAYLOAD, timeOfDayValue: PAYLOAD, enumValue: PAYLOAD, primitiveValue: PAYLOAD,
};

/**
 * OData 2.0 and 3.0 wrote numeric literals with a type suffix (`3L` Int64, `1.5M` Decimal, `2.5d` Double, `2.5f`
 * Single); 4.01's grammar has none, but generated clients still send them (SAP Cloud SDK: `Order lt 3L`). The
 * parser reads them leniently, as common servers do: the number, of the suffix's kind (src/query/lexer.ts). A case
 * expecting such a form to fail would be listed in EXCLUSIONS with this reason; none does (checked below).
 */
const LEGACY_SUFFIX = 'lenient reading of the OData 2.0/3.0 numeric suffixes L, M/m, d/D, f/F that generated clients still send';
/** A number with a legacy suffix, outside quotes (strings are blanked first). */
const SUFFIXED_NUMBER = /(^|[^A-Za-z0-9_.'])[-+]?\d+(\.\d+)?([eE][+-]?\d+)?[LMmdDfF](?![A-Za-z0-9_])/;

const URI_WITHOUT_QUERY = 'URL without a query part: resource path only (Express routing)';
const URI_CONTEXT = 'context URL ($metadata#…): written by the server in responses, never parsed';
const URI_PATH_FAILURE = 'the failure lies in the resource path (Express routing), not in the query part';

// ---------------------------------------------------------------------------------------------------------
// Data

interface TestCase { Name: string; Rule: string; Input: string; FailAt?: string }
interface Classification {
  index: number; name: string; rule: string; category: string; negative: boolean; readOnlyCore: boolean;
  excludedBecause: string[]; odata401Only: string[];
}

interface Outcome {
  index: number;
  name: string;
  rule: string;
  input: string;
  negative: boolean;
  failAt?: number;
  /** Whether the case came out as the grammar says. */
  passed: boolean;
  /** For a negative case our parser rejected with an error: whether the error pointed at FailAt. */
  positionMatches?: boolean;
  /** What happened, for messages. */
  detail: string;
}

interface NotApplicable { index: number; name: string; rule: string; reason: string }

/** Form-decodes one option value as URLSearchParams does ('+' is a space), keeping a map back to raw offsets. */
function formDecode(raw: string): { text: string; rawIndex: (i: number) => number } {
  // '&' stays: the case is one value (a literal, an expression), as a client would send it percent-encoded.
  const text = new URLSearchParams(`v=${raw.replace(/&/g, '%26')}`).get('v') ?? '';
  let mine = '';
  const map: number[] = [];
  let i = 0;
  const hexAt = (k: number) => raw[k] === '%' && /^[0-9A-Fa-f]{2}$/.test(raw.slice(k + 1, k + 3));
  while (i < raw.length) {
    if (hexAt(i)) {
      const start = i;
      const bytes: number[] = [];
      const starts: number[] = [];
      while (hexAt(i)) { bytes.push(parseInt(raw.slice(i + 1, i + 3), 16)); starts.push(i); i += 3; }
      const s = Buffer.from(bytes).toString('utf8');
      for (let k = 0; k < s.length; k++) map.push(s.length === bytes.length ? starts[k] : start);
      mine += s;
    } else {
      mine += raw[i] === '+' ? ' ' : raw[i];
      map.push(i);
      i++;
    }
  }
  map.push(raw.length);
  const exact = mine === text;
  return { text, rawIndex: (p) => (exact ? map[Math.min(p, map.length - 1)] : p) };
}

class Crash extends Error {}

/** Where a QuerySyntax error stopped reading: the option it names (its target) and the offset in that option's text. */
interface SyntaxErrorAt {
  readonly option: string;
  readonly position: number;
}

/**
 * Runs fn; returns undefined on success, else the error's offset in the raw input (null if it has none) and
 * its message. Only a ServiceError answered with a 4xx is a rejection; anything else is a crash, which fails the case.
 */
function attempt(fn: () => void, rawPosition: (e: SyntaxErrorAt) => number | null): { position: number | null; message: string } | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    const status = e instanceof ServiceError ? httpAnswer(e).status : 0;
    if (!(e instanceof ServiceError) || status < 400 || status >= 500) throw new Crash(`crashed instead of answering 4xx: ${e instanceof Error ? e.stack : String(e)}`);
    return { position: e.code === 'QuerySyntax' ? rawPosition({ option: e.target!, position: e.facts.position! }) : null, message: e.message };
  }
}

/** Offset, in a raw query string, of the error's position inside the value of the option it names (top level only). */
function queryErrorPosition(rawQuery: string, e: SyntaxErrorAt): number | null {
  let offset = 0;
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const name = new URLSearchParams(`${eq < 0 ? pair : pair.slice(0, eq)}=`).keys().next().value ?? '';
    let option: string | undefined;
    try { option = systemOptionName(name); } catch { option = undefined; }
    if (option !== undefined && `$${option}` === e.option && eq >= 0) {
      return offset + eq + 1 + formDecode(pair.slice(eq + 1)).rawIndex(e.position);
    }
    offset += pair.length + 1;
  }
  return null;
}

function literalOf(node: ExprNode): LiteralType | undefined {
  return node.kind === 'literal' ? node.type : undefined;
}

type Plan =
  | { applicable: false; reason: string }
  | { applicable: true; run: () => { ok: true; detail: string } | { ok: false; thrown: boolean; position: number | null; detail: string } };

function plan(tc: TestCase): Plan {
  const { Rule: rule, Input: input } = tc;
  const failAt = tc.FailAt === undefined ? undefined : Number(tc.FailAt);

  const expressionRun = (prefix: string, wanted?: readonly LiteralType[]) => () => {
    const { text, rawIndex } = formDecode(input);
    let node: ExprNode | undefined;
    const err = attempt(() => { node = ExpressionParser.expression(prefix + text, '$filter'); },
      (e) => (e.position < prefix.length ? 0 : rawIndex(e.position - prefix.length)));
    if (err) return { ok: false as const, thrown: true, position: err.position, detail: err.message };
    if (wanted) {
      const type = literalOf(node!);
      if (!type || !wanted.includes(type)) {
        return { ok: false as const, thrown: false, position: null, detail: `parsed as ${type ? `a ${type} literal` : `a ${node!.kind} expression`}, not ${wanted.join('/')}` };
      }
      return { ok: true as const, detail: `a ${type} literal` };
    }
    return { ok: true as const, detail: `a ${node!.kind} expression` };
  };

  const queryRun = (rawQuery: string, offset: number) => () => {
    const err = attempt(() => { parseQueryOptions(parseQueryString(rawQuery)); }, (e) => {
      const p = queryErrorPosition(rawQuery, e);
      return p === null ? null : offset + p;
    });
    return err ? { ok: false as const, thrown: true, position: err.position, detail: err.message } : { ok: true as const, detail: 'parsed' };
  };

  if (Object.hasOwn(NOT_APPLICABLE, rule)) return { applicable: false, reason: NOT_APPLICABLE[rule] };
  if (EXPRESSION_RULES.has(rule)) return { applicable: true, run: expressionRun('') };
  if (Object.hasOwn(FRAGMENT_RULES, rule)) return { applicable: true, run: expressionRun(FRAGMENT_RULES[rule]) };
  if (Object.hasOwn(LITERAL_RULES, rule)) return { applicable: true, run: expressionRun('', LITERAL_RULES[rule]) };
  if (QUERY_RULES.has(rule)) return { applicable: true, run: queryRun(input, 0) };
  if (URI_RULES.has(rule)) {
    const hash = input.indexOf('#');
    if (hash >= 0) return { applicable: false, reason: URI_CONTEXT };
    const q = input.indexOf('?');
    if (q < 0) return { applicable: false, reason: URI_WITHOUT_QUERY };
    if (failAt !== undefined && failAt <= q) return { applicable: false, reason: URI_PATH_FAILURE };
    return { applicable: true, run: queryRun(input.slice(q + 1), q + 1) };
  }
  return { applicable: false, reason: `UNMAPPED rule ${rule}` };
}

// ---------------------------------------------------------------------------------------------------------

describe('OASIS OData ABNF test cases: the query parser (parse stage)', function () {
  let cases: TestCase[] = [];
  let classification: Classification[] = [];
  const outcomes: Outcome[] = [];
  const notApplicable: NotApplicable[] = [];

  before(function () {
    requireShared(this);
    const doc = yaml.load(readFileSync(sharedPath('odata/abnf/odata-abnf-testcases.yaml'), 'utf8'), { schema: yaml.FAILSAFE_SCHEMA }) as { TestCases: TestCase[] };
    cases = doc.TestCases;
    classification = JSON.parse(readFileSync(sharedPath('odata/abnf/odata-abnf-testcases.readonly-classification.json'), 'utf8')) as Classification[];
    for (const c of classification) {
      if (!c.readOnlyCore) continue;
      const tc = cases[c.index];
      const p = plan(tc);
      if (!p.applicable) { notApplicable.push({ index: c.index, name: tc.Name, rule: tc.Rule, reason: p.reason }); continue; }
      const negative = tc.FailAt !== undefined;
      const failAt = negative ? Number(tc.FailAt) : undefined;
      let r: ReturnType<typeof p.run>;
      try {
        r = p.run();
      } catch (e) {
        if (!(e instanceof Crash)) throw e;
        outcomes.push({ index: c.index, name: tc.Name, rule: tc.Rule, input: tc.Input, negative, passed: false, detail: e.message });
        continue;
      }
      outcomes.push({
        index: c.index, name: tc.Name, rule: tc.Rule, input: tc.Input, negative, ...(negative ? { failAt } : {}),
        passed: negative ? !r.ok : r.ok,
        ...(negative && !r.ok && r.thrown ? { positionMatches: r.position === failAt } : {}),
        detail: r.detail,
      });
    }
    const passing = outcomes.filter((o) => o.passed);
    const negatives = outcomes.filter((o) => o.negative);
    const excluded = outcomes.filter((o) => !o.passed);
    console.log(`      ABNF conformance: ${classification.filter((c) => c.readOnlyCore).length} read-only cases, `
      + `${outcomes.length} applicable to the parser (${outcomes.length - negatives.length} positive, ${negatives.length} negative), `
      + `${passing.length} pass (${passing.filter((o) => !o.negative).length} positive, ${passing.filter((o) => o.negative).length} negative; `
      + `${outcomes.filter((o) => o.positionMatches).length} of ${outcomes.filter((o) => o.positionMatches !== undefined).length} rejections at FailAt exactly), `
      + `${excluded.length} fail (excluded), `
      + `${notApplicable.length} not applicable`);
    if (process.env.ABNF_VERBOSE) {
      for (const o of outcomes) {
        console.log(`      ${o.passed ? 'pass' : 'FAIL'} #${o.index} ${o.rule}${o.negative ? ` (FailAt ${o.failAt}${o.positionMatches === undefined ? '' : o.positionMatches ? ', matched' : ', elsewhere'})` : ''} ${JSON.stringify(o.input)}: ${o.detail}`);
      }
      for (const n of notApplicable) console.log(`      n/a  #${n.index} ${n.rule} ${JSON.stringify(cases[n.index].Input)}: ${n.reason}`);
    }
  });

  it('the case file and the derived classification describe the same 840 cases in the same order', () => {
    expect(cases).to.have.length(840);
    expect(classification).to.have.length(cases.length);
    const mismatched = classification.filter((c, i) => c.index !== i || cases[i].Name !== c.name || cases[i].Rule !== c.rule
      || (cases[i].FailAt !== undefined) !== c.negative);
    expect(mismatched.map((c) => c.index)).to.deep.equal([]);
  });

  it('every read-only rule is either run through the parser or listed as not applicable', () => {
    expect(notApplicable.filter((n) => n.reason.startsWith('UNMAPPED')).map((n) => `${n.index} ${n.rule}`)).to.deep.equal([]);
  });

  it('at least as many applicable cases pass as when this suite was written', () => {
    const passing = outcomes.filter((o) => o.passed);
    expect(outcomes.length, 'applicable cases').to.be.at.least(FLOOR.applicable);
    expect(passing.length, 'passing cases').to.be.at.least(FLOOR.passing);
    expect(passing.filter((o) => !o.negative).length, 'passing positive cases').to.be.at.least(FLOOR.positivePassing);
    expect(passing.filter((o) => o.negative).length, 'passing negative cases').to.be.at.least(FLOOR.negativePassing);
  });

  it('every applicable case that fails is a documented exclusion', () => {
    const excluded = new Set(EXCLUSIONS.map((e) => e.index));
    const surprises = outcomes.filter((o) => !o.passed && !excluded.has(o.index))
      .map((o) => `#${o.index} ${o.rule} ${o.negative ? `(negative, FailAt ${o.failAt})` : '(positive)'} "${o.name}": ${JSON.stringify(o.input)} → ${o.negative ? 'accepted' : 'rejected'}: ${o.detail}`);
    expect(surprises, `failing cases that are not in EXCLUSIONS:\n${surprises.join('\n')}\n`).to.deep.equal([]);
  });

  it(`no case expects a legacy numeric suffix to fail (else an exclusion: "${LEGACY_SUFFIX}"); the parser reads each as its kind`, () => {
    const suffixed = cases.map((tc, index) => ({ tc, index })).filter(({ tc }) => {
      let text = tc.Input;
      try { text = decodeURIComponent(text); } catch { /* a case with a bare % stays as written */ }
      return SUFFIXED_NUMBER.test(text.replace(/'(?:[^']|'')*'/g, "''"));
    });
    const rejecting = suffixed.filter(({ tc }) => tc.FailAt !== undefined).map(({ tc, index }) => `#${index} ${tc.Name}`);
    const excused = new Set(EXCLUSIONS.filter((e) => e.reason === LEGACY_SUFFIX).map((e) => `#${e.index} ${e.name}`));
    expect(rejecting.filter((c) => !excused.has(c)), 'negative cases with a legacy suffix, not excused').to.deep.equal([]);
    const kinds: [string, LiteralType][] = [['3L', 'integer'], ['-3L', 'integer'], ['1.5M', 'decimal'], ['100000m', 'decimal'],
      ['2.5d', 'double'], ['1e3D', 'double'], ['2f', 'double'], ['-0.5F', 'double']];
    for (const [text, kind] of kinds) expect(literalOf(ExpressionParser.expression(text, '$filter')), text).to.equal(kind);
    // The forms 3.0's grammar does not have stay errors: L after a fraction, M after an exponent, a letter after the suffix.
    for (const text of ['1.5L', '1e3M', '3Lx', '2dd']) expect(() => ExpressionParser.expression(text, '$filter'), text).to.throw(ServiceError);
  });

  it('every exclusion names an applicable case that still fails (remove entries the parser now passes)', () => {
    const byIndex = new Map(outcomes.map((o) => [o.index, o]));
    const problems = EXCLUSIONS.flatMap((e) => {
      const o = byIndex.get(e.index);
      if (!o) return [`#${e.index} "${e.name}" is not an applicable case`];
      if (o.name !== e.name) return [`#${e.index} is "${o.name}", not "${e.name}"`];
      if (o.passed) return [`#${e.index} "${e.name}" passes now: remove it from EXCLUSIONS and raise FLOOR`];
      return [];
    });
    expect(problems).to.deep.equal([]);
    expect(new Set(EXCLUSIONS.map((e) => e.index)).size, 'duplicate entries').to.equal(EXCLUSIONS.length);
  });
});
