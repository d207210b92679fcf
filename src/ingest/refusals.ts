/**
 * Which database errors refuse a batch's data rather than say the database cannot answer: a value too long
 * or out of range for its column, a constraint or trigger the operator's database enforces. Retried in smaller
 * batches, such an error comes back with the one line that causes it; anything else (the database away, a lock
 * wait, a fault in a statement) fails the ingest as before. The drivers' codes are read here because only
 * ingest splits its work on them; storage passes them through unchanged (storage/errors.ts `classify`).
 */

/** MariaDB/MySQL errors about the row's values, by server error number. */
const REFUSING_ERRNOS = new Set([
  1048, // ER_BAD_NULL_ERROR: a NOT NULL column given null
  1062, // ER_DUP_ENTRY: a unique index already holds the value
  1264, // ER_WARN_DATA_OUT_OF_RANGE
  1265, // WARN_DATA_TRUNCATED
  1292, // ER_TRUNCATED_WRONG_VALUE: a date or number the column cannot take
  1364, // ER_NO_DEFAULT_FOR_FIELD
  1366, // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: text the column's character set cannot hold
  1406, // ER_DATA_TOO_LONG
  1451, 1452, // a foreign key the operator added
  1644, // ER_SIGNAL_EXCEPTION: a trigger's SIGNAL
  3140, // ER_INVALID_JSON_TEXT
  3819, // MySQL's ER_CHECK_CONSTRAINT_VIOLATED
  4025, // MariaDB's ER_CONSTRAINT_FAILED (CHECK)
]);

/** SQLite's result codes about the row's values (extended codes refine them: SQLITE_CONSTRAINT_NOTNULL, …). */
const REFUSING_SQLITE_PREFIXES = ['SQLITE_CONSTRAINT', 'SQLITE_TOOBIG', 'SQLITE_MISMATCH'];

/** The database's own words when `e` refuses the data written, with its code; undefined for any other failure. */
export function refusalOf(e: unknown): string | undefined {
  const err = e as { code?: unknown; errno?: unknown; sqlMessage?: unknown; message?: unknown; fatal?: unknown } | undefined;
  if (!err || typeof err !== 'object' || err.fatal) return undefined;
  const code = typeof err.code === 'string' ? err.code : undefined;
  const refused = (typeof err.errno === 'number' && typeof err.sqlMessage === 'string' && REFUSING_ERRNOS.has(err.errno))
    || (code !== undefined && REFUSING_SQLITE_PREFIXES.some((p) => code.startsWith(p)));
  if (!refused) return undefined;
  const words = String(err.sqlMessage ?? err.message ?? '').split('\n')[0];
  return code ? `${code}: ${words}` : words;
}
