/** `reso-server serve | seed | generate`: the operator's command line. */
import { serviceModel } from '../generated';
import { configFromEnv, usageOptions } from './config';
import { seedDemoData } from './seed/demo-data';
import { serveFromEnv } from './server';
import { CLIENTS_USAGE, runClients, runUsage } from './admin/operator-cli';
import { runWebhooks, WEBHOOKS_USAGE } from './admin/webhooks-cli';
import { subscriptions } from './webhooks/webhooks';
import { ingestFile } from './ingest/ndjson';
import { ListingService } from './service';
import { openDatabase } from './storage/database';

const USAGE = `Usage: reso-server <command> [options]

Commands:
  serve                      Start the OData service at http://localhost:$PORT/odata
                             (on an empty database, first seeds $SEED_LISTINGS demo listings)
  seed --listings N [--seed S]
                             Write N deterministic demo listings with their offices, members,
                             media, open houses, history, rooms and units
  ingest <Resource> <file.ndjson> [--on-error skip|reject]
                             Upsert records by key, one JSON object per line; {"<Key>": "…", "@delete": true}
                             deletes (a listing is marked deleted, as the dictionary says). The service keeps the timestamps.
                             Bad lines are reported by number and skipped, or (reject) nothing is written.
  clients add|list|revoke|rotate
                             Manage API clients (OAuth2 client credentials): scope, hidden fields, rate limit
  webhooks add|list|remove|resume
                             Push each client's EntityEvents to its consumer's URL (RCP-028); list shows
                             state, cursor, lag and failures
  usage [--client X] [--from YYYY-MM-DDTHH] [--to YYYY-MM-DDTHH] [--by hour|day|month] [--json|--csv]
                             Transactions by client, period and class (A: fetch by key, B: query)
  generate [--dictionary F] [--out D]
                             Regenerate generated/ from the CSDL data dictionary

Environment:
  PORT            HTTP port (default 8080)
  DATABASE_URL    sqlite:<path> (default: sqlite:data/reso.sqlite) or mysql://user:pass@host:3306/db
  PAGE_SIZE       records per collection page (default 100)
  BASE_URL        absolute service root for links, behind a proxy (default: from the Host header)
  SEED_LISTINGS   demo listings for serve on an empty database (default 2000; 0 = none)
  DEMO_TOKEN      static access token of the "demo" client (default: a random one, printed when seeding)
  MAX_PAGE_SIZE, PAGING_SECRET, FEED_SCOPE, FILTER_MAX_LENGTH, USAGE_JOURNAL_DIR, USAGE_APPLY_MS,
  DB_ACQUIRE_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS, WEBHOOK_BATCH_SIZE, WEBHOOK_MAX_FAILURES,
  WEBHOOK_TIMEOUT_MS, WEBHOOK_POLL_MS: see the README`;

/**
 * The service as configured, its start-up work done, for commands other than serve (they never charge, but
 * usage applies journals).
 */
async function openService(log: (line: string) => void): Promise<ListingService> {
  const config = configFromEnv();
  const service = new ListingService(serviceModel, openDatabase(config.databaseUrl, config.databaseTimeouts), { usage: usageOptions(config, log) });
  try {
    await service.prepare();
  } catch (e) {
    await service.close().catch(() => undefined);
    throw e;
  }
  return service;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const log = (line: string) => console.log(line);
  switch (command) {
    case 'serve': {
      if (args.includes('--help')) { console.log(USAGE); return 0; }
      if (args.length) throw new Error(`serve takes no arguments (got ${args.join(' ')}); configure it by environment`);
      const running = await serveFromEnv(serviceModel);
      const stop = () => { running.close().then(() => process.exit(0), () => process.exit(1)); };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return new Promise<number>(() => undefined);
    }
    case 'seed': {
      let listings: number | undefined;
      let seed = 1;
      for (let i = 0; i < args.length; i++) {
        if (args[i] === '--listings') listings = positiveInt(args[++i], '--listings');
        else if (args[i] === '--seed') seed = positiveInt(args[++i], '--seed');
        else if (args[i] === '--help') { console.log(USAGE); return 0; }
        else throw new Error(`unknown argument ${args[i]}`);
      }
      if (listings === undefined) throw new Error('seed needs --listings N');
      const service = await openService(log);
      try {
        const summary = await seedDemoData(service, { listings, seed }, log);
        log(`seeded ${JSON.stringify(summary)} into ${service.db.description}`);
      } finally {
        await service.close();
      }
      return 0;
    }
    case 'ingest': {
      if (args.includes('--help')) { console.log(USAGE); return 0; }
      const positional = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--on-error');
      const modeAt = args.indexOf('--on-error');
      const onError = modeAt >= 0 ? args[modeAt + 1] : 'skip';
      if (positional.length !== 2 || (onError !== 'skip' && onError !== 'reject')) {
        throw new Error('usage: reso-server ingest <Resource> <file.ndjson> [--on-error skip|reject]');
      }
      const service = await openService(log);
      try {
        const report = await ingestFile(service, positional[0], positional[1], { onError });
        for (const e of report.errors) console.error(`line ${e.line}: ${e.message}`);
        const { errors, ...counts } = report;
        log(`${report.rejected ? 'REJECTED, nothing written: ' : ''}${JSON.stringify({ ...counts, errors: errors.length })}`);
        return errors.length > 0 ? 2 : 0;
      } finally {
        await service.close();
      }
    }
    case 'clients':
    case 'webhooks':
    case 'usage':
      return runOperatorCommand(command, args, log);
    case 'generate': {
      const { runGenerate, GENERATE_USAGE } = await loadGenerator();
      if (args.includes('--help')) { console.log(GENERATE_USAGE); return 0; }
      runGenerate(args);
      return 0;
    }
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      console.log(USAGE);
      return command === undefined ? 1 : 0;
    default:
      console.error(`unknown command ${command}\n\n${USAGE}`);
      return 1;
  }
}

/** `clients …`, `webhooks …` and `usage …`: over the service as configured, closed afterwards. */
async function runOperatorCommand(command: 'clients' | 'webhooks' | 'usage', args: string[], log: (line: string) => void): Promise<number> {
  if (args.includes('--help')) { console.log(command === 'clients' ? CLIENTS_USAGE : command === 'webhooks' ? WEBHOOKS_USAGE : USAGE); return 0; }
  const service = await openService(log);
  try {
    switch (command) {
      case 'clients': return await runClients({ model: service.model, clients: service.clients }, args, log);
      case 'webhooks': return await runWebhooks(subscriptions(service, configFromEnv().feedScope), args, log);
      default: return await runUsage(service.meter, args, log);
    }
  } finally {
    await service.close();
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

function positiveInt(v: string | undefined, name: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a positive integer`);
  return n;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => { if (code !== undefined) process.exitCode = code; },
    (e: Error) => { console.error(`reso-server: ${e.message}`); process.exit(1); },
  );
}
