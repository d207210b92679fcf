/** Errors about who is asking: credentials, licences, admin rights, request rates and requests in progress. */
import { defineErrors } from './service-error';

type TokenProblem = 'missing' | 'malformed' | 'refused';

export const ACCESS_ERRORS = defineErrors({
  Unauthorized: {
    message: (problem: TokenProblem) => ({
      missing: 'this service needs an access token: send Authorization: Bearer <token> (get one from POST /oauth2/token)',
      malformed: 'the Authorization header must be "Bearer <token>"',
      refused: 'the access token is unknown, expired or revoked',
    })[problem],
    facts: (problem: TokenProblem) => ({ credentialsRefused: problem !== 'missing' }),
  },
  LicenceInvalid: {
    message: (client: string, reason: string) =>
      `the licence of client ${client} cannot be applied (${reason}); the operator must correct it`,
  },
  AdminRequired: {
    message: (what: string) => `${what} is available to admin clients only`,
  },
  RateLimited: {
    message: (client: string, perMinute: number, retryAfterSeconds: number) =>
      `client ${client} may make ${perMinute} requests a minute; retry after ${retryAfterSeconds} s`,
    facts: (_client: string, _perMinute: number, retryAfterSeconds: number) => ({ retryAfterSeconds }),
  },
  ConcurrencyLimited: {
    message: (client: string, limit: number, retryAfterSeconds: number) =>
      `client ${client} may have ${limit} requests in progress at once; retry after ${retryAfterSeconds} s, or when one finishes`,
    facts: (_client: string, _limit: number, retryAfterSeconds: number) => ({ retryAfterSeconds }),
  },
});
