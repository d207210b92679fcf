/**
 * Deterministic generators for the query fuzz suite: a seeded PRNG, a grammar of OData expressions over
 * field names of every kind (filterable, not indexed, restricted, unknown, navigation), literals valid and
 * broken, option strings for $filter/$orderby/$select, and mutations (deletions, insertions, duplication,
 * unbalanced parentheses and quotes, unicode, percent signs). Values are URL-encoded with encodeQueryValue.
 */

/** mulberry32: small, fast, deterministic. */
export class Rng {
  private s: number;
  constructor(seed: number) { this.s = seed >>> 0; }
  next(): number {
    let t = (this.s += 0x6d2b79f5);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(xs: readonly T[]): T { return xs[Math.floor(this.next() * xs.length)]; }
  /** Picks from [weight, value] pairs. */
  weighted<T>(xs: readonly (readonly [number, T])[]): T {
    const total = xs.reduce((n, [w]) => n + w, 0);
    let r = this.next() * total;
    for (const [w, v] of xs) if ((r -= w) < 0) return v;
    return xs[xs.length - 1][1];
  }
}

type Kind = 'string' | 'timestamp' | 'number' | 'boolean' | 'date' | 'collection' | 'any';

const FILTERABLE: readonly (readonly [string, Kind])[] = [
  ['ListingKey', 'string'], ['MlsStatus', 'string'], ['PropertyType', 'string'],
  ['ModificationTimestamp', 'timestamp'], ['PhotosChangeTimestamp', 'timestamp'], ['DocumentsChangeTimestamp', 'timestamp'],
];
const NOT_INDEXED: readonly (readonly [string, Kind])[] = [
  ['ListPrice', 'number'], ['BedroomsTotal', 'number'], ['City', 'string'], ['StandardStatus', 'string'],
  ['InternetEntireListingDisplayYN', 'boolean'], ['ListingContractDate', 'date'], ['AccessibilityFeatures', 'collection'],
  ['PublicRemarks', 'string'], ['YearBuilt', 'number'],
];
const RESTRICTED: readonly (readonly [string, Kind])[] = [
  ['PrivateRemarks', 'string'], ['ShowingInstructions', 'string'], ['OwnerName', 'string'], ['LockBoxSerialNumber', 'string'],
];
const UNKNOWN: readonly (readonly [string, Kind])[] = [
  ['Foo', 'any'], ['listingkey', 'string'], ['MLSSTATUS', 'string'], ['Media', 'any'], ['Media/MediaKey', 'string'],
  ['ListingKey/Foo', 'any'], ['OpenHouse/ListingKey', 'string'], ['_x', 'any'], ['$it', 'any'], ['@p', 'any'], ['Ünknown', 'any'],
  ['$it/MlsStatus', 'string'], ['historyTransactional', 'any'],
];

const STRINGS = ['Active', 'Pending', 'Closed', 'Delete', 'Residential', 'L000001', 'L000012', "O''Brien-1", 'Ünïcödé-1', '', ' ', '%', '_',
  '%25', "''", "''''", 'ü', '😀', 'a b', 'NULL', 'null', 'Active ', ' Active', '\\', '\\\'\'', '"', 'x'.repeat(300), '日本語', '\u00a0', '?', '&', '#', '='];
const FUNCS_OK = ['contains', 'startswith', 'endswith', 'tolower', 'toupper', 'length', 'trim', 'year', 'month', 'day', 'hour',
  'minute', 'second', 'date', 'time', 'now'];
const FUNCS_OTHER = ['substring', 'concat', 'indexof', 'round', 'floor', 'matchesPattern', 'fractionalseconds', 'totaloffsetminutes',
  'maxdatetime', 'cast', 'isof', 'geo.distance', 'frobnicate', 'TOLOWER', 'Contains', 'hassubset', 'case', 'any', 'not', 'eq'];
const COMPARE = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'];
const ODD_OPERATORS = ['has', 'EQ', 'Ne', 'GT', '==', '!=', '<', '>=', '=', 'in', 'like', 'is', 'add', 'sub', 'mul', 'div', 'divby', 'mod'];

export class ExpressionGenerator {
  constructor(private readonly r: Rng) {}

