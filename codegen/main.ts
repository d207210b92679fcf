/** Command-line entry of the generator: `npm run generate` and `reso-server generate` (options in command.ts). */
import { join } from 'node:path';
import { generateCommand, GenerateOptions } from './command';
import { generate, REPO_ROOT } from './generate';

export function runGenerate(options: GenerateOptions): void {
  const dictionary = options.dictionary ?? join(REPO_ROOT, 'csdl/reso-dictionary.xml');
  const outDir = options.out ?? join(REPO_ROOT, 'generated');
  const result = generate({ dictionary, outDir });
  for (const notice of result.notices) console.log(`note: ${notice}`);
  console.log(`generated ${result.files.length} files in ${outDir} from ${dictionary}`);
}

if (require.main === module) {
  generateCommand(runGenerate).parseAsync(process.argv.slice(2), { from: 'user' }).catch((e: Error) => {
    console.error(`generate failed: ${e.message}`);
    process.exit(1);
  });
}
