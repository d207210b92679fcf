/**
 * `reso-server seed` and `reso-server ingest`: data into the database, with progress on stderr (rate and time left)
 * and a summary on stdout that `--json` keeps to one JSON object.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { Command, Option } from 'commander';
import { ExitCode, OperatorError } from '../errors/operator-error';
import { FileReport, ingestFile } from '../ingest/ndjson';
import { DEFAULT_BATCH_BUDGET_MS } from '../storage/db/conflicts';
import { seedDemoData } from '../demo/demo-data';
import { CommandContext, wholeNumber } from './command-line';
import { Progress } from './progress';

interface SeedOptions {
  readonly listings: number;
  readonly seed: number;
  readonly json?: boolean;
}

export function seedCommand(context: CommandContext): Command {
  return new Command('seed')
    .summary('Write deterministic demo listings and everything that hangs off them')
    .description('Write deterministic demo listings with their offices, members, media, open houses, history, rooms and units, '
      + 'and records of every other set of the dictionary, into $DATABASE_URL (the same N and S give the same records); progress on stderr')
    .usage('--listings N [--seed S] [--json]')
    .requiredOption('--listings <N>', 'listings to write', wholeNumber(0))
    .option('--seed <S>', 'random seed', wholeNumber(), 1)
    .option('--json', 'print only the counts written, as one JSON object')
    .action((options: SeedOptions) => context.run(() => context.withService(async (service) => {
      const progress = new Progress('listings', options.listings);
      // The human summary (counts and time) is seedDemoData's closing line, held until the progress line on a
      // terminal has ended; --json prints the counts alone.
      const said: string[] = [];
      const summary = await seedDemoData(service, options, (line) => said.push(line), (n) => progress.update(n));
      progress.finish(summary.listings);
      if (!options.json) for (const line of said) context.log(line);
      context.log(options.json ? JSON.stringify(summary) : `seeded ${JSON.stringify(summary)} into ${service.db.description}`);
      return ExitCode.ok;
    })));
}

interface IngestOptions {
  readonly onError: 'skip' | 'reject';
  readonly conflictBudget: number;
  readonly json?: boolean;
}

export function ingestCommand(context: CommandContext): Command {
  return new Command('ingest')
    .summary('Upsert records of one resource from an NDJSON file')
    .description('Upsert records of one resource by key from an NDJSON file, one JSON object per line; {"<Key>": "…", "@delete": true} '
      + 'deletes (a listing is marked deleted, as the dictionary says). The service keeps the timestamps. Progress on stderr; '
      + 'exit code 5 when any line was bad, or lost to other writers\' changes of the same records (a cluster) for a whole conflict budget')
    .argument('<Resource>', 'the entity set to write, by its name in $metadata')
    .argument('<file.ndjson>', 'the records, one JSON object per line')
    .addOption(new Option('--on-error <mode>', 'skip: report bad lines by number and write the others; '
      + 'reject: check the whole file first and write nothing if any line is bad').choices(['skip', 'reject']).default('skip'))
    .option('--conflict-budget <seconds>', 'how long a batch may keep losing conflicts with other writers before it is split in halves '
      + '(each with a budget of its own, down to single lines)', wholeNumber(1), DEFAULT_BATCH_BUDGET_MS / 1000)
    .option('--json', 'print the summary as one JSON object')
    .action((resource: string, file: string, options: IngestOptions) => context.run(async () => {
      checkReadable(file);
      return context.withService(async (service) => {
        if (!service.model.entitySets.some((s) => s.name === resource || s.pathAliases.includes(resource))) {
          throw new OperatorError(`ingest: no resource ${resource}; resources: ${service.model.entitySets.map((s) => s.name).join(', ')}`);
        }
        const progress = new Progress('lines', undefined);
        const started = performance.now();
        const report = await ingestFile(service, resource, file, {
          onError: options.onError, conflictBudgetMs: options.conflictBudget * 1000, onProgress: (n) => progress.update(n),
        });
        const seconds = (performance.now() - started) / 1000;
        progress.finish(report.lines);
        for (const e of [...report.errors, ...report.notices.map((n) => ({ ...n, message: `notice: ${n.message}` }))].sort((a, b) => a.line - b.line)) {
          console.error(`line ${e.line}: ${e.message}`);
        }
        const { errors, notices: _notices, ...counts } = report;
        if (options.json) {
          // conflicts: attempts lost to another writer (a Galera certification conflict, a deadlock) and run again;
          // recovered: transactions that committed after some; exhausted: ones that lost their whole budget (then split).
          const { conflicts, recovered, exhausted } = service.db.conflicts?.() ?? { conflicts: 0, recovered: 0, exhausted: 0 };
          context.log(JSON.stringify({ ...counts, errors: errors.length, conflicts, recovered, exhausted, seconds: Number(seconds.toFixed(3)) }));
        } else {
          console.error(`ingest: ${report.lines.toLocaleString('en-US')} lines in ${seconds.toFixed(1)} s, `
            + `${Math.round(report.lines / Math.max(seconds, 0.001)).toLocaleString('en-US')} lines/s`);
          context.log(ingestSummary(file, report));
        }
        return errors.length > 0 ? ExitCode.badInput : ExitCode.ok;
      });
    }));
}

/** A file ingest cannot open is the operator's to fix: one line saying so (exit 2), before the database is opened. */
function checkReadable(file: string): void {
  try {
    accessSync(file, constants.R_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'there is no such file' : code === 'EACCES' ? 'this user may not read it' : `${code ?? String(e)}`;
    throw new OperatorError(`ingest: cannot read ${file}: ${why}`);
  }
  if (statSync(file).isDirectory()) throw new OperatorError(`ingest: ${file} is a folder, not a file of records`);
}

/** Counts in words, as the summary line gives them. */
const COUNT_WORDS: Readonly<Record<string, string>> = {
  created: 'created', updated: 'updated', unchanged: 'unchanged', deleted: 'deleted', notFound: 'not found', listingsTouched: 'listings touched',
};

function ingestSummary(file: string, r: FileReport): string {
  const counts = Object.entries(COUNT_WORDS).filter(([k]) => (r[k as keyof FileReport] as number) > 0).map(([k, words]) => `${r[k as keyof FileReport] as number} ${words}`);
  if (r.rejected) return `REJECTED, nothing written: ${r.errors.length} bad of ${r.lines} lines read from ${file}`;
  const split = r.splits ? `; ${r.splits} batches split after losing conflicts for their whole budget` : '';
  return `${r.lines} lines read from ${file}: ${counts.join(', ') || 'nothing written'}${r.errors.length ? `; ${r.errors.length} bad lines skipped` : ''}${split}`;
}