  private field(): readonly [string, Kind] {
    return this.r.weighted<readonly [string, Kind]>([
      [70, this.r.pick(FILTERABLE)], [12, this.r.pick(NOT_INDEXED)], [8, this.r.pick(RESTRICTED)], [10, this.r.pick(UNKNOWN)],
    ]);
  }

  private casing(word: string): string {
    if (!this.r.chance(0.1)) return word;
    return this.r.pick([word.toUpperCase(), word[0].toUpperCase() + word.slice(1), word.toLowerCase()]);
  }

  timestamp(valid = this.r.chance(0.85)): string {
    const r = this.r;
    const pad = (n: number, w = 2) => String(n).padStart(w, '0');
    let y = r.int(2015, 2027);
    let mo = r.int(1, 12);
    let d = r.int(1, 28);
    let h = r.int(0, 23);
    let mi = r.int(0, 59);
    let s = r.int(0, 59);
    if (!valid) {
      switch (r.int(0, 7)) {
        case 0: mo = r.pick([0, 13, 99]); break;
        case 1: d = r.pick([0, 30, 31, 32]); mo = 2; break;
        case 2: h = r.pick([24, 25, 99]); break;
        case 3: mi = 60; break;
        case 4: s = r.pick([60, 61]); break;
        case 5: y = r.pick([0, 99999, 10000]); break;
        default: break;
      }
    }
    const frac = r.weighted<string>([[5, ''], [3, `.${pad(r.int(0, 999), 3)}`], [2, `.${String(r.int(0, 10 ** 6)).padStart(r.int(1, 12), '0')}`]]);
    const zone = r.weighted<string>([[6, 'Z'], [2, `+${pad(r.int(0, valid ? 14 : 30))}:${pad(r.pick([0, 30, 45, valid ? 0 : 75]))}`],
      [2, `-${pad(r.int(0, 12))}:00`], [valid ? 0 : 2, ''], [1, 'z']]);
    const secs = r.chance(0.1) ? '' : `:${pad(s)}${frac}`;
    const text = `${pad(y, 4)}-${pad(mo)}-${pad(d)}${r.chance(0.05) ? 't' : 'T'}${pad(h)}:${pad(mi)}${secs}${zone}`;
    return r.chance(0.3) ? `'${text}'` : text;
  }

  literal(kind: Kind = 'any'): string {
    const r = this.r;
    const typed = kind === 'any' || r.chance(0.12) ? r.pick<Kind>(['string', 'timestamp', 'number', 'boolean', 'date', 'any']) : kind;
    switch (typed) {
      case 'string': return `'${r.pick(STRINGS).replace(/'(?!')/g, r.chance(0.9) ? "''" : "'")}'`;
      case 'timestamp': return this.timestamp();
      case 'number': return r.pick(['0', '1', '-1', '3', '1.5', '-0', '1e10', '1e400', '9007199254740993', '0.0000001', 'INF', '-INF', 'NaN', '2026', '12', '1E-3']);
      case 'boolean': return r.pick(['true', 'false', 'TRUE', 'False']);
      case 'date': return r.pick(['2026-01-01', '2026-02-30', '2025-12-31', '0000-01-01', '2026-13-01', "'2026-01-01'"]);
      default:
        return r.pick(['null', 'NULL', '12:00:00', '25:61:00', '01234567-89ab-cdef-0123-456789abcdef', "duration'P1D'", "binary'AAEC'",
          "geography'SRID=4326;POINT(1 2)'", "Org.Enum'Val'", "x'00'", '[1,2]', '{"a":1}', '$root', '@alias']);
    }
  }

  /** A value-typed operand: a field, a literal, or a function call. */
  operand(depth: number): string {
    const r = this.r;
    const choice = r.weighted<string>([[55, 'field'], [25, 'literal'], [depth > 0 ? 20 : 0, 'call']]);
    if (choice === 'field') return this.field()[0];
    if (choice === 'literal') return this.literal();
    return this.call(depth - 1);
  }

  call(depth: number): string {
    const r = this.r;
    const name = this.casing(r.chance(0.8) ? r.pick(FUNCS_OK) : r.pick(FUNCS_OTHER));
    const arity = r.weighted<number>([[5, ['contains', 'startswith', 'endswith', 'concat', 'indexof'].includes(name.toLowerCase()) ? 2 : 1], [1, 0], [1, r.int(1, 3)]]);
    const args = Array.from({ length: arity }, (_, i) => (i === 0 && r.chance(0.7) ? this.field()[0] : this.operand(depth)));
    return `${name}(${args.join(r.chance(0.9) ? ',' : ', ')})`;
  }

