/**
 * Write transactions that lose a conflict are run again. On one MariaDB server that is a deadlock's victim; on a
 * Galera cluster it is also a transaction that another node's transaction on the same rows beat to certification
 * (reported as a deadlock, at any statement or at COMMIT). Both were rolled back whole, so running the transaction's
 * function again, which reads again what it decides on, is the whole remedy: nothing is applied twice, nothing
 * lost. Waits are bounded and jittered, so writers on several nodes that met do not meet again in step.
 *
 * A transaction's function may therefore run more than once: it keeps no state outside itself (counts, caches)
 * until the transaction has committed.
 */
import { DatabaseUnavailable } from './errors';

/**
 * The reason of a transaction found rolled back before its COMMIT although none of its statements failed (a Galera
 * node's, see MysqlDatabase.attempt): lost to a conflict all the same.
 */
export const UNANNOUNCED_ROLLBACK = 'rolled back without an error (cluster conflict)';

/** Driver codes of a transaction rolled back whole by a conflict with another. */
const CONFLICTS: ReadonlySet<string> = new Set(['ER_LOCK_DEADLOCK', UNANNOUNCED_ROLLBACK]);

export interface ConflictPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  /** The first wait; each further one doubles, up to `maxWaitMs`, then each is jittered (×0.5 to ×1.5). */
  readonly firstWaitMs: number;
  readonly maxWaitMs: number;
}

/** Up to about 4 s of waiting in all before the conflict is reported (503). */
const DEFAULT_CONFLICT_POLICY: ConflictPolicy = { attempts: 12, firstWaitMs: 5, maxWaitMs: 500 };

/** Counts since the process started: for metrics, and the cluster bench's conflict rate. */
export interface ConflictCounts {
  /** Attempts that lost a conflict. */
  conflicts: number;
  /** Of those, attempts rolled back without any statement failing, caught before their COMMIT. */
  unannounced: number;
  /** Transactions that committed after losing at least one. */
  recovered: number;
  /** Transactions that lost every attempt (reported as DatabaseUnavailable). */
  exhausted: number;
}

function isConflict(e: unknown): boolean {
  const reason = e instanceof DatabaseUnavailable ? e.reason : (e as { code?: string } | undefined)?.code;
  return CONFLICTS.has(reason ?? '');
}

/** Runs `attempt` until it commits, again after each conflict, within the policy's bounds. */
export async function retryingConflicts<T>(
  attempt: () => Promise<T>, counts: ConflictCounts, policy: ConflictPolicy = DEFAULT_CONFLICT_POLICY, random: () => number = Math.random,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      const result = await attempt();
      if (n > 1) counts.recovered++;
      return result;
    } catch (e) {
      if (!isConflict(e)) throw e;
      counts.conflicts++;
      if (e instanceof DatabaseUnavailable && e.reason === UNANNOUNCED_ROLLBACK) counts.unannounced++;
      if (n >= policy.attempts) {
        counts.exhausted++;
        throw e;
      }
      const wait = Math.min(policy.maxWaitMs, policy.firstWaitMs * 2 ** (n - 1)) * (0.5 + random());
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
