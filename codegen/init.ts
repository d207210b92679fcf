/**
 * `reso-server init --dictionary <file>`: a deployment from the operator's own dictionary, in one command (docs/dictionary.md
 * "Starting from your own dictionary"). The dictionary is checked (one line naming file, line and element when it
 * is refused), given the policy it does not state (default-policy.ts, inserted into its text: text-insertion.ts),
 * generated once into a scratch folder to be sure it generates, then copied to the project's
 * csdl/reso-dictionary.xml; the project's own generator and build then run there (`npm run generate`,
 * `npm run build`), and what to review is printed (init-review.ts).
 *
 * Migration history: replacing the demo dictionary (or none), the deployment starts its own history (generated/
 * migrations/ is started afresh: one 0001-initial for the new dictionary, on an empty database). Replacing a
 * dictionary of the operator's own (only with --force) keeps the history: the change becomes the next migration,
 * as `generate` writes for any change, so a database already serving it is migrated, not left behind.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import type { BuiltModel } from './build-model';
import type { InitOptions } from './command';
import { DefaultsPlan, planDefaults } from './default-policy';
import { CommandRefusal, DictionaryError, DictionaryRefused } from './dictionary-error';
import { refusalLine } from './dictionary-text';
import { generate, modelOf, REPO_ROOT } from './generate';
import { reviewLines, type History, type Replaced } from './init-review';
import { insertInto } from './text-insertion';
import { outlineOf } from './xml-outline';

/** The project's dictionary, which init writes. */
export const PROJECT_DICTIONARY = 'csdl/reso-dictionary.xml';
/**
 * The shipped demo dictionary says so in a comment before its root element: init replaces it without --force.
 * A dictionary without it is the operator's own, replaced only with --force.
 */
export const DEMO_MARK = 'reso-server demo dictionary';
const MIGRATIONS = 'generated/migrations';
/** The comment before each place init inserts at. */
export const ADDED = 'added by reso-server init';

/** Runs init; returns the exit code. Refusals and failures are thrown as CommandRefusal (one line each). */
export function runInit(options: InitOptions, out: (line: string) => void = console.log, progress: (line: string) => void = console.error): number {
  const dir = resolve(options.dir ?? REPO_ROOT);
  checkProject(dir);
  const source = resolve(options.dictionary);
  const shown = options.dictionary;
  const text = readDictionaryText(source, shown);
  let withDefaults: WithDefaults;
  try {
    withDefaults = dictionaryWithDefaults(text);
  } catch (e) {
    throw e instanceof DictionaryError ? new DictionaryRefused(refusalLine(e, shown, text)) : e;
  }
  const { plan, text: dictionary } = withDefaults;
  const target = join(dir, PROJECT_DICTIONARY);
  const replaced = replacing(target, dictionary, options.force === true, dir);
  const history: History = replaced === 'none' || replaced === 'demo' ? 'new' : 'kept';
  const model = generatesWith(dictionary, history, dir, shown);

  mkdirSync(join(dir, 'csdl'), { recursive: true });
  writeFileSync(target, dictionary);
  if (history === 'new') rmSync(join(dir, MIGRATIONS), { recursive: true, force: true });
  npm(dir, ['run', '--silent', 'generate'], 'generating generated/ from it', progress);
  npm(dir, ['run', '--silent', 'build'], 'building', progress);
  for (const line of reviewLines({ source: shown, dir, target, plan, model, history, replaced })) out(line);
  return 0;
}

export interface WithDefaults {
  /** The dictionary's text with the policy init adds. */
  readonly text: string;
  readonly plan: DefaultsPlan;
}

/** The operator's dictionary, checked, with the policy it does not state inserted into its text; throws DictionaryError. */
export function dictionaryWithDefaults(text: string): WithDefaults {
  const model = modelOf(text);
  const outline = outlineOf(text);
  const plan = planDefaults(outline, model);
  return { text: insertInto(outline, plan.applied, ADDED), plan };
}

function checkProject(dir: string): void {
  let scripts: Record<string, unknown> | undefined;
  try {
    scripts = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, unknown> }).scripts;
  } catch {
    scripts = undefined;
  }
  if (!scripts?.generate || !scripts.build || !existsSync(join(dir, 'codegen'))) {
    throw new CommandRefusal(`init: ${dir} is not a reso-server project (no package.json with the generate and build scripts, or no codegen/): `
      + 'give --dir the folder of a reso-server checkout, or leave --dir out to use this one');
  }
  if (!existsSync(join(dir, 'node_modules'))) throw new CommandRefusal(`init: ${dir} has no node_modules: run npm install there first`);
}

function readDictionaryText(path: string, shown: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new DictionaryRefused(`${shown}: cannot read the dictionary: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : (e as Error).message}`);
  }
}

/**
 * What the project's dictionary is, refusing to replace one of the operator's own without --force. Absent or the
 * demo dictionary: a new history follows; the same text, or the operator's own: the history is kept.
 */
export function replacing(target: string, dictionary: string, force: boolean, dir: string): Replaced {
  if (!existsSync(target)) return 'none';
  const existing = readFileSync(target, 'utf8');
  if (existing === dictionary) return 'same';
  if (isDemo(existing)) return 'demo';
  if (force) return 'own';
  throw new CommandRefusal(`init: ${relative(process.cwd(), target) || target} holds another dictionary, not the demo one (it has no "${DEMO_MARK}" comment): `
    + `run init again with --force to replace it; its migration history in ${relative(process.cwd(), join(dir, MIGRATIONS)) || MIGRATIONS} is kept `
    + '(the change becomes the next migration, applied to the database at start)');
}

/** The demo dictionary carries the mark in a comment before its root element. */
export function isDemo(text: string): boolean {
  const root = text.search(/<[A-Za-z_]/);
  return text.slice(0, root < 0 ? text.length : root).includes(DEMO_MARK);
}

/**
 * Generates the dictionary into a scratch folder (on top of the project's migrations when the history is kept), so
 * that nothing of the project changes unless it generates; returns the model, for the review.
 */
function generatesWith(dictionary: string, history: History, dir: string, shown: string): BuiltModel {
  const scratch = mkdtempSync(join(tmpdir(), 'reso-init-'));
  try {
    const file = join(scratch, 'reso-dictionary.xml');
    writeFileSync(file, dictionary);
    const migrations = join(dir, MIGRATIONS);
    if (history === 'kept' && existsSync(migrations)) cpSync(migrations, join(scratch, 'generated/migrations'), { recursive: true });
    return generate({ dictionary: file, outDir: join(scratch, 'generated') }).model;
  } catch (e) {
    if (!(e instanceof DictionaryError)) throw e;
    throw new DictionaryRefused(`${shown}, with the policy init adds: ${e.message}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function npm(dir: string, args: readonly string[], what: string, progress: (line: string) => void): void {
  progress(`reso-server init: ${what} (npm ${args.filter((a) => a !== '--silent').join(' ')} in ${dir})`);
  const run = spawnSync('npm', args, { cwd: dir, stdio: ['ignore', 2, 2], shell: process.platform === 'win32' });
  if (run.status === 0) return;
  const how = run.error ? run.error.message : `exit code ${run.status ?? run.signal}`;
  throw new CommandRefusal(`init: npm ${args.filter((a) => a !== '--silent').join(' ')} failed in ${dir} (${how}): correct what it printed above, then run init again`, 1);
}
