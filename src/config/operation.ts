/**
 * Settings for running the service in production: where it listens, its logs and metrics, compression and CORS.
 * Read with the rest of the configuration (config.ts); every setting is documented in docs/configuration.md.
 */

export type LogFormat = 'json' | 'pretty';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface OperationConfig {
  /** The address the HTTP server binds: loopback by default; `0.0.0.0` (or `::`) for every interface. */
  host: string;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /**
   * A port of its own for `/metrics`, without a token, bound to `metricsHost`; unset, `/metrics` is on the
   * service's port for admin clients only.
   */
  metricsPort?: number;
  metricsHost: string;
  /** gzip and brotli by Accept-Encoding. */
  compression: boolean;
  /** Origins browsers may call the API from (CORS); empty: CORS is off. `*` allows any origin. */
  corsOrigins: readonly string[];
}

/** `terminal`: standard output is a terminal, where a person reads the lines (pretty by default, not JSON). */
export function operationConfigFromEnv(env: NodeJS.ProcessEnv, terminal = process.stdout.isTTY === true): OperationConfig {
  const metricsPort = env.METRICS_PORT ? Number(env.METRICS_PORT) : undefined;
  if (metricsPort !== undefined && (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535)) {
    throw new Error(`METRICS_PORT must be an integer from 0 to 65535 (got "${env.METRICS_PORT}")`);
  }
  return {
    host: env.HOST || '127.0.0.1',
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['json', 'pretty'] as const, terminal ? 'pretty' : 'json'),
    metricsPort,
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    compression: oneOf(env, 'COMPRESSION', ['on', 'off'] as const, 'on') === 'on',
    corsOrigins: (env.CORS_ORIGINS ?? '').split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean),
  };
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.toLowerCase() as T;
  if (!values.includes(v)) throw new Error(`${name} must be one of ${values.join(', ')} (got "${raw}")`);
  return v;
}

/**
 * A bound address as a URL's host: a wildcard address becomes `localhost` (the server answers there too), an
 * IPv6 address goes in brackets.
 */
export function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}
