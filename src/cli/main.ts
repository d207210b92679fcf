/** `reso-server <command>`: the operator's command line on commander (docs/command-line.md "Command line"; exit codes in src/errors/operator-error.ts, failures explained by cli/failures.ts). */
import cluster from 'node:cluster';
import { Command } from 'commander';
import { generateCommand, initCommand } from '../../codegen/command';
import { serviceModel } from '../../generated';
import { CommandContext, CommandEnvironment, exitCodeOf, ServiceOpening, throwInsteadOfExiting, wholeNumber } from './command-line';
import { migrateCommand } from './migrate-command';
import { ingestCommand, seedCommand } from './data-commands';
import { clientsCommand } from './client-commands';
import { usageCommand } from './usage-command';
import { webhooksCommand } from './webhook-commands';
import { pullCommand } from './pull-commands';
import { failed } from '../process/cluster/messages';
import { Config, configFromEnv, usageOptions } from '../config/config';
import { ExitCode, OperatorError } from '../errors/operator-error';
import { explainFailure } from './failures';
import { serve } from '../process/serve';
import { ListingService } from '../process/service';
import { openDatabase } from '../storage/db/open-database';
import { version } from '../process/version';

const log = (line: string) => console.log(line);

const ENVIRONMENT = `
Environment: PORT, HOST, DATABASE_URL (sqlite:<path>, default sqlite:data/reso.sqlite, or
mysql://user:pass@host:3306/db; the MariaDB database must exist), PAGE_SIZE, MAX_PAGE_SIZE,
WORKERS, SHUTDOWN_TIMEOUT_MS, DEMO_TOKEN, SEED_LISTINGS, … (docs/configuration.md "Configuration").
Exit codes: 0 done, 1 failure, 2 usage or configuration, 3 database, 4 port, 5 bad input lines,
6 a dictionary change the stored data cannot take (nothing changed).`;

/**
 * The service as configured, its start-up work done, for commands other than serve (they never charge, but
 * usage applies journals), their statements bounded by DB_BATCH_STATEMENT_TIMEOUT_MS.
 */
async function openService(config: Config, opening: ServiceOpening = {}): Promise<ListingService> {
  const db = openDatabase(config.databaseUrl, { ...config.databaseTimeouts, statementMs: config.batchStatementMs }, config.topology);
  const service = new ListingService(serviceModel, db, { usage: usageOptions(config, log), log: opening.log });
  try {
    if (opening.prepare !== false) await service.prepare();
  } catch (e) {
    await service.close().catch(() => undefined);
    throw e;
  }
  return service;
}

function serveCommand(context: CommandContext): Command {
  return new Command('serve')
    .summary('Start the OData service at http://localhost:$PORT/odata, on every core')
    .description('Serve the OData service at http://localhost:$PORT/odata, configured by environment (docs/configuration.md "Configuration"); '
      + 'on an empty database it first writes $SEED_LISTINGS demo listings')
    .usage('[--workers N]')
    .option('--workers <N>', 'server processes (default: $WORKERS, else one per core; 1: no cluster). SIGHUP replaces them one at a time; '
      + 'SIGTERM or SIGINT drain requests in progress for up to $SHUTDOWN_TIMEOUT_MS, then exit 0', wholeNumber())
    .action((options: { workers?: number }) => context.run(() => serve(options, () => context.config())));
}

/** The whole command line; `context` is what its actions use. */
function commandLine(context: CommandContext): Command {
  const program = new Command('reso-server')
    .description('A read-only RESO Web API (OData 4.01) server for listing data')
    .version(version(), '-v, --version', 'print the version')
    .helpOption('-h, --help', 'print this help (each command has its own: reso-server <command> --help)')
    .addHelpText('after', ENVIRONMENT);
  for (const command of [serveCommand, migrateCommand, seedCommand, ingestCommand, clientsCommand, webhooksCommand, pullCommand, usageCommand]) {
    program.addCommand(command(context));
  }
  program.addCommand(generateCommand((options) => context.run(() => withGenerator((g) => g.runGenerate(options)))));
  program.addCommand(initCommand((options) => context.run(() => withGenerator((g) => g.runInit(options, log)))));
  throwInsteadOfExiting(program);
  return program;
}

/**
 * Runs the command line `argv` in `environment`; returns the exit code. Failures are thrown (see `run`); help,
 * the version and refusals of what was typed are printed by commander or thrown as one-line OperatorErrors.
 */
export async function runCommandLine(argv: readonly string[], environment: CommandEnvironment): Promise<number> {
  let code: number = ExitCode.ok;
  const context: CommandContext = { ...environment, run: async (work) => { code = await work(); } };
  try {
    await commandLine(context).parseAsync(argv, { from: 'user' });
  } catch (e) {
    const printed = exitCodeOf(e);
    if (printed === undefined) throw e;
    return printed;
  }
  return code;
}

/** Runs a command with the configuration from the environment; returns its exit code. */
export function main(argv: string[]): Promise<number> {
  let config: Config | undefined;
  const environment: CommandEnvironment = {
    log,
    config: () => (config ??= configFromEnv()),
    withService: async (work, opening) => {
      const service = await openService(environment.config(), opening);
      try {
        return await work(service);
      } finally {
        await service.close();
      }
    },
  };
  return runCommandLine(argv, environment);
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

/** Runs a generator command; what it refuses (a dictionary, a project) is the operator's one line, with its exit code. */
async function withGenerator(work: (generator: typeof import('../../codegen/main')) => number): Promise<number> {
  const generator = await loadGenerator();
  try {
    return work(generator);
  } catch (e) {
    if (e instanceof generator.CommandRefusal) throw new OperatorError(e.message, e.exitCode);
    throw e;
  }
}

/**
 * Loaded only here: the generator is a development tool, and its packages (ts-morph, fast-xml-parser) are
 * development dependencies that a production install leaves out.
 */
async function loadGenerator(): Promise<typeof import('../../codegen/main')> {
  try {
    return await import('../../codegen/main');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
    const missing = (e as Error).message.split('\n')[0];
    throw new Error(`generate is a development command and needs the development dependencies (${missing}); run npm install without --omit=dev`);
  }
}

if (require.main === module) run(process.argv.slice(2));
