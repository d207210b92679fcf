/**
 * The service's own tables, beside the dictionary's: settings (paging secret, the ModificationTimestamp
 * clock), API clients and their tokens (hashes only), usage counts per client, hour and transaction class, and
 * how far each usage journal has been applied to them, and the rate-limit windows every instance shares.
 */
import type { ColumnSpec } from '../model/service-model';
import type { Table } from './schema-statements';

export const SETTINGS_TABLE = 'reso_server_settings';
export const CLIENTS_TABLE = 'reso_clients';
export const TOKENS_TABLE = 'reso_tokens';
export const USAGE_TABLE = 'reso_usage';
export const USAGE_JOURNALS_TABLE = 'reso_usage_journals';
export const RATE_WINDOWS_TABLE = 'reso_rate_windows';

const text = (name: string, nullable = false): ColumnSpec => ({ name, type: 'text', nullable });
const string = (name: string, length: number, nullable = false): ColumnSpec => ({ name, type: 'string', length, nullable });
const integer = (name: string, nullable = false): ColumnSpec => ({ name, type: 'integer', nullable });

export const INTERNAL_TABLES: readonly Table[] = [
  {
    name: SETTINGS_TABLE,
    columns: [string('name', 64), text('value')],
    primaryKey: ['name'],
    indexes: [],
  },
  {
    name: CLIENTS_TABLE,
    columns: [
      string('client_id', 64),
      string('name', 255),
      /** scrypt$<salt>$<hash> */
      string('secret_hash', 255),
      /** OData filter on Property limiting the listings the client may see; null: all. */
      text('scope', true),
      /** JSON array of field names the client may not see. */
      text('hidden_fields'),
      /** Requests per minute; null: unlimited. */
      integer('rate_limit', true),
      { name: 'admin', type: 'boolean', nullable: false },
      string('created_at', 24),
      string('revoked_at', 24, true),
      /** The ModificationTimestamp at which an operator last changed the scope (replication marks before it are refused). */
      string('scope_epoch', 24, true),
    ],
    primaryKey: ['client_id'],
    indexes: [],
  },
  {
    name: TOKENS_TABLE,
    columns: [
      /** SHA-256 of the token, base64url. */
      string('token_hash', 64),
      string('client_id', 64),
      /** null: a static (long-lived) token. */
      string('expires_at', 24, true),
      string('created_at', 24),
    ],
    primaryKey: ['token_hash'],
    indexes: [{ name: 'ix_reso_tokens_client', columns: ['client_id'] }],
  },
  {
    name: USAGE_TABLE,
    columns: [
      string('client_id', 64),
      /** UTC hour, `YYYY-MM-DDTHH`. */
      string('hour', 13),
      /** A (fetch by key) or B (query). */
      string('class', 1),
      integer('count'),
    ],
    primaryKey: ['client_id', 'hour', 'class'],
    indexes: [],
  },
  {
    name: USAGE_JOURNALS_TABLE,
    columns: [
      /** A usage journal file's id (src/metering/journal.ts). */
      string('journal_id', 64),
      /** The last entry of the journal added to the usage table: entries up to it are never added again. */
      integer('applied_seq'),
    ],
    primaryKey: ['journal_id'],
    indexes: [],
  },
  {
    name: RATE_WINDOWS_TABLE,
    columns: [
      string('client_id', 64),
      /** The record's version; the highest is current (metering/rate-limit.ts). */
      integer('version'),
      /** What the window allowed, per second (metering/sliding-window.ts). */
      text('state'),
    ],
    primaryKey: ['client_id', 'version'],
    indexes: [],
  },
];
