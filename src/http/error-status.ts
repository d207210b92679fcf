/**
 * The one place where error codes meet HTTP: each code's status, and the headers some answers need
 * (Retry-After, WWW-Authenticate, Allow). Every code in the catalogue has a row; the compiler holds it to that.
 */
import type { ErrorCode, ServiceError } from '../errors/catalogue';

export const REALM = 'reso';

interface HttpAnswer {
  readonly status: number;
  readonly headers?: (e: ServiceError) => Readonly<Record<string, string>>;
}

const retryAfter = (e: ServiceError): Readonly<Record<string, string>> =>
  (e.facts.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(e.facts.retryAfterSeconds) });

const bearerChallenge = (e: ServiceError) => ({
  'WWW-Authenticate': `Bearer realm="${REALM}"${e.facts.credentialsRefused ? ', error="invalid_token"' : ''}`,
});

export const ERROR_STATUS: { readonly [C in ErrorCode]: HttpAnswer } = {
  // The request itself
  ResourceNotFound: { status: 404 },
  RecordNotFound: { status: 404 },
  PropertyNotFound: { status: 404 },
  NavigationNotFollowable: { status: 501 },
  MethodNotAllowed: { status: 405, headers: () => ({ Allow: 'GET, HEAD' }) },
  KeyInvalid: { status: 400 },
  QueryStringInvalid: { status: 400 },
  OptionUnknown: { status: 400 },
  OptionRepeated: { status: 400 },
  OptionValueInvalid: { status: 400 },
  ParameterInvalid: { status: 400 },
  OptionNotApplicable: { status: 400 },
  OptionNotSupported: { status: 501 },
  FormatNotSupported: { status: 400 },
  MediaTypeNotAcceptable: { status: 406 },
  ProtocolVersionNotSupported: { status: 400 },
  QuerySyntax: { status: 400 },
  FilterTooLong: { status: 413 },
  SkipNotSupported: { status: 501 },
  SkipTokenInvalid: { status: 400 },
  ScopeChanged: { status: 400 },
  EventSequenceExpired: { status: 400 },
  // Fields: unknown is a client mistake, restricted or unlicensed is forbidden, not indexed (or past its scan's bound) is not implemented (spec §7)
  FieldNotFound: { status: 400 },
  FieldHasNoMembers: { status: 400 },
  FieldRestricted: { status: 403 },
  FieldNotFilterable: { status: 501 },
  FieldNotSortable: { status: 501 },
  ScanLimitExceeded: { status: 501 },
  // $filter expressions
  NotACondition: { status: 400 },
  NotAValue: { status: 400 },
  TypeMismatch: { status: 400 },
  NullComparison: { status: 400 },
  InListInvalid: { status: 400 },
  FilterTooComplex: { status: 400 },
  HasNotApplicable: { status: 400 },
  LiteralInvalid: { status: 400 },
  LiteralTypeNotSupported: { status: 501 },
  FunctionUnknown: { status: 400 },
  FunctionNotSupported: { status: 501 },
  FunctionArity: { status: 400 },
  FunctionArgumentType: { status: 400 },
  DatePartInapplicable: { status: 400 },
  ArithmeticNotSupported: { status: 501 },
  LambdaNotSupported: { status: 501 },
  LambdaNeedsCollection: { status: 400 },
  CollectionNeedsLambda: { status: 400 },
  RelatedFilterNotSupported: { status: 501 },
  // Order, projection and expansion
  OrderByExpressionNotSupported: { status: 501 },
  OrderByPathNotSupported: { status: 501 },
  RelatedOrderNotSupported: { status: 501 },
  FilterRequiresOrder: { status: 501 },
  ItemRepeated: { status: 400 },
  NavigationInSelect: { status: 400 },
  NavigationNotFound: { status: 400 },
  NavigationNotExpandable: { status: 501 },
  ExpandAllNotSupported: { status: 501 },
  ExpandPathNotSupported: { status: 501 },
  ExpandOptionNotSupported: { status: 501 },
  ExpandOptionRepeated: { status: 400 },
  // Who is asking
  Unauthorized: { status: 401, headers: bearerChallenge },
  LicenceInvalid: { status: 403 },
  AdminRequired: { status: 403 },
  RateLimited: { status: 429, headers: retryAfter },
  ConcurrencyLimited: { status: 429, headers: retryAfter },
  // The operator's requests (admin API)
  ClientNotFound: { status: 404 },
  ClientExists: { status: 409 },
  ClientRevoked: { status: 409 },
  ClientSpecInvalid: { status: 400 },
  ScopeInvalid: { status: 400 },
  HiddenFieldInvalid: { status: 400 },
  // The service
  ServiceUnavailable: { status: 503, headers: retryAfter },
  UpstreamLagging: { status: 503, headers: retryAfter },
  MetricsUnavailable: { status: 503 },
  RequestMalformed: { status: 400 },
  RequestTooLarge: { status: 413 },
  RequestHeadTooLarge: { status: 431 },
  RequestTimedOut: { status: 408 },
  MediaTypeNotSupported: { status: 415 },
  InternalError: { status: 500 },
};

/** Status and headers for an error; a code outside the catalogue is the service's own failure. */
export function httpAnswer(e: ServiceError): { status: number; headers: Readonly<Record<string, string>> } {
  const row = (ERROR_STATUS as Readonly<Record<string, HttpAnswer | undefined>>)[e.code];
  if (!row) return { status: 500, headers: {} };
  return { status: row.status, headers: row.headers?.(e) ?? {} };
}

/**
 * Everything an error's answer carries: its status, the headers the edge adds with the body's Content-Type, and
 * the body's text. For each writer of one: Express's error handler, the metrics listener, the raw socket of a
 * request Node's parser refused.
 */
export function errorAnswer(e: ServiceError): { status: number; headers: Readonly<Record<string, string>>; body: string } {
  const { status, headers } = httpAnswer(e);
  return { status, headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(errorBody(e)) };
}

/** The OData error body: `{"error":{"code","message","target","details"}}`, target only when there is one. */
export function errorBody(e: ServiceError): { error: { code: string; message: string; target?: string; details: readonly unknown[] } } {
  return { error: { code: e.code, message: e.message, ...(e.target ? { target: e.target } : {}), details: e.details } };
}
