/** Waiting for what another process or the event loop will do: bounded polling, never a fixed sleep. */
import { DatabaseUnavailable } from '../../src/storage/db/errors';

/**
 * Resolves once `check` holds, asking every `everyMs`; rejects after `ms`, naming `what` (a function is asked at
 * the time, to say what was left).
 */
export async function until(what: string | (() => string), check: () => boolean | Promise<boolean>, ms = 20_000, everyMs = 50): Promise<void> {
  for (const end = Date.now() + ms; !(await check());) {
    if (Date.now() > end) throw new Error(`${typeof what === 'string' ? what : what()}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** `work`, run again every `everyMs` while it fails with an error `transient` accepts, for at most `ms`. */
export async function retryingWhile<T>(work: () => Promise<T>, transient: (e: unknown) => boolean, ms = 60_000, everyMs = 250): Promise<T> {
  for (const end = Date.now() + ms; ;) {
    try {
      return await work();
    } catch (e) {
      if (!transient(e) || Date.now() > end) throw e;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}

/**
 * `work`, run again while it fails with DatabaseUnavailable, for at most a minute: what an operator's loader or a
 * client honouring Retry-After does while a cluster changes membership (its nodes refuse for a few seconds meanwhile).
 */
export function whileUnavailable<T>(work: () => Promise<T>): Promise<T> {
  return retryingWhile(work, (e) => e instanceof DatabaseUnavailable);
}
