/**
 * Schema steps that several instances starting together on one database may take at once. Each creates what is
 * absent; an instance whose create fails because another instance created the same thing meanwhile takes it as
 * done (the name now exists), and any other failure stands.
 */

const EXISTS_CODES = new Set(['ER_TABLE_EXISTS_ERROR', 'ER_DUP_FIELDNAME', 'ER_DUP_KEYNAME']);

/** The create failed because the table, column or index is there now (MariaDB's codes; SQLite's messages). */
export function alreadyExists(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | undefined;
  return EXISTS_CODES.has(err?.code ?? '') || /already exists|duplicate column name/i.test(err?.message ?? '');
}

/** Runs `create` unless `exists()`; returns whether this call created it. */
export async function createIfAbsent(exists: () => Promise<boolean>, create: () => Promise<unknown>): Promise<boolean> {
  if (await exists()) return false;
  try {
    await create();
    return true;
  } catch (e) {
    if (alreadyExists(e) && (await exists())) return false;
    throw e;
  }
}
