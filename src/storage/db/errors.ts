/** The database cannot answer right now (down, unreachable, stalled, locked, damaged); the request may be retried. */
export class DatabaseUnavailable extends Error {
  constructor(readonly reason: string, readonly cause?: unknown) {
    super(`database unavailable (${reason})`);
  }

  /**
   * Will not go away by waiting: the file cannot be opened at all (its folder is unwritable, it is a folder, …).
   * A start that meets it stops with a line saying so instead of answering 503 for ever.
   */
  get permanent(): boolean {
    return this.reason.startsWith('SQLITE_CANTOPEN');
  }

  /** What an operator reads in the log about it. */
  get explanation(): string {
    if (/^SQLITE_(NOTADB|CORRUPT)/.test(this.reason)) {
      return `the database file is not a SQLite database or is damaged (${this.reason}): restore it, or point DATABASE_URL at another file`;
    }
    if (/^SQLITE_(BUSY|LOCKED)/.test(this.reason)) return `the database file is locked by another process (${this.reason})`;
    if (/^ER_LOCK/.test(this.reason)) return `the database is busy: another transaction holds a lock this one needs (${this.reason})`;
    return `the database is not reachable (${this.reason})`;
  }
}

/**
 * A scan (a read whose statement may visit every row: a filter or order on a field without an index) ran past the
 * time one statement is given, and was stopped: by MariaDB's max_statement_time (MySQL's max_execution_time), or on
 * SQLite by the scan thread's deadline. Not a fault of the database: the same query would take as long again.
 */
export class ScanTimedOut extends Error {
  constructor(readonly ms: number) {
    super(`the scan took longer than ${ms} ms`);
  }
}

/** Server error numbers of a statement stopped at its time limit (MariaDB 1969, MySQL 3024). */
export function isStatementTimeout(e: unknown): boolean {
  const cause = e instanceof DatabaseUnavailable ? e.cause : e;
  const errno = (cause as { errno?: unknown } | undefined)?.errno;
  return typeof errno === 'number' && UNAVAILABLE_ERRNOS.has(errno);
}

/** The folder of DATABASE_URL's SQLite file does not exist (only the default data/ folder is created). */
export class DatabaseFolderMissing extends Error {
  constructor(readonly file: string, readonly folder: string) {
    super(`the folder ${folder} of the SQLite file ${file} does not exist: create it (mkdir -p ${folder}) or correct DATABASE_URL`);
  }
}

/** Driver error codes that mean the database, not the statement, is at fault. */
const UNAVAILABLE_CODES = new Set([
  'ER_MAX_PREPARED_STMT_COUNT_REACHED',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_CON_COUNT_ERROR', 'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT', 'ER_LOCK_DEADLOCK', 'ER_TOO_MANY_USER_CONNECTIONS', 'ER_QUERY_TIMEOUT', 'ER_STATEMENT_TIMEOUT',
  // A Galera node out of the primary component (or still joining) refuses every statement: "WSREP has not yet
  // prepared node for application use". Its instance answers 503 until the node is back.
  'ER_UNKNOWN_COM_ERROR',
  // A transaction's statement on such a node: "Error while appending streaming replication fragment (provider status:
  // Not connected to Primary Component)", the transaction rolled back (measured on a node that lost its quorum).
  'ER_ERROR_DURING_COMMIT',
  'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_FULL', 'SQLITE_PROTOCOL', 'SQLITE_NOTADB',
]);
/** SQLite's extended codes refine these (SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_READ, SQLITE_CORRUPT_INDEX, …). */
const UNAVAILABLE_PREFIXES = ['SQLITE_BUSY', 'SQLITE_IOERR', 'SQLITE_CORRUPT', 'SQLITE_READONLY'];
/**
 * Server error numbers mysql2 has no name for: MariaDB's max_statement_time (1969) and MySQL's
 * max_execution_time (3024) stopping a statement.
 */
const UNAVAILABLE_ERRNOS = new Set([1969, 3024]);

/** Errors that mean "the database cannot answer now" become DatabaseUnavailable (503); others pass through. */
export function classify(e: unknown): unknown {
  if (e instanceof DatabaseUnavailable) return e;
  const err = e as { code?: string; errno?: number; fatal?: boolean; name?: string };
  const code = err?.code ?? '';
  if (UNAVAILABLE_CODES.has(code) || UNAVAILABLE_PREFIXES.some((p) => code.startsWith(p))
    || UNAVAILABLE_ERRNOS.has(err?.errno ?? 0) || err?.fatal) {
    return new DatabaseUnavailable(code || (err?.errno ? `errno ${err.errno}` : err?.name) || 'unknown', e);
  }
  return e;
}

/** SQLite could not take a lock (another connection or process holds it): worth trying again shortly. */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
