/** `reso-server <command>`: the operator's command line (README "Command line"; exit codes in src/exit-codes.ts). */
import cluster from 'node:cluster';
import { serviceModel } from '../generated';
import { choiceOption, HELP, integerOption, parseCommand, usageError } from './admin/command-line';
import { CLIENTS_HELP, INGEST_HELP, MAIN_HELP, SEED_HELP, USAGE_HELP } from './admin/help';
import { parseClients, parseUsage, runClients, runUsage } from './admin/operator-cli';
import { runWebhooks, WEBHOOKS_USAGE } from './admin/webhooks-cli';
import { Progress } from './admin/progress';
import { failed } from './cluster/messages';
import { Config, configFromEnv, usageOptions } from './config';
import { ExitCode, explainFailure, OperatorError } from './exit-codes';
import { ingestFile } from './ingest/ndjson';
import { serve } from './serve';
import { seedDemoData } from './seed/demo-data';
import { ListingService } from './service';
import { openDatabase } from './storage/database';
import { version } from './version';
import { SubscriptionInvalid } from './webhooks/subscriptions';
import { subscriptions } from './webhooks/webhooks';

const log = (line: string) => console.log(line);

/**
 * The service as configured, its start-up work done, for commands other than serve (they never charge, but
 * usage applies journals).
 */
async function openService(config: Config): Promise<ListingService> {
  const service = new ListingService(serviceModel, openDatabase(config.databaseUrl, config.databaseTimeouts), { usage: usageOptions(config, log) });
  try {
    await service.prepare();
  } catch (e) {
    await service.close().catch(() => undefined);
    throw e;
  }
  return service;
}

async function withService(config: Config, fn: (service: ListingService) => Promise<number>): Promise<number> {
  const service = await openService(config);
  try {
    return await fn(service);
  } finally {
    await service.close();
  }
}

type Command = (args: string[], config: () => Config) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  serve: (args, config) => serve(args, config, log),
  seed: async (args, config) => {
    const parsed = parseCommand('seed', args, { listings: { type: 'string' }, seed: { type: 'string' } });
    if (parsed === HELP) { log(SEED_HELP); return ExitCode.ok; }
    const listings = integerOption('seed', 'listings', parsed.values.listings, 0);
    if (listings === undefined) throw usageError('seed', 'missing --listings N');
    const seed = integerOption('seed', 'seed', parsed.values.seed) ?? 1;
    return withService(config(), async (service) => {
      const progress = new Progress('listings', listings);
      const summary = await seedDemoData(service, { listings, seed }, log, (n) => progress.update(n));
      progress.finish(summary.listings);
      log(`seeded ${JSON.stringify(summary)} into ${service.db.description}`);
      return ExitCode.ok;
    });
  },
  ingest: async (args, config) => {
    const parsed = parseCommand('ingest', args, { 'on-error': { type: 'string' }, json: { type: 'boolean' } }, { names: ['<Resource>', '<file.ndjson>'] });
    if (parsed === HELP) { log(INGEST_HELP); return ExitCode.ok; }
    const onError = choiceOption('ingest', 'on-error', parsed.values['on-error'], ['skip', 'reject'] as const, 'skip');
    const [resource, file] = parsed.positionals;
    return withService(config(), async (service) => {
      const progress = new Progress('lines', undefined);
      const report = await ingestFile(service, resource, file, { onError, onProgress: (n) => progress.update(n) });
      progress.finish(report.lines);
      for (const e of report.errors) console.error(`line ${e.line}: ${e.message}`);
      const { errors, ...counts } = report;
      if (parsed.values.json) log(JSON.stringify({ ...counts, errors: errors.length }));
      else log(ingestSummary(file, report));
      return errors.length > 0 ? ExitCode.badInput : ExitCode.ok;
    });
  },
  clients: async (args, config) => {
    const command = parseClients(args);
    if (command === HELP) { (args.length ? log : console.error)(CLIENTS_HELP); return args.length ? ExitCode.ok : ExitCode.usage; }
    const settings = config();
    return withService(settings, (service) => runClients(service, command, log, { tokenUrl: tokenUrl(settings) }));
  },
  webhooks: async (args, config) => {
    if (args.length === 0 || args.includes('--help') || args.includes('-h')) { (args.length ? log : console.error)(WEBHOOKS_USAGE); return args.length ? ExitCode.ok : ExitCode.usage; }
    const settings = config();
    return withService(settings, (service) => runWebhooks(subscriptions(service, settings.feedScope), args, log).catch((e: unknown) => {
      throw e instanceof SubscriptionInvalid ? new OperatorError(e.message, ExitCode.usage) : e;
    }));
  },
  usage: async (args, config) => {
    const command = parseUsage(args);
    if (command === HELP) { log(USAGE_HELP); return ExitCode.ok; }
    return withService(config(), (service) => runUsage(service.meter, service.clients, command, log));
  },
  generate: async (args) => {
    const { runGenerate, GENERATE_USAGE } = await loadGenerator();
    if (args.includes('--help') || args.includes('-h')) { log(GENERATE_USAGE); return ExitCode.ok; }
    runGenerate(args);
    return ExitCode.ok;
  },
};

