/**
 * The error catalogue (src/errors) and the edge that gives its codes HTTP statuses (src/http/error-status.ts):
 * every code has a status, codes are unique and stable-looking, each template words a real message, the
 * manual (docs/api.md) documents every code with its status, and no lower layer reaches up into http/.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { CATALOGUE_SECTIONS, ERROR_CODES, ErrorCode, Errors, ServiceError } from '../src/errors/catalogue';
import { ERROR_STATUS, errorBody, httpAnswer } from '../src/http/error-status';
import { REPO_ROOT } from './support/shared';

/** Arguments for one error of every code; the compiler insists on a row per code. */
const SAMPLES: { readonly [C in ErrorCode]: Parameters<(typeof Errors)[C]> } = {
  ResourceNotFound: ['/odata/Nothing', '/odata'],
  RecordNotFound: ['Property', 'ListingKey', 'A1'],
  PropertyNotFound: ['Property', 'Nope'],
  NavigationNotFollowable: ['Property', 'Agent'],
  MethodNotAllowed: ['POST'],
  KeyInvalid: ['Property', 'ListingKey', { expected: 'string' }],
  QueryStringInvalid: [],
  OptionUnknown: ['$frobnicate'],
  OptionRepeated: ['filter', '$filter'],
  OptionValueInvalid: ['$top', 'a non-negative integer', '-1'],
  ParameterInvalid: ['Digest', 'Parts', 'an integer from 1 to 64', '65'],
  OptionNotApplicable: ['$top', 'a single record'],
  OptionNotSupported: [['$search', '$apply']],
  FormatNotSupported: ['atom', 'data'],
  MediaTypeNotAcceptable: ['text/html'],
  ProtocolVersionNotSupported: ['3.0'],
  QuerySyntax: ['$filter', 7, 'unexpected ")"'],
  FilterTooLong: [40000, 32768],
  SkipNotSupported: [],
  SkipTokenInvalid: ['is not one this service issued'],
  ScopeChanged: ['$filter', '2026-11-23T10:00:00.000Z', 'ModificationTimestamp', false],
  EventSequenceExpired: ['EntityEventSequence', 10, 25],
  FieldNotFound: ['Property', 'Nope'],
  FieldHasNoMembers: ['MlsStatus', 'MlsStatus/Code', 'select'],
  FieldRestricted: ['OwnerName', '$orderby', 'Property', 'ListingKey, ModificationTimestamp'],
  FieldNotFilterable: ['City', 'Property', 'ListingKey, MlsStatus'],
  FieldNotSortable: ['City', 'Property', 'ListingKey, ModificationTimestamp'],
  ScanLimitExceeded: [['ListPrice'], 'Property', 2500],
  NotACondition: ["'x'", true],
  NotAValue: ['compare expression'],
  TypeMismatch: ['string', 'integer', 'literal 3'],
  NullComparison: [],
  InListInvalid: ['null'],
  FilterTooComplex: [40000, 32766],
  HasNotApplicable: [],
  LiteralInvalid: ["'x'", 'date (YYYY-MM-DD)'],
  LiteralTypeNotSupported: ['duration'],
  FunctionUnknown: ['frob'],
  FunctionNotSupported: ['round'],
  FunctionArity: ['contains', 2, 1],
  FunctionArgumentType: ['year', ['dateTimeOffset', 'date'], 'string'],
  DatePartInapplicable: ['hour', 'a date'],
  ArithmeticNotSupported: [],
  LambdaNotSupported: ['any', 'Media'],
  LambdaNeedsCollection: ['any', 'City'],
  CollectionNeedsLambda: ['Appliances'],
  RelatedFilterNotSupported: ['Media/MediaKey', 'Media'],
  OrderByExpressionNotSupported: [],
  OrderByPathNotSupported: ['Media/MediaKey'],
  RelatedOrderNotSupported: ['Media'],
  FilterRequiresOrder: ['PhotosChangeTimestamp', 'ListingKey', 'ModificationTimestamp'],
  ItemRepeated: ['$orderby', 'ListingKey'],
  NavigationInSelect: ['Media'],
  NavigationNotFound: ['Property', 'Agents', 'Media, OpenHouse'],
  NavigationNotExpandable: ['ListOffice', 'Office'],
  ExpandAllNotSupported: [],
  ExpandPathNotSupported: ['Media/Other', 'Media'],
  ExpandOptionNotSupported: [['$skip'], 'Media'],
  ExpandOptionRepeated: ['$top', 'Media'],
  Unauthorized: ['refused'],
  LicenceInvalid: ['acme', 'hidden field X is not a field of the dictionary'],
  AdminRequired: ['usage'],
  RateLimited: ['acme', 5, 42],
  ConcurrencyLimited: ['acme', 8, 1],
  ClientNotFound: ['idx-portal'],
  ClientExists: ['idx-portal'],
  ClientRevoked: ['idx-portal', '2026-11-23T10:00:00.000Z'],
  ClientSpecInvalid: ['rateLimit', 'a positive whole number of requests a minute'],
  ScopeInvalid: ['City eq 1', 'Property', 'City is not filterable'],
  HiddenFieldInvalid: ['Nope', 'is not a field of the dictionary'],
  ServiceUnavailable: ['database', 5],
  UpstreamLagging: ['mls-grid', 900, 600, 5],
  MetricsUnavailable: ['1 of 2 workers did not answer within 2000 ms'],
  RequestMalformed: ['Failed to decode param'],
  RequestTooLarge: ['request entity too large'],
  RequestHeadTooLarge: [1048576],
  RequestTimedOut: [],
  MediaTypeNotSupported: ['unsupported charset "KOI8-R"'],
  InternalError: [],
};

