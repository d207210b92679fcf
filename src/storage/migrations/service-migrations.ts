/**
 * The service's own tables (internal-schema.ts names them), as versioned migrations written by hand: a change
 * to them in a later release is a new migration at the end of this list, never an edit of one that has run.
 * The settings table is not among them: it holds the start-up lock under which migrations run, so every
 * instance creates it, if absent, before taking the lock (settings-table.ts).
 */
import type { Knex } from 'knex';
import type { DictionaryMigration, MigrationStorage } from '../../model/migration';
import {
  CLIENTS_TABLE, PULL_CHECKPOINTS_TABLE, PULL_RECORDS_TABLE, PULLS_TABLE, RATE_WINDOWS_TABLE, TOKENS_TABLE, USAGE_JOURNALS_TABLE,
  USAGE_TABLE, WEBHOOKS_TABLE,
} from '../tables/internal-schema';

/** Timestamps are fixed-width UTC text (`YYYY-MM-DDTHH:mm:ss.sssZ`), as in the dictionary's tables. */
const TIMESTAMP = 24;

const ownTables: DictionaryMigration = {
  name: '0001-own-tables',
  changes: ['the service\'s own tables: clients, tokens, usage, usage journals, rate windows, webhook subscriptions'],
  steps: (knex, storage) => [clients, tokens, usage, usageJournals, rateWindows, webhooks].map((table) => table(knex, storage)),
};

function clients(knex: Knex, storage: MigrationStorage): Knex.SchemaBuilder {
  return knex.schema.createTable(CLIENTS_TABLE, (t) => {
    t.string('client_id', 64).notNullable();
    t.string('name', 255).notNullable();
    /** scrypt$<salt>$<hash> */
    t.string('secret_hash', 255).notNullable();
    /** OData filter on the listings limiting what the client may see; null: all. */
    t.text('scope', 'mediumtext');
    /** JSON array of field names the client may not see. */
    t.text('hidden_fields', 'mediumtext').notNullable();
    /** Requests per minute; null: unlimited. */
    t.bigInteger('rate_limit');
    t.boolean('admin').notNullable();
    t.string('created_at', TIMESTAMP).notNullable();
    t.string('revoked_at', TIMESTAMP);
    /** The ModificationTimestamp at which an operator last changed the scope (replication marks before it are refused). */
    t.string('scope_epoch', TIMESTAMP);
    t.primary(['client_id']);
    storage.tableOptions(t);
  });
}

function tokens(knex: Knex, storage: MigrationStorage): Knex.SchemaBuilder {
  return knex.schema.createTable(TOKENS_TABLE, (t) => {
    /** SHA-256 of the token, base64url. */
    t.string('token_hash', 64).notNullable();
    t.string('client_id', 64).notNullable();
    /** null: a static (long-lived) token. */
    t.string('expires_at', TIMESTAMP);
    t.string('created_at', TIMESTAMP).notNullable();
    t.primary(['token_hash']);
    t.index(['client_id'], 'ix_reso_tokens_client');
    storage.tableOptions(t);
  });
}

function usage(knex: Knex, storage: MigrationStorage): Knex.SchemaBuilder {
  return knex.schema.createTable(USAGE_TABLE, (t) => {
    t.string('client_id', 64).notNullable();
    /** UTC hour, `YYYY-MM-DDTHH`. */
    t.string('hour', 13).notNullable();
    /** A (fetch by key) or B (query). */
    t.string('class', 1).notNullable();
    t.bigInteger('count').notNullable();
    t.primary(['client_id', 'hour', 'class']);
    storage.tableOptions(t);
  });
}

function usageJournals(knex: Knex, storage: MigrationStorage): Knex.SchemaBuilder {
  return knex.schema.createTable(USAGE_JOURNALS_TABLE, (t) => {
    /** A usage journal file's id (src/metering/journal.ts). */
    t.string('journal_id', 64).notNullable();
    /** The last entry of the journal added to the usage table: entries up to it are never added again. */
    t.bigInteger('applied_seq').notNullable();
    t.primary(['journal_id']);
    storage.tableOptions(t);
  });
}

function rateWindows(knex: Knex, storage: MigrationStorage): Knex.SchemaBuilder {
  return knex.schema.createTable(RATE_WINDOWS_TABLE, (t) => {
    t.string('client_id', 64).notNullable();
    /** The record's version; the highest is current (metering/rate-limit.ts). */
    t.bigInteger('version').notNullable();
    /** What the window allowed, per second (metering/rate-limit.ts). */
    t.text('state', 'mediumtext').notNullable();
    t.primary(['client_id', 'version']);
    storage.tableOptions(t);
  });
}

