/** Configuration from the environment; every setting is documented in docs/configuration.md. */
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { OperatorError } from '../errors/operator-error';
import type { MeterOptions } from '../metering/meter';
import type { RetentionPolicy } from '../storage/records/change-log-retention';
import { ReplicaOptions, sqliteFile, TopologyOptions } from '../storage/db/open-database';
import { DatabaseTimeouts, DEFAULT_TIMEOUTS } from '../storage/db/deadline';
import { OperationConfig, operationConfigFromEnv } from './operation';

/** `OperationConfig`: where it listens, logs, metrics, compression, CORS (operation-config.ts). */
export interface Config extends OperationConfig {
  port: number;
  /** `sqlite:<path>` or `mysql://…`; unset means the embedded SQLite file data/reso.sqlite. */
  databaseUrl?: string;
  /** Read replicas of a MariaDB primary (DATABASE_REPLICA_URLS, REPLICA_WAIT_MS); causal reads on Galera (DB_CAUSAL_READS). */
  topology: TopologyOptions;
  /** Records per page of a collection response, by default. */
  pageSize: number;
  /** Largest page a client may ask for with `Prefer: odata.maxpagesize=N`. */
  maxPageSize: number;
  /** Signs $skiptoken values; unset, a random secret is created once in the database and shared by every instance on it. */
  pagingSecret?: string;
  /** Absolute service root used in links, when the server sits behind a proxy; else taken from Host. */
  baseUrl?: string;
  /** Longest $filter accepted, in characters; longer ones get 413. */
  maxFilterLength: number;
  /** Records of a page read, expanded and written at a time: a page's memory is one batch's (src/http/page-batches.ts). */
  pageBatchSize: number;
  /** Bytes of stored records each process keeps in memory by revision (storage/record-cache.ts); 0: none. */
  recordCacheBytes: number;
  /** Bytes of compressed runs of records each process keeps for stitched gzip bodies (http/gzip/run-segments.ts); 0: none. */
  gzipRunCacheBytes: number;
  /** Bytes of stitched gzip pages each process keeps whole while no record is written (http/gzip/page-bodies.ts); 0: none. */
  gzipPageCacheBytes: number;
  /** How long a response waits for a reader that takes nothing before it is disconnected, in milliseconds. */
  writeStallMs: number;
  /** Requests one client may have in progress at once; more answer 429. */
  maxConcurrentRequests: number;
  /** Which listings are distributed: an OData filter on Property's filterable fields; unset, all of them. */
  feedScope?: string;
  /** A static token for the `demo` client, registered at start (makes scripts repeatable); unset, seeding prints a random one. */
  demoToken?: string;
  /** Listings the demo data has when `serve` starts on an empty database; 0 starts empty. */
  seedListings: number;
  /** Where each server process journals usage counts before they reach the database (see src/metering/meter.ts). */
  usageJournalDir: string;
  /** How often journaled usage counts are applied to the database, in milliseconds. */
  usageApplyMs: number;
  /** The longest waits for the database (docs/operating.md "Timeouts"); past them a request gets 503. */
  databaseTimeouts: DatabaseTimeouts;
  /**
   * The statement bound for the commands other than serve (ingest, seed, migrate, usage, clients): batch work no
   * HTTP client waits on, whose large transactions may wait longer to commit (on a cluster, behind the others').
   */
  batchStatementMs: number;
  /** Webhook delivery (src/webhooks/): events per POST, failures before a pause, a POST's timeout, how often due subscriptions are looked for. */
  webhooks: WebhookSettings;
  /** How long the change log (EntityEvent) keeps events: days since commit, and at most a count. */
  changeLogRetention: RetentionPolicy;
  /** How often the change log's old events are pruned, in milliseconds. */
  changeLogPruneMs: number;
  /** Server processes `serve` runs (node:cluster); 1 serves from the one process. */
  workers: number;
  /** `/ready` fails while an upstream pulled here (not paused) lags more than this, in seconds; unset, no requirement. */
  pullMaxLagSeconds?: number;
  /** How long a stopping server waits for requests in progress before it cuts them, in milliseconds. */
  shutdownTimeoutMs: number;
}

/** The shortest DEMO_TOKEN accepted, and the fewest distinct characters in it: it is an admin credential. */
export const DEMO_TOKEN_MIN_LENGTH = 32;
const DEMO_TOKEN_MIN_DISTINCT = 12;

export interface WebhookSettings {
  batchSize: number;
  maxFailures: number;
  timeoutMs: number;
  pollMs: number;
}

