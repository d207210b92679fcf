/**
 * One upstream as the operator configured it (`reso-server pull add`): what is checked when it is added, how it
 * is stored (storage/tables/pull-table.ts) and how it is shown, its secrets masked.
 */
import type { ServiceModel } from '../model/service-model';
import type { PullRow } from '../storage/tables/pull-table';
import type { UpstreamAuth } from './upstream';

/** One set pulled: its name upstream, the local set it fills, and the upstream filter that narrows it. */
export interface PulledSet {
  readonly upstream: string;
  readonly local: string;
  readonly filter?: string;
}

export interface PullSettings {
  readonly name: string;
  readonly baseUrl: string;
  readonly auth: UpstreamAuth;
  readonly sets: readonly PulledSet[];
  readonly pageSize: number;
  readonly requestsPerSecond: number;
  /** Seconds re-read before the checkpoint's timestamp on every walk (an upstream whose commits land out of order). */
  readonly overlapSeconds: number;
  /** How changes are found: by timestamp, by the upstream's EntityEvent log, or (auto) the log when it declares one. */
  readonly strategy: Strategy;
}

export const STRATEGIES = ['auto', 'timestamp', 'events'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** Input the operator must correct; the message is one line. */
export class PullInvalid extends Error {}

/** A run that could not finish (a fault upstream, a stopped or paused upstream, a lease held too long); one line. */
export class PullFailed extends Error {}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Refuses settings that could never pull: a bad name or URL, a set the local dictionary lacks, a nonsensical number. */
export function checkSettings(settings: PullSettings, model: ServiceModel): void {
  if (!NAME.test(settings.name)) throw new PullInvalid(`upstream name "${settings.name}": letters, digits, _ . - (at most 64), starting with a letter or digit`);
  if (!isHttpUrl(settings.baseUrl)) throw new PullInvalid(`--url "${settings.baseUrl}" is not an http or https URL`);
  if (settings.auth.kind === 'client-credentials' && !isHttpUrl(settings.auth.tokenUrl)) {
    throw new PullInvalid(`--token-url "${settings.auth.tokenUrl}" is not an http or https URL`);
  }
  if (settings.sets.length === 0) throw new PullInvalid('name at least one set to pull (--set Set or --set UpstreamSet:LocalSet)');
  for (const s of settings.sets) {
    if (!model.entitySets.some((e) => e.name === s.local)) {
      throw new PullInvalid(`no local set ${s.local}; sets: ${model.entitySets.map((e) => e.name).join(', ')}`);
    }
  }
  const locals = settings.sets.map((s) => s.local);
  if (new Set(locals).size !== locals.length) throw new PullInvalid('two upstream sets fill the same local set');
  if (!(settings.requestsPerSecond > 0)) throw new PullInvalid('--rate must be a number of requests per second above 0');
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `Upstream:Local` or `Set` (the same name on both sides), with an optional filter for it. */
export function pulledSet(spec: string, filters: ReadonlyMap<string, string>): PulledSet {
  const [upstream, local = upstream, ...rest] = spec.split(':').map((p) => p.trim());
  if (!upstream || !local || rest.length) throw new PullInvalid(`--set "${spec}": expected Set or UpstreamSet:LocalSet`);
  const filter = filters.get(upstream) ?? filters.get(local);
  return filter ? { upstream, local, filter } : { upstream, local };
}

export function settingsOf(row: PullRow): PullSettings {
  return {
    name: row.name, baseUrl: row.base_url, auth: JSON.parse(row.auth) as UpstreamAuth, sets: JSON.parse(row.sets) as PulledSet[],
    pageSize: row.page_size, requestsPerSecond: Number(row.request_rate), overlapSeconds: row.overlap_seconds, strategy: row.strategy as Strategy,
  };
}

export function rowOf(settings: PullSettings, now: string): PullRow {
  return {
    name: settings.name, base_url: settings.baseUrl, auth: JSON.stringify(settings.auth), sets: JSON.stringify(settings.sets),
    page_size: settings.pageSize, request_rate: String(settings.requestsPerSecond), overlap_seconds: settings.overlapSeconds, strategy: settings.strategy,
    state: 'active', last_error: null, caught_up_at: null, records_pulled: 0, faults: '{}', lease_owner: null, lease_until: null, version: 0, created_at: now,
  };
}

/** A secret as shown: its last four characters, never more than a quarter of it. */
export function masked(secret: string): string {
  const shown = secret.length >= 16 ? secret.slice(-4) : '';
  return `****${shown}`;
}

/** The authentication as `list` and `show` print it. */
/** A base URL as `list`, `show`, the admin API and the console show it: credentials in it and the values of its query masked. */
export function maskedUrl(text: string): string {
  const url = new URL(text);
  if (url.username || url.password) [url.username, url.password] = ['…', ''];
  for (const name of [...new Set(url.searchParams.keys())]) url.searchParams.set(name, '…');
  return url.toString();
}

export function maskedAuth(auth: UpstreamAuth): Record<string, string> {
  switch (auth.kind) {
    case 'none': return { kind: 'none' };
    case 'bearer': return { kind: 'bearer', token: masked(auth.token) };
    case 'client-credentials':
      return { kind: 'client-credentials', tokenUrl: auth.tokenUrl, clientId: auth.clientId, clientSecret: masked(auth.clientSecret), ...(auth.scope ? { scope: auth.scope } : {}) };
  }
}
