/**
 * Command-line entry of the generator: `npm run generate` and `reso-server generate` (options in command.ts), and
 * `reso-server init` (init.ts). A refused dictionary is one line naming the file, line and element, exit code 2.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkGenerated } from './check-generated';
import { generateCommand, GenerateOptions } from './command';
import { CommandRefusal, DictionaryError, DictionaryRefused } from './dictionary-error';
import { refusalLine } from './dictionary-text';
import { generate, REPO_ROOT } from './generate';

export { CommandRefusal, DictionaryRefused } from './dictionary-error';
export { runInit } from './init';

/**
 * Generates, or with `check` compares; returns the exit code (1: the folder is not what the dictionary gives).
 * Throws DictionaryRefused for a dictionary the generator refuses.
 */
export function runGenerate(options: GenerateOptions): number {
  const dictionary = options.dictionary ?? join(REPO_ROOT, 'csdl/reso-dictionary.xml');
  const outDir = options.out ?? join(REPO_ROOT, 'generated');
  try {
    if (options.check) return check(dictionary, outDir);
    const result = generate({ dictionary, outDir });
    for (const notice of result.notices) console.log(`note: ${notice}`);
    console.log(`generated ${result.files.length} files in ${outDir} from ${dictionary}`);
    return 0;
  } catch (e) {
    throw refused(e, shown(dictionary), dictionary);
  }
}

/** A DictionaryError as the operator's one line (the file as `shown`, read again to find the line); others as they are. */
export function refused(e: unknown, shownFile: string, path: string): unknown {
  if (!(e instanceof DictionaryError)) return e;
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // Unreadable: the line says so, without a position.
  }
  return new DictionaryRefused(refusalLine(e, shownFile, text));
}

function check(dictionary: string, outDir: string): number {
  const { files, differences } = checkGenerated({ dictionary, outDir });
  const [folder, source] = [shown(outDir), shown(dictionary)];
  if (differences.length === 0) {
    console.log(`${folder}/ is what ${source} gives (${files} files)`);
    return 0;
  }
  console.error(`${folder}/ is not what ${source} gives: ${differences.length} file${differences.length === 1 ? '' : 's'} differ; `
    + `run npm run generate${options(dictionary, outDir)} and commit the result`);
  for (const d of differences) console.error(`  ${d.kind.padEnd(8)}${folder}/${d.path}`);
  return 1;
}

/** A path as the operator would type it: from the repository root when inside it. */
function shown(path: string): string {
  const inside = relative(REPO_ROOT, path).split('\\').join('/');
  return inside && !inside.startsWith('..') ? inside : path;
}

function options(dictionary: string, outDir: string): string {
  const given = [
    shown(dictionary) === 'csdl/reso-dictionary.xml' ? '' : ` --dictionary ${shown(dictionary)}`,
    shown(outDir) === 'generated' ? '' : ` --out ${shown(outDir)}`,
  ].join('');
  return given ? ` --${given}` : '';
}

if (require.main === module) {
  generateCommand((options) => { process.exitCode = runGenerate(options); })
    .parseAsync(process.argv.slice(2), { from: 'user' }).catch((e: Error) => {
      console.error(`generate failed: ${String(e?.message ?? e).split('\n')[0]}`);
      process.exit(e instanceof CommandRefusal ? e.exitCode : 1);
    });
}