/** The configuration; an invalid setting is an OperatorError (exit code 2) naming it. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  let config: Config;
  try {
    config = readConfig(env);
  } catch (e) {
    throw e instanceof OperatorError ? e : new OperatorError((e as Error).message);
  }
  if (config.pageSize > config.maxPageSize) {
    throw new OperatorError(`PAGE_SIZE (${config.pageSize}) must not exceed MAX_PAGE_SIZE (${config.maxPageSize}): lower PAGE_SIZE or raise MAX_PAGE_SIZE`);
  }
  return config;
}

function readConfig(env: NodeJS.ProcessEnv): Config {
  return {
    ...operationConfigFromEnv(env),
    port: intSetting(env, 'PORT', 8080, 0, 65535),
    databaseUrl: env.DATABASE_URL || undefined,
    topology: { replicas: replicaOptions(env), causalReads: causalReads(env) },
    pageSize: intSetting(env, 'PAGE_SIZE', 100, 1, 10_000),
    maxPageSize: intSetting(env, 'MAX_PAGE_SIZE', 1000, 1, 10_000),
    pagingSecret: env.PAGING_SECRET || undefined,
    maxFilterLength: intSetting(env, 'FILTER_MAX_LENGTH', 32 * 1024, 256, 512 * 1024),
    pageBatchSize: intSetting(env, 'PAGE_BATCH_SIZE', 100, 1, 10_000),
    recordCacheBytes: intSetting(env, 'RECORD_CACHE_MB', 64, 0, 1_048_576) * 1024 * 1024,
    gzipRunCacheBytes: intSetting(env, 'GZIP_RUN_CACHE_MB', 64, 0, 1_048_576) * 1024 * 1024,
    gzipPageCacheBytes: intSetting(env, 'GZIP_PAGE_CACHE_MB', 64, 0, 1_048_576) * 1024 * 1024,
    writeStallMs: intSetting(env, 'WRITE_STALL_TIMEOUT_MS', 30_000, 100, 600_000),
    maxConcurrentRequests: intSetting(env, 'MAX_CONCURRENT_REQUESTS', 8, 1, 10_000),
    feedScope: env.FEED_SCOPE || undefined,
    demoToken: demoToken(env.DEMO_TOKEN || undefined),
    baseUrl: env.BASE_URL ? env.BASE_URL.replace(/\/+$/, '') : undefined,
    seedListings: intSetting(env, 'SEED_LISTINGS', 2000, 0, 10_000_000),
    usageJournalDir: env.USAGE_JOURNAL_DIR || usageJournalDirFor(env.DATABASE_URL || undefined),
    usageApplyMs: intSetting(env, 'USAGE_APPLY_MS', 1000, 10, 60_000),
    databaseTimeouts: {
      acquireMs: intSetting(env, 'DB_ACQUIRE_TIMEOUT_MS', DEFAULT_TIMEOUTS.acquireMs, 10, 600_000),
      statementMs: intSetting(env, 'DB_STATEMENT_TIMEOUT_MS', DEFAULT_TIMEOUTS.statementMs, 100, 3_600_000),
    },
    batchStatementMs: intSetting(env, 'DB_BATCH_STATEMENT_TIMEOUT_MS', 60_000, 100, 3_600_000),
    webhooks: {
      batchSize: intSetting(env, 'WEBHOOK_BATCH_SIZE', 100, 1, 10_000),
      maxFailures: intSetting(env, 'WEBHOOK_MAX_FAILURES', 10, 1, 1000),
      timeoutMs: intSetting(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 300_000),
      pollMs: intSetting(env, 'WEBHOOK_POLL_MS', 1000, 10, 600_000),
    },
    changeLogRetention: {
      days: intSetting(env, 'ENTITY_EVENT_RETENTION_DAYS', 30, 1, 36_500),
      ...(env.ENTITY_EVENT_RETENTION_COUNT ? { count: intSetting(env, 'ENTITY_EVENT_RETENTION_COUNT', 0, 1, Number.MAX_SAFE_INTEGER) } : {}),
    },
    changeLogPruneMs: intSetting(env, 'ENTITY_EVENT_PRUNE_MS', 60_000, 100, 86_400_000),
    workers: intSetting(env, 'WORKERS', availableParallelism(), 1, 256),
    shutdownTimeoutMs: intSetting(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    pullMaxLagSeconds: env.PULL_MAX_LAG_SECONDS ? intSetting(env, 'PULL_MAX_LAG_SECONDS', 0, 1, 31_536_000) : undefined,
  };
}

/**
 * DATABASE_REPLICA_URLS: MariaDB replicas of DATABASE_URL's primary, comma-separated. A read waits up to
 * REPLICA_WAIT_MS for its replica to catch up with the primary, and that wait must end before the statement limit.
 */
