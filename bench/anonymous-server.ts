/**
 * The product without authentication, licensing or metering, for the auth-cost family: exactly what
 * `reso-server serve` starts (src/server.ts `startServer`, configured by the same environment), with the app
 * made `anonymous`, an option that exists for benchmarks only and that no configuration reaches. So the only
 * difference from the product measured beside it is the bearer check, the client's licence and the usage journal.
 */
import { serviceModel } from '../generated';
import { configFromEnv } from '../src/config/config';
import { startServer } from '../src/process/server';
import { exitWithParent } from './orphan-guard';

exitWithParent();
startServer(serviceModel, { ...configFromEnv(), seedListings: 0 }, (line) => console.log(`${line} (anonymous: no authentication, licensing or metering)`), { anonymous: true })
  .then((running) => {
    const stop = () => { running.close().then(() => process.exit(0), () => process.exit(1)); };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }, (e: Error) => { console.error(`anonymous server: ${e.message}`); process.exit(1); });
