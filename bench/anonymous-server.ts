/**
 * The product without authentication, licensing or metering, for the auth-cost family: the same service and
 * HTTP server as `reso-server serve` (src/server.ts `startServer`, configured by the same environment), but
 * its app made with `createApp(service, { …, anonymous: true })`, an option that exists for benchmarks only
 * and that no configuration reaches. So the only difference from the product measured beside it is the
 * bearer check, the client's licence and the usage commit before each response.
 *
 * Prints `serving http://localhost:<port>/odata from …` once it accepts connections, as the product does.
 */
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serviceModel } from '../generated';
import { configFromEnv } from '../src/config';
import { createApp } from '../src/http/app';
import { ListingService } from '../src/service';
import { openDatabase } from '../src/storage/database';
import { exitWithParent } from './orphan-guard';

/** As src/server.ts: long query strings reach the service (413 with an OData body) instead of Node's bare 431. */
const MAX_URL_BYTES = 1024 * 1024;

async function main(): Promise<void> {
  exitWithParent();
  const config = configFromEnv();
  const db = openDatabase(config.databaseUrl);
  const service = new ListingService(serviceModel, db, { pagingSecret: config.pagingSecret });
  await service.ready();
  const app = createApp(service, {
    pageSize: config.pageSize,
    maxPageSize: Math.max(config.maxPageSize, config.pageSize),
    baseUrl: config.baseUrl,
    maxFilterLength: config.maxFilterLength,
    feedScope: config.feedScope,
    anonymous: true,
  });
  const server: Server = createServer({ maxHeaderSize: MAX_URL_BYTES }, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, () => resolve());
  });
  server.keepAliveTimeout = 65_000;
  console.log(`serving http://localhost:${(server.address() as AddressInfo).port}/odata from ${db.description} (anonymous: no authentication, licensing or metering)`);
  const stop = () => {
    server.close();
    server.closeAllConnections();
    service.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((e: Error) => { console.error(`anonymous server: ${e.stack ?? e.message}`); process.exit(1); });
