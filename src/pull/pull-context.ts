/** What each strategy of one upstream's pass works with. */
import type { EntitySetSpec } from '../model/service-model';
import type { PullProgress } from '../storage/tables/pull-progress';
import type { PageWriter } from './page-writer';
import type { PulledSet, PullSettings } from './pull-settings';
import type { Upstream } from './upstream';

export interface PullContext {
  readonly settings: PullSettings;
  readonly upstream: Upstream;
  readonly writer: PageWriter;
  readonly progress: PullProgress;
  /** Called before every request: renews the puller's lease, and throws when it was lost or the pass must stop. */
  readonly stillMine: () => Promise<void>;
  readonly log: (line: string) => void;
  /** Records written (created, changed or removed) by each page: counted in the upstream's row as they go. */
  readonly onWritten: (set: string, count: number) => Promise<void>;
}

/** One set's pull: the upstream set, and the local set it fills. */
export interface SetPull {
  readonly pulled: PulledSet;
  readonly set: EntitySetSpec;
}

/** A path and query relative to the upstream's service root, its query options encoded. */
export function collectionUrl(set: string, options: Readonly<Record<string, string | undefined>>): string {
  const query = Object.entries(options).filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${k}=${encodeURIComponent(v!)}`).join('&');
  return query ? `${set}?${query}` : set;
}

/** Keys (as JSON text) as OData literals, for `<key> in (…)`. */
export function keyLiterals(keys: readonly string[]): string {
  return keys.map((k) => { const v = JSON.parse(k) as unknown; return typeof v === 'string' ? `'${v.replace(/'/g, "''")}'` : String(v); }).join(',');
}

/** `a and b` of the filters given, each parenthesised. */
export function allOf(...filters: readonly (string | undefined)[]): string | undefined {
  const given = filters.filter((f): f is string => !!f);
  return given.length ? given.map((f) => `(${f})`).join(' and ') : undefined;
}
