/**
 * The generator's command, for `reso-server generate` and `npm run generate` alike: declared apart from the
 * generator so that the server's command line can show its help without loading the generator's development
 * dependencies.
 */
import { Command } from 'commander';

export interface GenerateOptions {
  readonly dictionary?: string;
  readonly out?: string;
  readonly check?: boolean;
}

export function generateCommand(generate: (options: GenerateOptions) => Promise<void> | void): Command {
  return new Command('generate')
    .summary('Regenerate generated/ from the CSDL data dictionary (--check: only compare)')
    .description('Regenerate generated/ (runtime tables, routers, storage schema, $metadata documents) from the CSDL data dictionary')
    .option('--dictionary <csdl.xml>', 'the data dictionary (default: csdl/reso-dictionary.xml)')
    .option('--out <folder>', 'where to write (default: generated/)')
    .option('--check', 'write nothing: exit 0 when the folder is what the dictionary gives, else exit 1 listing the files that differ')
    .action((options: GenerateOptions) => generate(options));
}