function replicaOptions(env: NodeJS.ProcessEnv): ReplicaOptions | undefined {
  const urls = (env.DATABASE_REPLICA_URLS ?? '').split(',').map((u) => u.trim()).filter(Boolean);
  if (urls.length === 0) return undefined;
  if (!/^(mysql|mariadb):\/\//.test(env.DATABASE_URL ?? '')) throw new OperatorError('DATABASE_REPLICA_URLS needs DATABASE_URL to be the MariaDB primary (mysql://…)');
  const bad = urls.find((u) => !/^(mysql|mariadb):\/\/[^/]+\/[^/]+$/.test(u));
  if (bad) throw new OperatorError(`DATABASE_REPLICA_URLS: ${bad.replace(/\/\/[^@/]*@/, '//…@')} is not a MariaDB URL (mysql://user:password@host:3306/database)`);
  const statementMs = intSetting(env, 'DB_STATEMENT_TIMEOUT_MS', DEFAULT_TIMEOUTS.statementMs, 100, 3_600_000);
  const waitMs = intSetting(env, 'REPLICA_WAIT_MS', Math.min(1000, statementMs / 2), 0, 600_000);
  if (waitMs >= statementMs) throw new OperatorError(`REPLICA_WAIT_MS (${waitMs}) must be shorter than DB_STATEMENT_TIMEOUT_MS (${statementMs})`);
  return { urls, waitMs };
}

/** DB_CAUSAL_READS: `on` (the default) or `off` (reads on a Galera node may see a state older than one already served). */
function causalReads(env: NodeJS.ProcessEnv): boolean {
  const v = (env.DB_CAUSAL_READS ?? 'on').trim();
  if (v !== 'on' && v !== 'off') throw new OperatorError(`DB_CAUSAL_READS must be on or off (got ${v})`);
  return v === 'on';
}

/** A DEMO_TOKEN is an admin's bearer token: a short or repetitive one is refused, not served. */
function demoToken(token: string | undefined): string | undefined {
  if (token === undefined) return undefined;
  if (token.length < DEMO_TOKEN_MIN_LENGTH || new Set(token).size < DEMO_TOKEN_MIN_DISTINCT) {
    throw new OperatorError(`DEMO_TOKEN is too weak for an admin token (${token.length} characters, ${new Set(token).size} distinct; `
      + `at least ${DEMO_TOKEN_MIN_LENGTH} and ${DEMO_TOKEN_MIN_DISTINCT} needed): use a random one, e.g. DEMO_TOKEN=$(openssl rand -base64 32), or unset it`);
  }
  if (/\s/.test(token)) throw new OperatorError('DEMO_TOKEN must not contain spaces: use a random one, e.g. DEMO_TOKEN=$(openssl rand -base64 32)');
  return token;
}

/**
 * The default journal directory: beside the SQLite file, or data/usage-journal under the working directory
 * for a server database. Every process serving one database should share it (or a directory on the same host
 * that stays across restarts), so that the journal of a process that died is found and applied.
 */
export function usageJournalDirFor(databaseUrl: string | undefined): string {
  const file = sqliteFile(databaseUrl);
  return join(file === undefined || file === ':memory:' ? 'data' : dirname(file), 'usage-journal');
}

/**
 * Largest request head (request line and headers) the HTTP server reads, in bytes. Long query strings must reach
 * the service, which answers 413 with an OData body, instead of Node's bare 431; and a $filter up to
 * FILTER_MAX_LENGTH must fit percent-encoded, at up to 9 bytes a character (a 3-byte UTF-8 character, each byte
 * as %XX), beside a megabyte for the path, the other options and the headers.
 */
export function maxRequestHead(config: Pick<Config, 'maxFilterLength'>): number {
  return 1024 * 1024 + 9 * config.maxFilterLength;
}

/** The meter's settings (src/metering/meter.ts) from configuration. */
export function usageOptions(config: Config, log: (line: string) => void): MeterOptions {
  return { journalDir: config.usageJournalDir, applyEveryMs: config.usageApplyMs, log };
}

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!/^\s*-?\d+\s*$/.test(raw) || !Number.isInteger(n) || n < min || n > max) {
    throw new OperatorError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return n;
}
