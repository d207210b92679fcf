/**
 * `reso-server seed` and `reso-server ingest`: data into the database, with progress on stderr (rate and time left)
 * and a summary on stdout that `--json` keeps to one JSON object.
 */
import { Command, Option } from 'commander';
import { ExitCode } from '../exit-codes';
import { FileReport, ingestFile } from '../ingest/ndjson';
import { seedDemoData } from '../seed/demo-data';
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
    .description('Write deterministic demo listings with their offices, members, media, open houses, history, rooms and units '
      + 'into $DATABASE_URL (the same N and S give the same records); progress on stderr')
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
  readonly json?: boolean;
}

export function ingestCommand(context: CommandContext): Command {
  return new Command('ingest')
    .summary('Upsert records of one resource from an NDJSON file')
    .description('Upsert records of one resource by key from an NDJSON file, one JSON object per line; {"<Key>": "…", "@delete": true} '
      + 'deletes (a listing is marked deleted, as the dictionary says). The service keeps the timestamps. Progress on stderr; '
      + 'exit code 5 when any line was bad')
    .argument('<Resource>', 'the entity set to write, by its name in $metadata')
    .argument('<file.ndjson>', 'the records, one JSON object per line')
    .addOption(new Option('--on-error <mode>', 'skip: report bad lines by number and write the others; '
      + 'reject: check the whole file first and write nothing if any line is bad').choices(['skip', 'reject']).default('skip'))
    .option('--json', 'print the summary as one JSON object')
    .action((resource: string, file: string, options: IngestOptions) => context.run(() => context.withService(async (service) => {
      const progress = new Progress('lines', undefined);
      const started = performance.now();
      const report = await ingestFile(service, resource, file, { onError: options.onError, onProgress: (n) => progress.update(n) });
      const seconds = (performance.now() - started) / 1000;
      progress.finish(report.lines);
      for (const e of report.errors) console.error(`line ${e.line}: ${e.message}`);
      const { errors, ...counts } = report;
      if (options.json) {
        context.log(JSON.stringify({ ...counts, errors: errors.length, seconds: Number(seconds.toFixed(3)) }));
      } else {
        console.error(`ingest: ${report.lines.toLocaleString('en-US')} lines in ${seconds.toFixed(1)} s, `
          + `${Math.round(report.lines / Math.max(seconds, 0.001)).toLocaleString('en-US')} lines/s`);
        context.log(ingestSummary(file, report));
      }
      return errors.length > 0 ? ExitCode.badInput : ExitCode.ok;
    })));
}

function ingestSummary(file: string, r: FileReport): string {
  const counts = Object.entries(r).filter(([k, v]) => typeof v === 'number' && k !== 'lines' && v > 0).map(([k, v]) => `${v} ${k}`);
  if (r.rejected) return `REJECTED, nothing written: ${r.errors.length} bad of ${r.lines} lines read from ${file}`;
  return `${r.lines} lines read from ${file}: ${counts.join(', ') || 'nothing written'}${r.errors.length ? `; ${r.errors.length} bad lines skipped` : ''}`;
}
