/**
 * `../shared` (specification, RESO and OASIS reference files) is beside the checkout in CI and on the
 * developers' machines, not in a user's clone. Tests that read it skip, saying so, when it is absent.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(__dirname, '../../..');
export const SHARED_DIR = resolve(REPO_ROOT, '../shared');
export const hasShared = existsSync(join(SHARED_DIR, 'spec'));

export function sharedPath(...parts: string[]): string {
  return join(SHARED_DIR, ...parts);
}

/** Call from a suite's `before`: skips the suite when ../shared is absent. */
export function requireShared(ctx: Mocha.Context): void {
  if (!hasShared) {
    console.log(`      (skipped: reads ../shared, which is not beside this checkout at ${SHARED_DIR})`);
    ctx.skip();
  }
}
