/**
 * `npm run certify [-- options]`: RESO's own certification tool against this server (docs/certification.md "Getting certified").
 *
 * Builds reso-cert from ../shared/reso-cert (skipped, saying so, when that recipe is not there; under CI its
 * absence fails), then on each database (SQLite; MariaDB too when MYSQL_URL is set) serves
 * - the certification dictionary (docs/certification/reso-dictionary.xml), generated into a folder of its own,
 *   over demo data: Web API Core 2.1.0 and 2.0.0 must pass every required scenario, and the Data Dictionary 2.0
 *   check must find no metadata error;
 * - the shipped dictionary (csdl/reso-dictionary.xml): its Core 2.1.0 failures must all be the spec's 501s (fields
 *   it does not index, $skip), and its Data Dictionary check must find no metadata error;
 * - RESO's own DD 2.0 (../shared/reso/dd-2.0-lookup-resource.xml, skipped when absent) with the policy `reso-server
 *   init` adds to it, as an operator starting from it serves it: the same verdict as the shipped dictionary.
 * The DD check's last step, variations, needs RESO's online Variations Service: it is reported, never counted.
 * Exit code 0 when all holds, 1 otherwise. Reports are kept in the output folder (printed at the end).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { dictionaryWithDefaults } from '../codegen/init';
import { DatabaseKind, serve } from './served';
import { buildTool, runTool, Tool } from './tool';
import { coreCounts, CoreCounts, ddVerdict, unexpectedFailures } from './verdicts';

const ROOT = resolve(__dirname, '../..');
const RECIPE = resolve(ROOT, '../shared/reso-cert');
const DICTIONARIES = {
  certification: join(ROOT, 'docs/certification/reso-dictionary.xml'),
  shipped: join(ROOT, 'csdl/reso-dictionary.xml'),
  /** RESO's reference file (string lookups), read beside the checkout; given init's defaults before it is served. */
  reso: resolve(ROOT, '../shared/reso/dd-2.0-lookup-resource.xml'),
} as const;
/** Enough listings for every scenario's data (the tool samples at most 1000 records a set), few enough to seed fast. */
const LISTINGS = 300;

const USAGE = `Usage: npm run certify [-- --database sqlite|mariadb] [--listings N] [--output DIR]
  Runs RESO's reso-cert (Web API Core 2.1.0 and 2.0.0, Data Dictionary 2.0) against the certification and the
  shipped dictionary, and RESO's DD 2.0 with init's defaults, on SQLite and (with MYSQL_URL set) MariaDB. Exit 0
  when every verdict holds.`;

interface Options {
  readonly databases: readonly DatabaseKind[];
  readonly listings: number;
  readonly output: string;
}

function options(argv: readonly string[]): Options {
  const value = (name: string) => {
    const i = argv.indexOf(name);
    return i < 0 ? undefined : argv[i + 1];
  };
  const known = new Set(['--database', '--listings', '--output']);
  for (let i = 0; i < argv.length; i += 2) if (!known.has(argv[i]) || argv[i + 1] === undefined) throw new Error(USAGE);
  const database = value('--database');
  if (database !== undefined && database !== 'sqlite' && database !== 'mariadb') throw new Error(USAGE);
  const databases: DatabaseKind[] = database === 'sqlite' ? ['SQLite'] : database === 'mariadb' ? ['MariaDB'] : process.env.MYSQL_URL ? ['SQLite', 'MariaDB'] : ['SQLite'];
  const listings = Number(value('--listings') ?? LISTINGS);
  if (!Number.isInteger(listings) || listings < 1) throw new Error(USAGE);
  return { databases, listings, output: value('--output') ?? mkdtempSync(join(tmpdir(), 'reso-certify-')) };
}

const coreLine = (c: CoreCounts) =>
  `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped (required); optional: ${c.optionalPassed} passed, ${c.optionalOther.length} not`;

/** The certification dictionary on one database: each Core version with no failed required scenario, DD without errors. */
async function certificationDictionary(tool: Tool, kind: DatabaseKind, o: Options, say: (line: string) => void): Promise<string[]> {
  const problems: string[] = [];
  const served = await serve(DICTIONARIES.certification, kind, o.output, `${kind}-certification`, o.listings);
  try {
    for (const version of ['2.1.0', '2.0.0']) {
      const run = await runTool(tool, ['core', '--spec-version', version], served.url, served.token, join(o.output, kind, 'certification', `core-${version}`));
      const counts = coreCounts(run);
      say(`  certification dictionary, Web API Core ${version}: ${coreLine(counts)}`);
      for (const why of counts.optionalOther) say(`    optional, not passed: ${why}`);
      problems.push(...counts.failures.map((f) => `${kind}, certification dictionary, Core ${version}: ${f}`));
    }
    problems.push(...await dataDictionary(tool, served, join(o.output, kind, 'certification'), `${kind}, certification dictionary`, say));
  } finally {
    await served.close();
  }
  return problems;
}

