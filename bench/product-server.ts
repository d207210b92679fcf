/**
 * The product as the benchmark starts it: exactly `reso-server serve` (src/cli.ts `main(['serve'])`, configured by
 * PORT, DATABASE_URL, PAGE_SIZE, MAX_PAGE_SIZE, SEED_LISTINGS, DEMO_TOKEN), under its own script name so that tools stopping stray
 * `cli.js serve` processes by name on a shared machine do not take the benchmark's server down mid-run.
 */
import { main } from '../src/cli/main';
import { exitWithParent } from './orphan-guard';

exitWithParent();

main(['serve']).then(
  (code) => { if (code !== undefined) process.exitCode = code; },
  (e: Error) => { console.error(`reso-server: ${e.message}`); process.exit(1); },
);
