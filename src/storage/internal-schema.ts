/**
 * The service's own tables, beside the dictionary's: settings (paging secret, the ModificationTimestamp
 * clock), API clients and their tokens (hashes only), usage counts per client, hour and transaction class, and
 * how far each usage journal has been applied to them, the rate-limit windows every instance shares, and the
 * webhook subscriptions (each row also the lease of the instance delivering its next batch: src/webhooks/).
 */
import type { ColumnSpec } from '../model/service-model';
import type { Table } from './schema-statements';

export const SETTINGS_TABLE = 'reso_server_settings';
export const CLIENTS_TABLE = 'reso_clients';
export const TOKENS_TABLE = 'reso_tokens';
export const USAGE_TABLE = 'reso_usage';
export const USAGE_JOURNALS_TABLE = 'reso_usage_journals';
export const RATE_WINDOWS_TABLE = 'reso_rate_windows';
export const WEBHOOKS_TABLE = 'reso_webhooks';

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
  {
    name: WEBHOOKS_TABLE,
    columns: [
      string('subscription_id', 64),
      string('client_id', 64),
      text('url'),
      /** The consumer's bearer token, sent with each POST (so kept as given; never printed back in full). */
      text('token'),
      /** The EntityEventSource header's value: the feed's name for the consumer. */
      string('source', 255),
      /** The sequence of the last event delivered (acknowledged with a 2xx); the next batch starts after it. */
      integer('cursor'),
      /** active | paused */
      string('state', 16),
      /** Consecutive failed deliveries (a 429 is not one). */
      integer('failures'),
      text('last_error', true),
      string('last_success', 24, true),
      /** Not before this time (ms since the epoch) is the next batch tried: backoff and Retry-After. */
      integer('next_attempt'),
      /** When an instance first found events waiting after the cursor (ms since the epoch); null when it last caught up. */
      integer('waiting_since', true),
      /** The instance delivering a batch now, and until when its claim holds (ms since the epoch). */
      string('lease_owner', 128, true),
      integer('lease_until', true),
      /** Moves with every claim and every outcome: a claim is an update conditioned on the version it read. */
      integer('version'),
      string('created_at', 24),
    ],
    primaryKey: ['subscription_id'],
    indexes: [],
  },
];
