/**
 * Schema steps that several instances starting together on one database may take at once (schema.ts). A
 * create that fails because another instance created the same table, column or index meanwhile is done;
 * any other failure stands.
 */
import type { Executor } from './database';

const EXISTS_CODES = new Set(['ER_TABLE_EXISTS_ERROR', 'ER_DUP_FIELDNAME', 'ER_DUP_KEYNAME']);

/** The create failed because the table, column or index is there now (MariaDB's codes; SQLite's messages). */
export function alreadyExists(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | undefined;
  return EXISTS_CODES.has(err?.code ?? '') || /already exists|duplicate column name/i.test(err?.message ?? '');
}

/** Runs a create statement; returns whether this call created the thing (false: another instance did). */
export async function runUnlessExists(ex: Executor, statement: string): Promise<boolean> {
  try {
    await ex.run(statement);
    return true;
  } catch (e) {
    if (alreadyExists(e)) return false;
    throw e;
  }
}