function ingestSummary(file: string, r: Awaited<ReturnType<typeof ingestFile>>): string {
  const counts = Object.entries(r).filter(([k, v]) => typeof v === 'number' && k !== 'lines' && v > 0).map(([k, v]) => `${v} ${k}`);
  if (r.rejected) return `REJECTED, nothing written: ${r.errors.length} bad of ${r.lines} lines read from ${file}`;
  return `${r.lines} lines read from ${file}: ${counts.join(', ') || 'nothing written'}${r.errors.length ? `; ${r.errors.length} bad lines skipped` : ''}`;
}

/** Where clients get tokens: BASE_URL's origin, else this host at $PORT. */
function tokenUrl(config: Config): string {
  const origin = config.baseUrl ? new URL(config.baseUrl).origin : `http://localhost:${config.port || 8080}`;
  return `${origin}/oauth2/token`;
}

/** Runs a command; returns its exit code. Failures are thrown (see `run`). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined) { console.error(MAIN_HELP); return ExitCode.usage; }
  if (['--help', '-h', 'help'].includes(command)) { log(MAIN_HELP); return ExitCode.ok; }
  if (['--version', '-v', 'version'].includes(command)) { log(version()); return ExitCode.ok; }
  const run = COMMANDS[command];
  if (!run) throw usageError('', `unknown ${command.startsWith('-') ? 'option' : 'command'} ${command}; commands: ${Object.keys(COMMANDS).join(', ')}`);
  let config: Config | undefined;
  return run(args, () => (config ??= configFromEnv()));
}

/**
 * The process's way in (bin/reso-server.js): runs `argv`, and on failure prints one line, never a stack trace,
 * and exits with the code that names the kind of failure.
 */
export function run(argv: string[]): void {
  main(argv).then(
    (code) => { process.exitCode = code; },
    (e: unknown) => {
      const { line, code } = explainFailure(e, failureContext());
      // A worker's primary prints the line, once for all its workers (they fail alike).
      if (cluster.isWorker && process.connected) {
        process.send!(failed(line, code), () => process.exit(code));
        return;
      }
      console.error(`reso-server: ${line}`);
      process.exit(code);
    },
  );
}

function failureContext(): { databaseUrl?: string; port?: number } {
  try {
    const config = configFromEnv();
    return { databaseUrl: config.databaseUrl, port: config.port };
  } catch {
    return { databaseUrl: process.env.DATABASE_URL };
  }
}

/**
 * Loaded only here: the generator is a development tool, and its packages (ts-morph, fast-xml-parser) are
 * development dependencies that a production install leaves out.
 */
async function loadGenerator(): Promise<typeof import('../codegen/main')> {
  try {
    return await import('../codegen/main');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
    const missing = (e as Error).message.split('\n')[0];
    throw new Error(`generate is a development command and needs the development dependencies (${missing}); run npm install without --omit=dev`);
  }
}

if (require.main === module) run(process.argv.slice(2));
