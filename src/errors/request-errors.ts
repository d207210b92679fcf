/** Errors in the request itself: its path, method, key, query string and query options, and paging. */
import { defineErrors } from './service-error';

type KeyProblem = { named: string } | { expected: 'string' | 'integer' };

export const REQUEST_ERRORS = defineErrors({
  ResourceNotFound: {
    message: (path: string, serviceRoot: string) => `no resource at ${path}; the service root is ${serviceRoot}/`,
    target: (path: string) => path,
  },
  RecordNotFound: {
    message: (set: string, keyName: string, key: string | number) => `no ${set} record has ${keyName} ${JSON.stringify(key)}`,
    target: (_set: string, keyName: string) => keyName,
  },
  PropertyNotFound: {
    message: (set: string, name: string) => `${set} has no property ${name}`,
    target: (_set: string, name: string) => name,
  },
  NavigationNotFollowable: {
    message: (set: string, navigation: string) => `${set}'s navigation ${navigation} cannot be followed by this service`,
    target: (_set: string, navigation: string) => navigation,
  },
  MethodNotAllowed: {
    message: (method: string) => `this service is read-only; ${method} is not supported`,
  },
  KeyInvalid: {
    message: (set: string, keyName: string, problem: KeyProblem) => ('named' in problem
      ? `${set} is keyed by ${keyName}, not ${problem.named}`
      : problem.expected === 'string'
        ? `the key of ${set} is a string: write ${set}('<${keyName}>'), doubling any quote inside`
        : `the key of ${set} is an integer: write ${set}(<${keyName}>)`),
    target: (_set: string, keyName: string, problem: KeyProblem) => ('named' in problem ? problem.named : keyName),
  },
  QueryStringInvalid: {
    message: () => 'the query string is not valid URL encoding',
  },
  OptionUnknown: {
    message: (name: string) => `${name} is not an OData system query option`,
    target: (name: string) => name,
  },
  OptionRepeated: {
    message: (name: string, sameAs?: string) => (sameAs === undefined
      ? `query option ${name} is given more than once`
      : `${sameAs} and ${name} are the same option, given twice`),
    target: (name: string) => name,
  },
  OptionValueInvalid: {
    message: (option: string, expected: string, got?: string) => `${option} must be ${expected}${got === undefined ? '' : ` (got "${got}")`}`,
    target: (option: string) => option,
  },
  ParameterInvalid: {
    message: (fn: string, parameter: string, expected: string, got?: string) =>
      `${fn}: ${parameter} must be ${expected}${got === undefined ? '' : ` (got "${got}")`}`,
    target: (_fn: string, parameter: string) => parameter,
  },
  OptionNotApplicable: {
    message: (option: string, appliesNotTo: string) => `${option} does not apply to ${appliesNotTo}`,
    target: (option: string) => option,
  },
  OptionNotSupported: {
    message: (options: readonly string[]) => `${options.join(', ')} ${options.length === 1 ? 'is' : 'are'} not supported by this service`,
    target: (options: readonly string[]) => options[0],
  },
  FormatNotSupported: {
    message: (format: string, resource: 'data' | 'metadata') => (resource === 'data'
      ? `$format=${format} is not available; this service answers in JSON ($format=json)`
      : `$format=${format} is not available for $metadata; use xml or json`),
    target: '$format',
  },
  MediaTypeNotAcceptable: {
    message: (accept: string, resource: 'data' | 'metadata' = 'metadata') => (resource === 'data'
      ? `data is available as application/json only, not ${accept}`
      : `$metadata is available as application/xml or application/json, not ${accept}`),
  },
  ProtocolVersionNotSupported: {
    message: (maxVersion: string) => `OData-MaxVersion ${maxVersion}: this service speaks OData 4.0 and 4.01`,
    target: 'OData-MaxVersion',
  },
  QuerySyntax: {
    message: (option: string, position: number, problem: string) => `${option}: ${problem} (at position ${position})`,
    target: (option: string) => option,
    facts: (_option: string, position: number) => ({ position }),
  },
  FilterTooLong: {
    message: (length: number, limit: number) =>
      `$filter is ${length} characters long; the limit is ${limit}. Split the query, or use in (…) for lists of values`,
    target: '$filter',
  },
  SkipNotSupported: {
    message: () => '$skip is not supported; page by following @odata.nextLink from the previous response',
    target: '$skip',
  },
  SkipTokenInvalid: {
    message: (why: string) => `$skiptoken ${why}; follow @odata.nextLink exactly as the service sent it`,
    target: '$skiptoken',
  },
  ScopeChanged: {
    message: (option: '$filter' | '$skiptoken', epoch: string, changeTimestamp: string, ofChangeLog: boolean) => (ofChangeLog
      ? `the records this client may see changed at ${epoch} (its scope or the feed scope was changed), after the event this ${option} `
        + `continues from, so events of records that came into its view may be older than it: walk every resource again, then continue `
        + `from the latest ${changeTimestamp}`
      : `the records this client may see changed at ${epoch} (its scope or the feed scope was changed), after the position this ${option} `
        + `continues from: walk the set again from the start, without a ${changeTimestamp} filter, and continue from the later of `
        + `that walk's mark and '${epoch}'`),
    target: (option: '$filter' | '$skiptoken') => option,
  },
  EventSequenceExpired: {
    message: (sequence: string, mark: number, oldest: number) =>
      `events after ${sequence} ${mark} are no longer all kept (the oldest kept is ${oldest}; retention removed the others): `
      + `walk every resource again, then continue from the latest ${sequence}`,
    target: '$filter',
  },
});