function make<C extends ErrorCode>(code: C): ServiceError {
  return (Errors[code] as (...a: Parameters<(typeof Errors)[C]>) => ServiceError)(...SAMPLES[code]);
}

/**
 * The statuses this service answers with (409: the operator adds a client whose id is taken, or rotates a revoked one; 408 and 431: what
 * Node's HTTP parser refuses, answered by client-errors.ts); a code may only map to one of them.
 */
const KNOWN_STATUSES = new Set([400, 401, 403, 404, 405, 406, 408, 409, 413, 415, 429, 431, 500, 501, 503]);

describe('§7 Errors: one catalogue of stable codes, statuses assigned at the HTTP edge', () => {
  it('the catalogue is not empty and its sections hold each code once', () => {
    expect(ERROR_CODES.length).to.be.above(40);
    const seen = new Map<string, number>();
    CATALOGUE_SECTIONS.forEach((section, i) => {
      for (const code of Object.keys(section)) {
        expect(seen.has(code), `${code} is in sections ${seen.get(code)} and ${i}`).to.equal(false);
        seen.set(code, i);
      }
    });
    expect([...seen.keys()].sort()).to.deep.equal([...ERROR_CODES].sort());
  });

  it('every code is PascalCase (letters and digits, each word capitalised)', () => {
    for (const code of ERROR_CODES) expect(code, code).to.match(/^[A-Z][a-z]+(?:[A-Z][a-z0-9]*)*$/);
  });

  it('every code has a status in the edge table, and the table has no row for a code outside the catalogue', () => {
    for (const code of ERROR_CODES) expect(ERROR_STATUS, code).to.have.property(code);
    expect(Object.keys(ERROR_STATUS).sort()).to.deep.equal([...ERROR_CODES].sort());
  });

  it('statuses are the ones the service has always used, and only InternalError is a 500', () => {
    for (const code of ERROR_CODES) {
      const { status } = ERROR_STATUS[code];
      expect(KNOWN_STATUSES.has(status), `${code}: ${status}`).to.equal(true);
      expect(status === 500, `${code}: ${status}`).to.equal(code === 'InternalError');
    }
  });

  it('each factory makes an error of its own code with a worded message, a target or none, and no HTTP status', () => {
    for (const code of ERROR_CODES) {
      expect(Errors[code].code, code).to.equal(code);
      const e = make(code);
      expect(e, code).to.be.instanceOf(ServiceError).and.instanceOf(Error);
      expect(e.code, code).to.equal(code);
      expect(e.message, code).to.be.a('string').and.not.equal('');
      expect(e.message, code).not.to.match(/undefined|\[object Object\]/);
      if (e.target !== undefined) expect(e.target, code).to.be.a('string').and.not.equal('');
      expect(e, code).not.to.have.any.keys('status', 'statusCode', 'headers');
    }
  });

  it('templates put the arguments where a client looks for them: the message and the target', () => {
    const restricted = Errors.FieldRestricted('OwnerName', '$filter', 'Property', 'ListingKey, MlsStatus');
    expect(restricted.message).to.equal('OwnerName is a restricted field and cannot be used in $filter. Property can be filtered on: ListingKey, MlsStatus');
    expect(restricted.target).to.equal('OwnerName');
    const syntax = Errors.QuerySyntax('$orderby', 3, 'unexpected ","');
    expect([syntax.message, syntax.target, syntax.facts.position]).to.deep.equal(['$orderby: unexpected "," (at position 3)', '$orderby', 3]);
    expect(Errors.KeyInvalid('Property', 'ListingKey', { named: 'Id' }).target).to.equal('Id');
    expect(Errors.SkipNotSupported().target).to.equal('$skip');
  });

  it('the edge adds Retry-After, WWW-Authenticate and Allow where the answer needs them, and nothing elsewhere', () => {
    expect(httpAnswer(Errors.RateLimited('acme', 5, 42))).to.deep.equal({ status: 429, headers: { 'Retry-After': '42' } });
    expect(httpAnswer(Errors.ServiceUnavailable('metering', 5))).to.deep.equal({ status: 503, headers: { 'Retry-After': '5' } });
    expect(httpAnswer(Errors.Unauthorized('missing'))).to.deep.equal({ status: 401, headers: { 'WWW-Authenticate': 'Bearer realm="reso"' } });
    expect(httpAnswer(Errors.Unauthorized('refused')).headers).to.deep.equal({ 'WWW-Authenticate': 'Bearer realm="reso", error="invalid_token"' });
    expect(httpAnswer(Errors.MethodNotAllowed('PUT'))).to.deep.equal({ status: 405, headers: { Allow: 'GET, HEAD' } });
    expect(httpAnswer(Errors.FieldNotSortable('City', 'Property', 'ListingKey'))).to.deep.equal({ status: 501, headers: {} });
    expect(httpAnswer(new ServiceError('NoSuchCode', 'made up'))).to.deep.equal({ status: 500, headers: {} });
  });

  it('the OData error body carries the stable code, the message, the target when there is one, and details', () => {
    expect(errorBody(Errors.FieldNotFound('Property', 'ListPrice'))).to.deep.equal({
      error: { code: 'FieldNotFound', message: 'Property has no field ListPrice', target: 'ListPrice', details: [] },
    });
    expect(errorBody(Errors.QueryStringInvalid()).error).not.to.have.property('target');
  });

  it('the manual (docs/api.md) lists every code with the status the edge gives it, and no other code', () => {
    const manual = readFileSync(join(REPO_ROOT, 'docs/api.md'), 'utf8');
    const section = manual.split('\n## Error codes\n')[1]?.split(/\n#{1,3} /)[0];
    expect(section, 'docs/api.md has a "## Error codes" section').to.be.a('string');
    const documented = new Map([...section!.matchAll(/^\| `([A-Za-z]+)` \| (\d{3}) \| (.+) \|$/gm)].map((m) => [m[1], { status: Number(m[2]), when: m[3] }]));
    expect([...documented.keys()].sort()).to.deep.equal([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) {
      expect(documented.get(code)!.status, code).to.equal(ERROR_STATUS[code].status);
      expect(documented.get(code)!.when.trim(), code).not.to.equal('');
    }
  });
});

/** Layers below the HTTP edge, which must not know it exists. */
const LOWER_LAYERS = ['query', 'paging', 'auth', 'metering', 'storage', 'ingest', 'admin', 'model', 'errors'];
const SRC = join(REPO_ROOT, 'src');
const HTTP = join(SRC, 'http');
const IMPORT = /(?:^|[\s;])(?:import|export)\s(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]|(?:import|require)\(\s*['"]([^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Relative import specifiers of a TypeScript file, resolved to paths (without extension). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2]).filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s));
}

const inHttp = (path: string) => path === HTTP || path.startsWith(HTTP + sep);

describe('Layering: query, paging, auth, metering, storage, ingest, admin, model and errors never import http/', () => {
  it('the import scan sees imports, including the ones http/ makes of itself', () => {
    const app = importsOf(join(HTTP, 'app.ts'));
    expect(app.some(inHttp), 'http/app.ts imports siblings in http/').to.equal(true);
    expect(app.some((p) => !inHttp(p)), 'http/app.ts imports lower layers').to.equal(true);
    expect(importsOf(join(SRC, 'query', 'bind-query.ts')).length).to.be.above(2);
  });

  for (const layer of LOWER_LAYERS) {
    it(`src/${layer}/ imports nothing from src/http/`, () => {
      const files = sourceFiles(join(SRC, layer));
      expect(files.length, `src/${layer} has source files`).to.be.above(0);
      const upward = files.flatMap((f) => importsOf(f).filter(inHttp).map((p) => `${relative(REPO_ROOT, f)} → ${relative(REPO_ROOT, p)}`));
      expect(upward).to.deep.equal([]);
    });
  }
});