/**
 * A dictionary served as it is deployed, on one database: Core fails only where the spec refuses, DD without errors.
 * `name`: the dictionary, as the lines say it ("shipped dictionary"); `folder`: where its reports go.
 */
async function specRefusalsOnly(
  tool: Tool, kind: DatabaseKind, o: Options, dictionary: { file: string; name: string; folder: string }, say: (line: string) => void,
): Promise<string[]> {
  const { file, name, folder } = dictionary;
  const served = await serve(file, kind, o.output, `${kind}-${folder}`, o.listings);
  try {
    const run = await runTool(tool, ['core', '--spec-version', '2.1.0'], served.url, served.token, join(o.output, kind, folder, 'core-2.1.0'));
    const counts = coreCounts(run);
    const unexpected = unexpectedFailures(run, counts);
    say(`  ${name}, Web API Core 2.1.0: ${coreLine(counts)} (${unexpected.length ? 'NOT ONLY' : 'all'} the spec's 501s: unindexed fields, $skip)`);
    const problems = unexpected.map((u) => `${kind}, ${name}, Core 2.1.0, not one of the spec's refusals: ${u}`);
    return [...problems, ...await dataDictionary(tool, served, join(o.output, kind, folder), `${kind}, ${name}`, say)];
  } finally {
    await served.close();
  }
}

/** RESO's DD 2.0 with the policy `reso-server init` adds, written into the output folder; undefined without ../shared/reso. */
function resoWithDefaults(o: Options): string | undefined {
  if (!existsSync(DICTIONARIES.reso)) return undefined;
  const file = join(o.output, 'dd-2.0-lookup-resource.init.xml');
  mkdirSync(o.output, { recursive: true });
  writeFileSync(file, dictionaryWithDefaults(readFileSync(DICTIONARIES.reso, 'utf8')).text);
  return file;
}

async function dataDictionary(tool: Tool, served: { url: string; token: string }, out: string, what: string, say: (line: string) => void): Promise<string[]> {
  const run = await runTool(tool, ['dd', '--dd-version', '2.0', '--limit', '1000'], served.url, served.token, join(out, 'dd-2.0'));
  const v = ddVerdict(run);
  say(`  ${what.split(', ')[1]}, Data Dictionary 2.0 metadata: ${v.metadataErrors} errors, ${v.warnings} warnings; variations: not run here (${v.variations ?? 'needs RESO\'s online Variations Service'})`);
  return [
    ...(v.metadataErrors > 0 ? [`${what}, DD 2.0: ${v.metadataErrors} metadata errors`] : []),
    ...v.failedSteps.map((s) => `${what}, DD 2.0 step not passed: ${s}`),
  ];
}

export async function certify(argv: readonly string[], say: (line: string) => void = (l) => console.log(l)): Promise<number> {
  const o = options(argv);
  const tool = await buildTool(RECIPE);
  if (!tool) {
    say(`certify: RESO's tool is not here (no ${join(RECIPE, 'build.sh')}): skipped. It is built from that recipe (docs/certification.md "Getting certified").`);
    return process.env.CI ? 1 : 0;
  }
  const problems: string[] = [];
  const reso = resoWithDefaults(o);
  if (!reso) say(`certify: RESO's DD 2.0 is not here (no ${DICTIONARIES.reso}): its run is skipped.`);
  for (const kind of o.databases) {
    say(`${kind}, ${o.listings} demo listings:`);
    problems.push(...await certificationDictionary(tool, kind, o, say));
    problems.push(...await specRefusalsOnly(tool, kind, o, { file: DICTIONARIES.shipped, name: 'shipped dictionary', folder: 'shipped' }, say));
    if (reso) problems.push(...await specRefusalsOnly(tool, kind, o, { file: reso, name: 'RESO DD 2.0 after init', folder: 'reso-dd-2.0' }, say));
  }
  say(`reports: ${o.output}`);
  for (const p of problems) say(`FAILED ${p}`);
  say(problems.length ? `certify: ${problems.length} problem(s)` : 'certify: every verdict holds');
  return problems.length ? 1 : 0;
}

if (require.main === module) {
  certify(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e: Error) => {
    console.error(`certify: ${e.message}`);
    process.exitCode = 1;
  });
}
