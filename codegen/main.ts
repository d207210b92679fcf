/** Command-line entry of the generator: `npm run generate` and `reso-server generate`. */
import { join } from 'node:path';
import { generate, REPO_ROOT } from './generate';

export const GENERATE_USAGE = `Usage: reso-server generate [--dictionary <csdl.xml>] [--out <folder>]

Reads the CSDL data dictionary and writes the generated runtime tables, routers,
storage schema and $metadata documents.
  --dictionary  default csdl/reso-dictionary.xml
  --out         default generated/`;

export function runGenerate(args: string[]): void {
  let dictionary = join(REPO_ROOT, 'csdl/reso-dictionary.xml');
  let outDir = join(REPO_ROOT, 'generated');
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--dictionary' && args[i + 1]) dictionary = args[++i];
    else if (a === '--out' && args[i + 1]) outDir = args[++i];
    else if (a === '--help' || a === '-h') { console.log(GENERATE_USAGE); return; }
    else throw new Error(`unknown argument ${a}\n\n${GENERATE_USAGE}`);
  }
  const result = generate({ dictionary, outDir });
  console.log(`generated ${result.files.length} files in ${outDir} from ${dictionary}`);
}

if (require.main === module) {
  try {
    runGenerate(process.argv.slice(2));
  } catch (e) {
    console.error(`generate failed: ${(e as Error).message}`);
    process.exit(1);
  }
}
