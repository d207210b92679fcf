/**
 * Whether the service can answer, one concept for every side of the app: the data steps, Express's guarded routes
 * and the `/ready` probe (health.ts). Ready is the start-up work done (process/readiness.ts reaches it once, and
 * keeps it); the probe asks as well whether the database answers now (storage/db/reachable.ts). What cannot be
 * answered for want of either, or of the usage journal, is 503 ServiceUnavailable with one Retry-After.
 */
import { Errors, ServiceError } from '../errors/catalogue';
import { MeteringUnavailable } from '../metering/meter';
import { DatabaseUnavailable } from '../storage/db/errors';
import type { Reachability } from '../storage/db/reachable';
import type { Step } from './pipeline';

/** What a 503 tells a client to wait before retrying. */
export const RETRY_AFTER_SECONDS = 5;

export interface ServiceReadiness {
  /** Whether the start-up work is done: until then, 503. */
  readonly readiness: { readonly ready: boolean };
  /** Whether the database answers now (GET /ready). */
  readonly database: Pick<Reachability, 'check'>;
  /** With PULL_MAX_LAG_SECONDS: the upstream pulled here that lags more than it, if any (GET /ready). */
  readonly pullLag?: PullLagRequirement;
}

export interface PullLagRequirement {
  readonly maxLagSeconds: number;
  readonly lagging: () => Promise<{ name: string; lagSeconds: number | null } | undefined>;
}

/** Passes a request on once the service is ready; before, 503 with Retry-After. */
export function requireReady(readiness: ServiceReadiness['readiness']): Step {
  return (_ctx, next) => next(readiness.ready ? undefined : Errors.ServiceUnavailable('starting', RETRY_AFTER_SECONDS));
}

/**
 * Resolves when the service is ready, its database answers now, and (PULL_MAX_LAG_SECONDS) no upstream lags more
 * than allowed; rejects with the 503 saying which is not.
 */
export async function checkReady(parts: ServiceReadiness): Promise<void> {
  if (!parts.readiness.ready) throw Errors.ServiceUnavailable('starting', RETRY_AFTER_SECONDS);
  await parts.database.check().catch(() => {
    throw Errors.ServiceUnavailable('database', RETRY_AFTER_SECONDS);
  });
  if (!parts.pullLag) return;
  const { maxLagSeconds, lagging } = parts.pullLag;
  const behind = await lagging().catch((e: unknown) => {
    throw unavailableAnswer(e) ?? e;
  });
  if (behind) throw Errors.UpstreamLagging(behind.name, behind.lagSeconds, maxLagSeconds, RETRY_AFTER_SECONDS);
}

/** A failure below the catalogue that passes with time (the database, the usage journal) as the 503 clients see. */
export function unavailableAnswer(err: unknown): ServiceError | undefined {
  if (err instanceof DatabaseUnavailable) return Errors.ServiceUnavailable('database', RETRY_AFTER_SECONDS);
  if (err instanceof MeteringUnavailable) return Errors.ServiceUnavailable('metering', RETRY_AFTER_SECONDS);
  return undefined;
}
