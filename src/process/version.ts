/** The package's version, as `reso-server --version` and the start-up banner print it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function version(): string {
  // dist/src/process/version.js → the package root.
  return (JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as { version: string }).version;
}
