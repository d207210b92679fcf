/** Starting and stopping the HTTP server over a database. */
import type { AddressInfo } from 'node:net';
import { createServer, Server } from 'node:http';

/** Largest request head accepted: room for a $filter well past its own limit. */
const MAX_URL_BYTES = 1024 * 1024;
import { Config, usageOptions } from './config';
import type { Clock } from './clock';
import { AppOptions, createApp } from './http/app';
import { listingRootOf, ServiceModel } from './model/service-model';
import { seedDemoData } from './seed/demo-data';
import { ListingService } from './service';
import { ensureDemoClient } from './startup';
import { openDatabase } from './storage/database';
import { DatabaseUnavailable } from './storage/errors';

export interface RunningServer {
  readonly url: string;
  readonly service: ListingService;
  readonly server: Server;
  close(): Promise<void>;
}

/** Options beyond configuration: bench/ starts the app anonymous to measure what auth and metering cost; tests pass a clock. */
export interface ServerOptions extends Pick<AppOptions, 'anonymous'> {
  /** What token lifetimes and rate-limit windows are measured against (a test moves one by hand). */
  readonly clock?: Clock;
}

export async function startServer(
  model: ServiceModel, config: Config, log: (line: string) => void = () => undefined, app: ServerOptions = {},
): Promise<RunningServer> {
  const db = openDatabase(config.databaseUrl);
  const service = new ListingService(model, db, {
    pagingSecret: config.pagingSecret,
    demoToken: config.demoToken,
    usage: usageOptions(config, log),
    clock: app.clock,
    log,
  });
  try {
    await service.prepare();
    const listings = listingRootOf(model);
    if (config.seedListings > 0 && listings && (await service.store(listings).count()) === 0) {
      log(`empty database: seeding ${config.seedListings} demo listings`);
      await seedDemoData(service, { listings: config.seedListings }, log);
      if (!config.demoToken) {
        const token = await ensureDemoClient(service.clients);
        log(`demo client "demo" created; its access token (set DEMO_TOKEN to choose your own):\n\n  ${token}\n\n`
          + `  curl -H 'Authorization: Bearer ${token}' http://localhost:${config.port}/odata/${listings.name}\n`);
      }
    }
  } catch (e) {
    if (!(e instanceof DatabaseUnavailable)) throw e;
    log(`${db.description} is not reachable (${e.reason}); answering 503 until it is (trying again every second)`);
  }
  // Journaled counts move to the database from now on, starting with any a process that died left behind.
  if (!app.anonymous) service.meter.start();
  const parts = {
    model, dialect: db.dialect, stores: service.stores, clients: service.clients, meter: service.meter, clock: service.clock,
    readiness: service.readiness, skipTokens: () => service.readiness.value,
  };
  const handler = createApp(parts, {
    ...app,
    pageSize: config.pageSize,
    maxPageSize: Math.max(config.maxPageSize, config.pageSize),
    baseUrl: config.baseUrl,
    maxFilterLength: config.maxFilterLength,
    feedScope: config.feedScope,
  });
  // Long query strings must reach the service, which answers 413 with an OData body, instead of Node's bare 431.
  const server = createServer({ maxHeaderSize: MAX_URL_BYTES }, handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, () => resolve());
  });
  server.keepAliveTimeout = 65_000;
  const port = (server.address() as AddressInfo).port;
  const url = `http://localhost:${port}/odata`;
  log(`serving ${url} from ${db.description}`);
  return {
    url,
    service,
    server,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await service.close();
    },
  };
}
