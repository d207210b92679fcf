/** Command-line entry of the generator: `npm run generate` and `reso-server generate` (options in command.ts). */
import { join, relative } from 'node:path';
import { checkGenerated } from './check-generated';
import { generateCommand, GenerateOptions } from './command';
import { generate, REPO_ROOT } from './generate';

/** Generates, or with `check` compares; returns the exit code (1: the folder is not what the dictionary gives). */
export function runGenerate(options: GenerateOptions): number {
  const dictionary = options.dictionary ?? join(REPO_ROOT, 'csdl/reso-dictionary.xml');
  const outDir = options.out ?? join(REPO_ROOT, 'generated');
  if (options.check) return check(dictionary, outDir);
  const result = generate({ dictionary, outDir });
  for (const notice of result.notices) console.log(`note: ${notice}`);
  console.log(`generated ${result.files.length} files in ${outDir} from ${dictionary}`);
  return 0;
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
      console.error(`generate failed: ${e.message}`);
      process.exit(1);
    });
}
