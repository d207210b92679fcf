/**
 * How the command line ends: the one line an operator reads when a command or the server cannot start, with its exit
 * code (errors/operator-error.ts). A misconfiguration is named with what to do about it; a stack trace is never printed.
 */
import { sqliteFile } from '../storage/db/open-database';
import { ServiceError } from '../errors/catalogue';
import { MigrationRefused } from '../storage/migrations/record-migration';
import { DatabaseFolderMissing, DatabaseUnavailable } from '../storage/db/errors';
import { NewerSchema, SchemaMismatch } from '../storage/migrations/schema-migrator';
import { ExitCode, ExitCodeValue, OperatorError } from '../errors/operator-error';

/** What the failure was about, to name it in the line. */
export interface FailureContext {
  readonly databaseUrl?: string;
  readonly port?: number;
}

/** The one line to print for a failure and the code to exit with. */
export function explainFailure(e: unknown, context: FailureContext = {}): { line: string; code: ExitCodeValue } {
  if (e instanceof OperatorError) return { line: e.message, code: e.exitCode };
  if (e instanceof DatabaseFolderMissing) return { line: e.message, code: ExitCode.database };
  if (e instanceof MigrationRefused || e instanceof NewerSchema || e instanceof SchemaMismatch) return { line: e.message, code: ExitCode.migrationRefused };
  // The catalogue's errors refuse what the operator asked (a scope that does not parse, a client that exists).
  if (e instanceof ServiceError) return { line: e.message, code: ExitCode.usage };
  const database = databaseLine(e, context.databaseUrl);
  if (database) return { line: database, code: ExitCode.database };
  const listen = listenLine(e, context.port);
  if (listen) return { line: listen, code: ExitCode.listen };
  const message = String((e as Error)?.message ?? e).split('\n')[0];
  return { line: message, code: ExitCode.failure };
}

function databaseLine(e: unknown, url: string | undefined): string | undefined {
  const cause = e instanceof DatabaseUnavailable ? e.cause ?? e : e;
  const code = (cause as { code?: unknown })?.code ?? (e instanceof DatabaseUnavailable ? e.reason : undefined);
  if (typeof code !== 'string') return undefined;
  const file = sqliteFile(url);
  if (file !== undefined) {
    if (code.startsWith('SQLITE_CANTOPEN')) {
      return `cannot open the SQLite file ${file} (${code}): check that the path names a file (not a folder) in a folder this user may write, or correct DATABASE_URL`;
    }
    if (/^SQLITE_(NOTADB|CORRUPT)/.test(code)) return (e as DatabaseUnavailable).explanation ?? `${file}: ${code}`;
    return undefined;
  }
  const server = serverOf(url);
  switch (code) {
    case 'ER_BAD_DB_ERROR':
      return `the database "${server.database}" does not exist on ${server.host}: create it first `
        + `(CREATE DATABASE \`${server.database}\` CHARACTER SET utf8mb4;), then start again; the server creates its tables itself`;
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_DBACCESS_DENIED_ERROR':
      return `${server.host} refused the login of "${server.user}" (${code}): correct the user or password in DATABASE_URL, `
        + `or grant it access to "${server.database}"`;
    case 'ECONNREFUSED': case 'ENOTFOUND': case 'EAI_AGAIN': case 'ETIMEDOUT': case 'EHOSTUNREACH': case 'ENETUNREACH':
      return `cannot reach the database server at ${server.host} (${code}): start it, or correct the host and port in DATABASE_URL`;
    default:
      return undefined;
  }
}

function serverOf(url: string | undefined): { host: string; user: string; database: string } {
  try {
    const u = new URL(url ?? '');
    return { host: u.host || 'localhost:3306', user: decodeURIComponent(u.username), database: decodeURIComponent(u.pathname.slice(1)) };
  } catch {
    return { host: 'the database server', user: '', database: '' };
  }
}

function listenLine(e: unknown, port: number | undefined): string | undefined {
  const code = (e as { code?: unknown; syscall?: unknown })?.code;
  // A cluster's worker hears of its primary's failed bind.
  if (!['listen', 'bind'].includes(String((e as { syscall?: unknown })?.syscall))) return undefined;
  if (code === 'EADDRINUSE') {
    return `port ${port} is already in use (another reso-server, or another service): stop it, or set PORT to a free port (PORT=${(port ?? 8080) + 1})`;
  }
  if (code === 'EACCES') return `this user may not listen on port ${port} (EACCES): ports below 1024 need privileges; set PORT=8080 and proxy to it`;
  if (code === 'EADDRNOTAVAIL') return `cannot listen on this address (EADDRNOTAVAIL): correct HOST`;
  return undefined;
}
