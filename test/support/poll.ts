/** Waiting for what another process or the event loop will do: bounded polling, never a fixed sleep. */

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