  comparison(depth: number): string {
    const r = this.r;
    const [name, kind] = this.field();
    const shape = r.weighted<string>([[50, 'cmp'], [10, 'in'], [15, 'fn'], [5, 'lambda'], [5, 'arith'], [5, 'odd'], [5, 'null'], [5, 'swap']]);
    const op = () => this.casing(r.pick(COMPARE));
    switch (shape) {
      case 'cmp': return `${name} ${op()} ${this.literal(kind)}`;
      case 'swap': return `${this.literal(kind)} ${op()} ${name}`;
      case 'null': return `${name} ${r.pick(['eq', 'ne', 'gt'])} null`;
      case 'in': return `${name} ${this.casing('in')} (${Array.from({ length: r.int(1, 5) }, () => this.literal(kind)).join(r.chance(0.5) ? ',' : ', ')})`;
      case 'fn': {
        const c = this.call(depth);
        return r.chance(0.4) ? c : `${c} ${op()} ${this.literal(r.pick<Kind>(['string', 'number', 'timestamp', 'date']))}`;
      }
      case 'lambda': return `${name}/${r.pick(['any', 'all'])}(${r.chance(0.2) ? '' : `x: x ${op()} ${this.literal(kind)}`})`;
      case 'arith': return `${this.operand(depth)} ${r.pick(['add', 'sub', 'mul', 'div', 'mod'])} ${this.literal('number')} ${op()} ${this.literal('number')}`;
      default: return `${name} ${r.pick(ODD_OPERATORS)} ${this.literal(kind)}`;
    }
  }

  /** A boolean expression. */
  filter(depth = this.r.int(0, 4)): string {
    const r = this.r;
    if (depth <= 0) return r.chance(0.05) ? r.pick(['true', 'false', 'null', 'MlsStatus']) : this.comparison(1);
    switch (r.weighted<string>([[30, 'and'], [25, 'or'], [15, 'not'], [15, 'paren'], [15, 'leaf']])) {
      case 'and':
      case 'or': {
        const op = this.casing(r.chance(0.5) ? 'and' : 'or');
        return Array.from({ length: r.int(2, 4) }, () => this.filter(depth - 1)).join(` ${op} `);
      }
      case 'not': return `${this.casing('not')} ${r.chance(0.8) ? `(${this.filter(depth - 1)})` : this.filter(depth - 1)}`;
      case 'paren': return `(${this.filter(depth - 1)})`;
      default: return this.comparison(depth);
    }
  }

  /** A filter over filterable fields and supported functions only, well typed: for the complement check. */
  validFilter(depth = this.r.int(0, 3)): string {
    const r = this.r;
    if (depth <= 0) {
      const [name, kind] = r.pick(FILTERABLE);
      const op = r.pick(COMPARE);
      if (kind === 'timestamp') {
        return r.weighted<string>([
          [5, `${name} ${op} ${this.timestamp(true)}`],
          [2, `${name} ${r.pick(['eq', 'ne'])} null`],
          [2, `${r.pick(['year', 'month', 'day', 'hour'])}(${name}) ${op} ${r.int(1, 2026)}`],
          [1, `${name} in (${this.timestamp(true)}, ${this.timestamp(true)})`],
          [1, `${name} ${op} ${r.pick(FILTERABLE.filter(([, k]) => k === 'timestamp'))[0]}`],
        ]);
      }
      const value = () => `'${r.pick(['Active', 'Pending', 'Closed', 'Residential', 'Farm', 'L000005', 'L000020', 'Land', 'Active Under Contract', 'a', 'Z'])}'`;
      return r.weighted<string>([
        [5, `${name} ${op} ${value()}`],
        [2, `${r.pick(['contains', 'startswith', 'endswith'])}(${name},${value()})`],
        [1, `${r.pick(['tolower', 'toupper', 'trim'])}(${name}) ${op} ${value()}`],
        [1, `length(${name}) ${op} ${r.int(0, 25)}`],
        [1, `${name} in (${value()}, ${value()})`],
      ]);
    }
    switch (r.int(0, 3)) {
      case 0: return `(${this.validFilter(depth - 1)}) and (${this.validFilter(depth - 1)})`;
      case 1: return `(${this.validFilter(depth - 1)}) or (${this.validFilter(depth - 1)})`;
      case 2: return `not (${this.validFilter(depth - 1)})`;
      default: return this.validFilter(depth - 1);
    }
  }