function webhooks(knex: Knex, storage: MigrationStorage): Knex.SchemaBuilder {
  return knex.schema.createTable(WEBHOOKS_TABLE, (t) => {
    t.string('subscription_id', 64).notNullable();
    t.string('client_id', 64).notNullable();
    t.text('url', 'mediumtext').notNullable();
    /** The consumer's bearer token, sent with each POST (kept as given; never printed back in full). */
    t.text('token', 'mediumtext').notNullable();
    /** The EntityEventSource header's value: the feed's name for the consumer. */
    t.string('source', 255).notNullable();
    /** The sequence of the last event delivered (acknowledged with a 2xx); the next batch starts after it. */
    t.bigInteger('cursor').notNullable();
    /** active | paused */
    t.string('state', 16).notNullable();
    /** Consecutive failed deliveries (a 429 is not one). */
    t.bigInteger('failures').notNullable();
    t.text('last_error', 'mediumtext');
    t.string('last_success', TIMESTAMP);
    /** Not before this time (ms since the epoch) is the next batch tried: backoff and Retry-After. */
    t.bigInteger('next_attempt').notNullable();
    /** When an instance first found events waiting after the cursor (ms since the epoch); null when it last caught up. */
    t.bigInteger('waiting_since');
    /** The instance delivering a batch now, and until when its claim holds (ms since the epoch). */
    t.string('lease_owner', 128);
    t.bigInteger('lease_until');
    /** Moves with every claim and every outcome: a claim is an update conditioned on the version it read. */
    t.bigInteger('version').notNullable();
    t.string('created_at', TIMESTAMP).notNullable();
    t.primary(['subscription_id']);
    storage.tableOptions(t);
  });
}

const pullTables: DictionaryMigration = {
  name: '0002-pull-tables',
  changes: ['reso-server pull: upstreams, their checkpoints, and which upstream wrote each pulled record'],
  steps: (knex, storage) => [pulls, pullCheckpoints, pullRecords].map((table) => table(knex, storage)),
};

function pulls(knex: Knex, storage: MigrationStorage): Knex.SchemaBuilder {
  return knex.schema.createTable(PULLS_TABLE, (t) => {
    t.string('name', 64).notNullable();
    /** The upstream's service root. */
    t.text('base_url', 'mediumtext').notNullable();
    /** JSON: how the puller authenticates (secrets kept as given, since they are sent; never printed back). */
    t.text('auth', 'mediumtext').notNullable();
    /** JSON: the sets pulled, each with the local set it fills and its upstream filter. */
    t.text('sets', 'mediumtext').notNullable();
    t.bigInteger('page_size').notNullable();
    /** Requests per second the upstream allows (as text: a fraction is allowed). */
    t.string('request_rate', 32).notNullable();
    /** Seconds re-read before the checkpoint's timestamp on every walk. */
    t.bigInteger('overlap_seconds').notNullable();
    /** auto | timestamp | events: how changes are found (auto: events when the upstream declares its event set). */
    t.string('strategy', 16).notNullable();
    /** active | paused | stopped (a refused credential: resumed by the operator). */
    t.string('state', 16).notNullable();
    t.text('last_error', 'mediumtext');
    /** When a walk last reached the upstream's end (ms since the epoch): the lag is measured from it. */
    t.bigInteger('caught_up_at');
    t.bigInteger('records_pulled').notNullable();
    /** JSON: upstream faults seen, counted by kind (rate-limited, server-error, …), retried ones included. */
    t.text('faults', 'mediumtext').notNullable();
    /** The puller active for this upstream, and until when its claim holds (ms since the epoch). */
    t.string('lease_owner', 128);
    t.bigInteger('lease_until');
    t.bigInteger('version').notNullable();
    t.string('created_at', TIMESTAMP).notNullable();
    t.primary(['name']);
    storage.tableOptions(t);
  });
}

function pullCheckpoints(knex: Knex, storage: MigrationStorage): Knex.SchemaBuilder {
  return knex.schema.createTable(PULL_CHECKPOINTS_TABLE, (t) => {
    t.string('upstream', 64).notNullable();
    /** The local set. */
    t.string('set_name', 128).notNullable();
    /** timestamp | events | reconciled */
    t.string('strategy', 32).notNullable();
    /** The strategy's position (an upstream timestamp, an event sequence), as text. */
    t.string('position', 255).notNullable();
    t.string('updated_at', TIMESTAMP).notNullable();
    t.primary(['upstream', 'set_name', 'strategy']);
    storage.tableOptions(t);
  });
}

function pullRecords(knex: Knex, storage: MigrationStorage): Knex.SchemaBuilder {
  return knex.schema.createTable(PULL_RECORDS_TABLE, (t) => {
    t.string('set_name', 128).notNullable();
    /** The record's key as JSON (a string key quoted, a number bare). */
    t.string('record_key', 255).notNullable();
    /** The upstream that last wrote the record: only its reconciliation and removals touch it. */
    t.string('upstream', 64).notNullable();
    /** The upstream's own change timestamp of the record (the local one is the service's). */
    t.string('upstream_timestamp', 64);
    t.primary(['set_name', 'record_key']);
    t.index(['upstream', 'set_name', 'record_key'], 'ix_reso_pull_records_upstream');
    storage.tableOptions(t);
  });
}

/** Oldest first. */
export const SERVICE_MIGRATIONS: readonly DictionaryMigration[] = [ownTables, pullTables];
