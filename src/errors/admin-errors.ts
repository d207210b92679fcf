/**
 * Errors of the operator's requests (the admin API the console uses, and `reso-server clients`): a client that
 * is not there, is there already or was revoked, a description of a client that cannot be stored, and a licence (scope or
 * hidden fields) the service could not apply. A scope's error carries the service's own error as a detail.
 */
import { defineErrors, ErrorDetail, ServiceError } from './service-error';

export const ADMIN_ERRORS = defineErrors({
  ClientNotFound: {
    message: (id: string) => `no client has the id ${id}`,
    target: 'id',
  },
  ClientExists: {
    message: (id: string) => `a client with the id ${id} exists already; choose another id`,
    target: 'id',
  },
  ClientRevoked: {
    message: (id: string, revokedAt: string) => `client ${id} was revoked at ${revokedAt} and cannot be rotated: a revoked client's credentials `
      + 'are ended for good; add a new client instead',
    target: 'id',
  },
  ClientSpecInvalid: {
    message: (what: string, expected: string) => `${what} must be ${expected}`,
    target: (what: string) => what,
  },
  ScopeInvalid: {
    message: (scope: string, set: string, reason: string) => `the scope ${JSON.stringify(scope)} is not a usable filter on ${set}: ${reason}`,
    target: 'scope',
  },
  HiddenFieldInvalid: {
    message: (entry: string, reason: string) => `hidden field ${entry} ${reason}`,
    target: 'hiddenFields',
  },
});

/** A ScopeInvalid that carries the parser's or binder's own error (its code, message and target) as a detail. */
export function scopeInvalid(scope: string, set: string, cause: unknown): ServiceError {
  const e = ADMIN_ERRORS.ScopeInvalid(scope, set, (cause as Error).message);
  if (!(cause instanceof ServiceError)) return e;
  const detail: ErrorDetail = { code: cause.code, message: cause.message, ...(cause.target ? { target: cause.target } : {}) };
  return new ServiceError(e.code, e.message, e.target, e.facts, [detail]);
}
