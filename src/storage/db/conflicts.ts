/**
 * Write transactions that lose a conflict are run again. On one MariaDB server that is a deadlock's victim; on a
 * Galera cluster it is also a transaction that another node's transaction on the same rows beat to certification
 * (reported as a deadlock, at any statement or at COMMIT). Both were rolled back whole, so running the transaction's
 * function again, which reads again what it decides on, is the whole remedy: nothing is applied twice, nothing
 * lost. Waits grow exponentially and are jittered, so writers on several nodes that met do not meet again in step.
 *
 * A transaction's function may therefore run more than once: it keeps no state outside itself (counts, caches)
 * until the transaction has committed.
 *
 * How long a writer keeps trying is its caller's to say, by who waits for it:
 * - a request's writes (usage journal, rate windows, token and client changes, settings, the change log's pruning,
 *   start-up and migration work, the demo seed) take REQUEST_CONFLICT_POLICY: about 4 s, then the conflict is
 *   reported (503 to a request): a client must not wait a minute for an answer, and it may retry;
 * - batch writers (ingest, and `reso-server pull` applying a page) take batchConflictPolicy: retried for as long as
 *   the batch's time budget (DEFAULT_BATCH_BUDGET_MS unless the caller says) allows, with full jitter; a batch that
 *   exhausts it is split by its writer (ingest.ts writeInHalves), and only a single record that exhausts a budget of
 *   its own is reported as failed. Measured on a 3-node cluster: 6 of 765 batches exhausted the short policy in
 *   45 s of three nodes' writers on the same listings (docs/benchmarks/notes/conflict-budget.md).
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
  /** The first wait's bound; each further one doubles, up to `maxWaitMs`, then is jittered (see `jitter`). */
  readonly firstWaitMs: number;
  readonly maxWaitMs: number;
  /**
   * How a wait is drawn from its bound: 'spread' ×0.5 to ×1.5 of it (a short policy's waits stay near their sum);
   * 'full' anywhere from 0 to it, which spreads writers that keep meeting furthest apart.
   */
  readonly jitter: 'spread' | 'full';
  /**
   * The time the attempts and waits may take in all, from the first attempt's start: no wait is begun that would end
   * past it. Without one, the attempts alone bound the retries.
   */
  readonly budgetMs?: number;
}

/** A request's writes: up to about 4 s of waiting in all before the conflict is reported (503). */
export const REQUEST_CONFLICT_POLICY: ConflictPolicy = { attempts: 12, firstWaitMs: 5, maxWaitMs: 500, jitter: 'spread' };

/** A batch's time budget for conflicts unless its writer says otherwise (`reso-server ingest --conflict-budget`). */
export const DEFAULT_BATCH_BUDGET_MS = 60_000;

/** A batch writer's policy: bounded by its time budget (the attempts' count is a backstop only). */
export function batchConflictPolicy(budgetMs = DEFAULT_BATCH_BUDGET_MS): ConflictPolicy {
  return { attempts: 1000, firstWaitMs: 10, maxWaitMs: 2000, jitter: 'full', budgetMs };
}

/** Counts since the process started: for metrics, and the cluster bench's conflict rate. */
export interface ConflictCounts {
  /** Attempts that lost a conflict. */
  conflicts: number;
  /** Of those, attempts rolled back without any statement failing, caught before their COMMIT. */
  unannounced: number;
  /** Transactions that committed after losing at least one. */
  recovered: number;
  /** Transactions that lost every attempt their policy allowed (reported as DatabaseUnavailable). */
  exhausted: number;
}

/** Whether `e` is a transaction lost to a conflict: one a batch writer may split and try again in smaller parts. */
export function isConflict(e: unknown): boolean {
  const reason = e instanceof DatabaseUnavailable ? e.reason : (e as { code?: string } | undefined)?.code;
  return CONFLICTS.has(reason ?? '');
}

/** Runs `attempt` until it commits, again after each conflict, within the policy's bounds. */
export async function retryingConflicts<T>(
  attempt: () => Promise<T>, counts: ConflictCounts, policy: ConflictPolicy = REQUEST_CONFLICT_POLICY,
  random: () => number = Math.random, now: () => number = Date.now,
): Promise<T> {
  const started = now();
  for (let n = 1; ; n++) {
    try {
      const result = await attempt();
      if (n > 1) counts.recovered++;
      return result;
    } catch (e) {
      if (!isConflict(e)) throw e;
      counts.conflicts++;
      if (e instanceof DatabaseUnavailable && e.reason === UNANNOUNCED_ROLLBACK) counts.unannounced++;
      const wait = waitAfter(n, policy, random);
      if (n >= policy.attempts || (policy.budgetMs !== undefined && now() - started + wait >= policy.budgetMs)) {
        counts.exhausted++;
        throw e;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** The wait after the `n`-th attempt lost (1 the first). */
function waitAfter(n: number, policy: ConflictPolicy, random: () => number): number {
  const bound = Math.min(policy.maxWaitMs, policy.firstWaitMs * 2 ** (n - 1));
  return bound * (policy.jitter === 'full' ? random() : 0.5 + random());
}
