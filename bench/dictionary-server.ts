/**
 * The product serving a dictionary generated into a folder of its own (GENERATED: the folder), configured by the
 * environment as `reso-server serve` is (DATABASE_URL, PORT, DEMO_TOKEN, DB_STATEMENT_TIMEOUT_MS, …): what
 * bench/unindexed-scans.ts measures from outside. One process; says `serving <url>` when it is ready.
 */
import { loadGenerated } from '../codegen/load-generated';
import { configFromEnv } from '../src/config/config';
import { startServer } from '../src/process/server';
import { exitWithParent } from './orphan-guard';

exitWithParent();

const folder = process.env.GENERATED;
if (!folder) throw new Error('GENERATED names the generated folder to serve');
startServer(loadGenerated(folder), configFromEnv(process.env)).then(
  (server) => {
    console.log(`serving ${server.url}`);
    process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
  },
  (e: Error) => { console.error(`dictionary-server: ${e.message}`); process.exit(1); },
);
