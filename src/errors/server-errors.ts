/**
 * Errors of the service rather than the request: it cannot answer now, the HTTP framework refused the
 * request before the service saw it, or the service failed.
 */
import { defineErrors } from './service-error';

export const SERVER_ERRORS = defineErrors({
  ServiceUnavailable: {
    message: (cause: 'starting' | 'database' | 'metering', _retryAfterSeconds: number) => ({
      starting: 'the service is starting: its database is not ready for it yet (unreachable, locked, or being prepared by another instance); retry after the time in Retry-After',
      database: 'the database is not reachable right now; retry after the time in Retry-After',
      metering: 'the request cannot be counted right now, so it is not served; retry after the time in Retry-After',
    })[cause],
    facts: (_cause: 'starting' | 'database' | 'metering', retryAfterSeconds: number) => ({ retryAfterSeconds }),
  },
  UpstreamLagging: {
    message: (upstream: string, lagSeconds: number | null, maxLagSeconds: number, _retryAfterSeconds: number) => (lagSeconds === null
      ? `this server's copy of upstream ${upstream} is not complete yet (no pull of it has reached its end); it is not ready until one has (PULL_MAX_LAG_SECONDS ${maxLagSeconds})`
      : `this server's copy of upstream ${upstream} is ${lagSeconds} s behind it, more than PULL_MAX_LAG_SECONDS (${maxLagSeconds}); retry after the time in Retry-After`),
    target: (upstream: string) => upstream,
    facts: (_upstream: string, _lag: number | null, _max: number, retryAfterSeconds: number) => ({ retryAfterSeconds }),
  },
  MetricsUnavailable: {
    message: (reason: string) => `the cluster's metrics could not be collected (${reason}); scrape again`,
  },
  RequestMalformed: {
    message: (reason: string) => reason || 'bad request',
  },
  RequestTooLarge: {
    message: (reason: string) => reason || 'the request is too large',
  },
  RequestHeadTooLarge: {
    message: (limitBytes: number) => `the request line and headers together are larger than this service reads (${limitBytes} bytes); send a shorter query (long $filter key lists: split them over several requests)`,
  },
  RequestTimedOut: {
    message: () => 'the request did not arrive whole in time; send it again',
  },
  MediaTypeNotSupported: {
    message: (reason: string) => reason || 'the request body is in a media type this service does not read',
  },
  InternalError: {
    message: () => 'the service failed to answer this request; it has been logged',
  },
});