  orderby(): string {
    const r = this.r;
    return Array.from({ length: r.int(1, 4) }, () => {
      const item = r.weighted<string>([[80, this.field()[0]], [10, this.call(1)], [5, this.literal()], [5, '']]);
      const dir = r.weighted<string>([[5, ''], [3, ' asc'], [3, ' desc'], [1, ' DESC'], [1, ' up'], [1, 'desc']]);
      return `${item}${dir}`;
    }).join(r.chance(0.85) ? ',' : r.pick([', ', ' , ', ';', ' ']));
  }

  select(): string {
    const r = this.r;
    return Array.from({ length: r.int(1, 5) }, () => r.weighted<string>([[70, this.field()[0]], [8, '*'], [5, ''], [5, 'Media'], [4, 'ListingKey/Foo'],
      [4, this.call(0)], [4, '$count']])).join(r.chance(0.9) ? ',' : ', ');
  }
}

const INSERTS = ['(', ')', "'", '"', ',', ';', ':', '/', '$', '@', '%', '+', '-', '*', '#', '&', '=', '?', '[', ']', '{', '}', '\\', ' ', '\t',
  '\n', '\r', '.', '0', '9', 'a', 'Z', 'é', 'ü', '😀', '\u0000', '\u202e', '\uffff', '\ufeff', '\ud800', '\udfff', '%00', '%2', '%ZZ', '%25',
  ' and ', ' or ', ' not ', ' eq ', ' in ', 'null', "''", '((', '))', "'''"];

/** One to three random edits of `s`. */
export function mutate(r: Rng, s: string): string {
  let out = s;
  for (let k = r.int(1, 3); k > 0; k--) {
    const at = r.int(0, out.length);
    switch (r.int(0, 9)) {
      case 0: out = out.slice(0, at) + out.slice(at + r.int(1, 4)); break; // delete
      case 1: out = out.slice(0, at) + r.pick(INSERTS) + out.slice(at); break; // insert
      case 2: { const len = r.int(1, 12); out = out.slice(0, at + len) + out.slice(at, at + len) + out.slice(at + len); break; } // duplicate
      case 3: out = out.slice(0, at); break; // truncate
      case 4: out = '('.repeat(r.int(1, 5)) + out; break; // unbalanced open
      case 5: out += ')'.repeat(r.int(1, 5)); break; // unbalanced close
      case 6: { const q = out.indexOf("'", at); if (q >= 0) out = out.slice(0, q) + out.slice(q + 1); else out += "'"; break; } // unbalanced quote
      case 7: out = out.replace(r.pick([/ eq /, / and /, / or /, /\(/, /'/, /,/]), r.pick([' ', ' ne ', ' or ', ' and ', '', "''", ',,'])); break;
      case 8: out = out.slice(0, at) + String.fromCodePoint(r.pick([r.int(0x20, 0x7e), r.int(0xa0, 0x2fff), r.int(0x1f300, 0x1f6ff), r.int(0, 0x1f)])) + out.slice(at); break;
      default: { const a = r.int(0, out.length - 1); const b = r.int(0, out.length - 1); const c = [...out]; [c[a], c[b]] = [c[b], c[a]]; out = c.join(''); break; }
    }
  }
  return out;
}

/**
 * encodeURIComponent that does not throw on lone surrogates: they are sent as the (invalid) UTF-8 bytes
 * of their code unit, which is exactly what a sloppy client would put on the wire.
 */
export function encodeQueryValue(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < v.length && v.charCodeAt(i + 1) >= 0xdc00 && v.charCodeAt(i + 1) <= 0xdfff) {
      out += encodeURIComponent(v.slice(i, i + 2));
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out += `%${(0xe0 | (c >> 12)).toString(16).toUpperCase()}%${(0x80 | ((c >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (c & 0x3f)).toString(16).toUpperCase()}`;
    } else {
      out += encodeURIComponent(v[i]);
    }
  }
  return out;
}


const NAVIGATIONS = ['Media', 'OpenHouse', 'historyTransactional', 'PropertyRooms', 'PropertyUnits'];

/**
 * Option values at the edges of the configuration (FILTER_MAX_LENGTH, MAX_PAGE_SIZE): in (…) lists up to the
 * length limit, expressions nested to the parser's depth, long literals, every comparison joined into long
 * chains, and expansions with nested options.
 */
export class EdgeGenerator {
  constructor(private readonly r: Rng, private readonly gen: ExpressionGenerator, private readonly maxFilter: number) {}

  /** A $filter of up to `maxFilter` characters (sometimes a little over), of one of several large shapes. */
  largeFilter(): string {
    const r = this.r;
    const budget = Math.floor(this.maxFilter * r.pick([0.01, 0.1, 0.5, 0.9, 1, 1.001]));
    switch (r.int(0, 5)) {
      case 0: return this.inList(budget, () => `'${r.chance(0.5) ? `L${String(r.int(0, 999_999)).padStart(6, '0')}` : r.pick(STRINGS).replace(/'/g, "''")}'`, 'ListingKey');
      case 1: return this.inList(budget, () => this.gen.timestamp(true), r.pick(['ModificationTimestamp', 'PhotosChangeTimestamp']));
      case 2: return this.inList(budget, () => `'${r.pick(['Active', 'Pending', 'Closed', 'x'.repeat(r.int(1, 400))])}'`, r.pick(['MlsStatus', 'PropertyType', 'tolower(MlsStatus)']));
      case 3: return this.chain(budget, () => this.gen.validFilter(1), r.pick([' or ', ' and ']));
      case 4: return this.chain(budget, () => `${r.pick(['endswith', 'startswith', 'contains'])}(${r.pick(['MlsStatus', 'ListingKey'])},'${r.pick(['a', 've', ''])}')`, ' or ');
      default: return `ListingKey eq '${'x'.repeat(Math.max(0, budget - 16))}'`;
    }
  }

  /** An expression nested up to (and a little past) the parser's depth limit. */
  deep(): string {
    const r = this.r;
    const depth = r.int(20, 66);
    let e = this.gen.validFilter(0);
    for (let i = 0; i < depth; i++) e = r.pick([`(${e})`, `not (${e})`, `(${e}) and ${this.gen.validFilter(0)}`, `${this.gen.validFilter(0)} or (${e})`]);
    return e;
  }

  /** A $expand of one to five navigations, some with nested options. */
  expand(): string {
    const r = this.r;
    const navs = Array.from({ length: r.int(1, 5) }, () => r.pick(NAVIGATIONS));
    return [...new Set(navs)].map((n) => {
      if (!r.chance(0.5)) return n;
      const opts = [['$top', String(r.pick([0, 1, 3, 10_000, 99_999]))], ['$select', r.pick(['MediaKey', 'ListingKey', 'ModificationTimestamp', 'Foo'])],
        ['$orderby', r.pick(['ModificationTimestamp desc', 'Order', 'Foo'])], ['$filter', this.gen.filter(2)]].filter(() => r.chance(0.4));
      return `${n}(${opts.map(([k, v]) => `${k}=${v}`).join(';')})`;
    }).join(',');
  }

  /** A Prefer header asking for a page size from 1 to past MAX_PAGE_SIZE, sometimes malformed. */
  prefer(): string {
    return this.r.pick(['odata.maxpagesize=1', 'odata.maxpagesize=7', 'odata.maxpagesize=10000', 'odata.maxpagesize=10001', 'odata.maxpagesize=999999999',
      'maxpagesize="3"', 'odata.maxpagesize=0', 'odata.maxpagesize=-5', 'odata.maxpagesize=1e3', 'return=minimal']);
  }

  private inList(budget: number, value: () => string, left: string): string {
    const parts: string[] = [];
    let length = left.length + 6;
    while (length < budget) {
      const v = value();
      parts.push(v);
      length += v.length + 1;
    }
    return `${this.r.chance(0.2) ? 'not ' : ''}${left} in (${parts.join(',') || "'x'"})`;
  }

  private chain(budget: number, term: () => string, sep: string): string {
    const parts: string[] = [];
    let length = 0;
    while (length < budget) {
      const t = term();
      parts.push(t);
      length += t.length + sep.length;
    }
    return parts.join(sep);
  }
}
