/**
 * The service's own tables, beside the dictionary's: settings (paging secret, the ModificationTimestamp
 * clock), API clients and their tokens (hashes only), usage counts per client, hour and transaction class, and
 * how far each usage journal has been applied to them.
 */
import type { Knex } from 'knex';
import { createIfAbsent } from './create-if-absent';

export const SETTINGS_TABLE = 'reso_server_settings';
export const CLIENTS_TABLE = 'reso_clients';
export const TOKENS_TABLE = 'reso_tokens';
export const USAGE_TABLE = 'reso_usage';
export const USAGE_JOURNALS_TABLE = 'reso_usage_journals';

/** `collation`: the MariaDB/MySQL collation of the other tables; undefined on SQLite. */
export async function createInternalTables(k: Knex, collation: string | undefined): Promise<void> {
  const create = async (name: string, build: (t: Knex.CreateTableBuilder) => void) => {
    await createIfAbsent(() => k.schema.hasTable(name), () => k.schema.createTable(name, (t) => {
      if (collation) { t.charset('utf8mb4'); t.collate(collation); }
      build(t);
    }));
  };
  await create(SETTINGS_TABLE, (t) => {
    t.string('name', 64).primary();
    t.text('value').notNullable();
  });
  await create(CLIENTS_TABLE, (t) => {
    t.string('client_id', 64).primary();
    t.string('name', 255).notNullable();
    /** scrypt$<salt>$<hash> */
    t.string('secret_hash', 255).notNullable();
    /** OData filter on Property limiting the listings the client may see; null: all. */
    t.text('scope');
    /** JSON array of field names the client may not see. */
    t.text('hidden_fields').notNullable();
    /** Requests per minute; null: unlimited. */
    t.integer('rate_limit');
    t.boolean('admin').notNullable();
    t.string('created_at', 24).notNullable();
    t.string('revoked_at', 24);
  });
  await create(TOKENS_TABLE, (t) => {
    /** SHA-256 of the token, base64url. */
    t.string('token_hash', 64).primary();
    t.string('client_id', 64).notNullable().index('ix_reso_tokens_client');
    /** null: a static (long-lived) token. */
    t.string('expires_at', 24);
    t.string('created_at', 24).notNullable();
  });
  await create(USAGE_TABLE, (t) => {
    t.string('client_id', 64).notNullable();
    /** UTC hour, `YYYY-MM-DDTHH`. */
    t.string('hour', 13).notNullable();
    /** A (fetch by key) or B (query). */
    t.string('class', 1).notNullable();
    t.bigInteger('count').notNullable();
    t.primary(['client_id', 'hour', 'class']);
  });
  await create(USAGE_JOURNALS_TABLE, (t) => {
    /** A usage journal file's id (src/metering/journal.ts). */
    t.string('journal_id', 64).primary();
    /** The last entry of the journal added to the usage table: entries up to it are never added again. */
    t.bigInteger('applied_seq').notNullable();
  });
}
