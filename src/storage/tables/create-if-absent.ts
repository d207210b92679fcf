/**
 * A create that several instances starting together may try at once (the settings table, before the start-up
 * lock exists): one that fails because another instance created the same table meanwhile is done; any other
 * failure stands.
 */
const EXISTS_CODES = new Set(['ER_TABLE_EXISTS_ERROR', 'ER_DUP_FIELDNAME', 'ER_DUP_KEYNAME']);

/** The create failed because the table, column or index is there now (MariaDB's codes; SQLite's messages). */
export function alreadyExists(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | undefined;
  return EXISTS_CODES.has(err?.code ?? '') || /already exists|duplicate column name/i.test(err?.message ?? '');
}
