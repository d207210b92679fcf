/**
 * The service's own tables, beside the dictionary's: settings (paging secret, the ModificationTimestamp
 * clock), API clients and their tokens (hashes only), usage counts per client, hour and transaction class, and
 * how far each usage journal has been applied to them, the rate-limit windows every instance shares, and the
 * webhook subscriptions (each row also the lease of the instance delivering its next batch: src/webhooks/).
 * Their columns are declared where they are created: settings-table.ts, and migrations/service-migrations.ts.
 */
export const SETTINGS_TABLE = 'reso_server_settings';
export const CLIENTS_TABLE = 'reso_clients';
export const TOKENS_TABLE = 'reso_tokens';
export const USAGE_TABLE = 'reso_usage';
export const USAGE_JOURNALS_TABLE = 'reso_usage_journals';
export const RATE_WINDOWS_TABLE = 'reso_rate_windows';
export const WEBHOOKS_TABLE = 'reso_webhooks';
/** Upstreams `reso-server pull` replicates (each row also the lease of the one puller active for it: src/pull/). */
export const PULLS_TABLE = 'reso_pulls';
/** How far each upstream's set has been pulled, per strategy; written in the transaction of the records it covers. */
export const PULL_CHECKPOINTS_TABLE = 'reso_pull_checkpoints';
/** Which upstream wrote each pulled record, with the upstream's own change timestamp of it. */
export const PULL_RECORDS_TABLE = 'reso_pull_records';
