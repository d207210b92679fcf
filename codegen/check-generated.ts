/**
 * `reso-server generate --check`: is the output folder what the dictionary gives? The folder is copied and the
 * copy regenerated, then the two trees are compared byte for byte: a regeneration of a copy, not of an empty
 * folder, because what the generator writes may depend on what the folder holds already (files it keeps, or
 * files whose next version follows from the last). Nothing is written to the folder itself.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { defaultModelImport, generate } from './generate';

/** A file that differs: `changed` in both, `missing` from the folder (the dictionary gives it), `extra` in it (it no longer does). */
export interface GeneratedDifference {
  readonly path: string;
  readonly kind: 'changed' | 'missing' | 'extra';
}

export interface CheckResult {
  /** Files the regeneration holds. */
  readonly files: number;
  readonly differences: readonly GeneratedDifference[];
}

export function checkGenerated(options: { dictionary: string; outDir: string }): CheckResult {
  const scratch = mkdtempSync(join(tmpdir(), 'reso-generate-check-'));
  try {
    const copy = join(scratch, 'out');
    if (existsSync(options.outDir)) cpSync(options.outDir, copy, { recursive: true });
    else mkdirSync(copy);
    generate({ dictionary: options.dictionary, outDir: copy, modelImport: defaultModelImport(options.outDir) });
    const regenerated = filesUnder(copy);
    return { files: regenerated.size, differences: compare(filesUnder(options.outDir), regenerated) };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function compare(actual: ReadonlyMap<string, Buffer>, expected: ReadonlyMap<string, Buffer>): GeneratedDifference[] {
  const differences: GeneratedDifference[] = [];
  for (const [path, bytes] of expected) {
    const held = actual.get(path);
    if (!held) differences.push({ path, kind: 'missing' });
    else if (!held.equals(bytes)) differences.push({ path, kind: 'changed' });
  }
  for (const path of actual.keys()) if (!expected.has(path)) differences.push({ path, kind: 'extra' });
  return differences.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Every file under `dir` by its path from `dir` (with `/` separators); none when `dir` is absent. */
function filesUnder(dir: string, base = dir, into = new Map<string, Buffer>()): Map<string, Buffer> {
  if (!existsSync(dir)) return into;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(path, base, into);
    else into.set(relative(base, path).split(sep).join('/'), readFileSync(path));
  }
  return into;
}
