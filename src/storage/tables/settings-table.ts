/**
 * The settings table, created by every instance before anything else if it is absent: it holds the start-up
 * lock (startup-lock.ts) under which one instance runs the migrations, so it cannot be one of them. Several
 * instances starting at once may all try; one creates it and the others find it there.
 */
import type { Knex } from 'knex';
import type { Database } from '../db/database';
import { alreadyExists } from './create-if-absent';
import { SETTINGS_TABLE } from './internal-schema';
import { NO_PAD_BINARY_COLLATION } from '../sql/mysql-dialect';

export async function ensureSettingsTable(db: Database): Promise<void> {
  await db.schemaWork(async (knex) => {
    if (await knex.schema.hasTable(SETTINGS_TABLE)) return;
    const collation = db.dialect.name === 'mysql' ? await binaryCollation(knex) : undefined;
    try {
      await knex.schema.createTable(SETTINGS_TABLE, (t) => {
        t.string('name', 64).notNullable();
        t.text('value', 'mediumtext').notNullable();
        t.primary(['name']);
        if (!collation) return;
        t.charset('utf8mb4');
        t.collate(collation);
      });
    } catch (e) {
      if (!alreadyExists(e)) throw e;
    }
  });
}

async function binaryCollation(knex: Knex): Promise<string> {
  const [rows] = (await knex.raw(`SELECT ${NO_PAD_BINARY_COLLATION} AS c`)) as [{ c: string }[]];
  return rows[0].c;
}
