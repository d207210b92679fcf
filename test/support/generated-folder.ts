/** Reading what the generator wrote: its files as text, and the service model it describes, loaded from anywhere. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? listFiles(join(dir, n)) : [join(dir, n)]));
}

/** Every file under `dir` by its path relative to `dir` (with `/` separators). */
export function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(listFiles(dir).map((f) => [relative(dir, f).split(sep).join('/'), readFileSync(f, 'utf8')]));
}

export { loadGenerated } from '../../codegen/load-generated';
