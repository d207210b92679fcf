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
    .description('Regenerate generated/ (runtime tables, storage schema, $metadata documents) from the CSDL data dictionary')
    .option('--dictionary <csdl.xml>', 'the data dictionary (default: csdl/reso-dictionary.xml)')
    .option('--out <folder>', 'where to write (default: generated/)')
    .option('--check', 'write nothing: exit 0 when the folder is what the dictionary gives, else exit 1 listing the files that differ')
    .action((options: GenerateOptions) => generate(options));
}

export interface InitOptions {
  readonly dictionary: string;
  readonly dir?: string;
  readonly force?: boolean;
}

export function initCommand(init: (options: InitOptions) => Promise<void> | void): Command {
  return new Command('init')
    .summary('Start a deployment from your own CSDL dictionary: check it, add the policy it does not state, generate and build')
    .description('Copy your CSDL data dictionary to csdl/reso-dictionary.xml, adding the policy annotations it does not state '
      + '(listing root, deleted status, filterable and sortable fields, change timestamps, charged expansions, EntityEvent, Lookup and Field: '
      + 'docs/dictionary.md "Starting from your own dictionary"), then generate generated/ and build, and print what to review. '
      + 'Replacing the demo dictionary starts a new migration history (start on an empty database); '
      + 'replacing a dictionary of your own needs --force and keeps its history (the change becomes the next migration)')
    .requiredOption('--dictionary <csdl.xml>', 'your data dictionary, CSDL XML (EDMX 4.0); it is copied, never changed')
    .option('--dir <folder>', 'the reso-server project to set up (default: the one this command runs from)')
    .option('--force', 'replace a dictionary of your own (one without the demo dictionary\'s mark) in the project')
    .action((options: InitOptions) => init(options));
}
