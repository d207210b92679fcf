/**
 * Removed-records reconciliation: the keys this upstream wrote locally (its provenance, never another
 * upstream's) compared with the keys the upstream still serves under the set's filter; each key gone upstream
 * is confirmed absent by asking for it, then removed locally as the dictionary says a removal is (a listing
 * marked, a photo deleted). Where the upstream's keys come from is a KeySource: a `$select=<key>` walk here; a
 * digest of key ranges is another when the upstream offers one.
 */
import { DELETE_MARK } from '../ingest/ingest';
import { allOf, collectionUrl, PullContext, SetPull } from './pull-context';
import type { PageLine } from './page-writer';

export const RECONCILED_STRATEGY = 'reconciled';

/** The keys (as JSON text) of the records the upstream serves for a set, under its filter. */
export interface KeySource {
  keys(pull: SetPull): Promise<ReadonlySet<string>>;
}

/** Every key, by a `$select=<key>` walk of the set following nextLinks. */
export class SelectKeyWalk implements KeySource {
  constructor(private readonly context: PullContext) {}

  async keys(pull: SetPull): Promise<ReadonlySet<string>> {
    const key = pull.set.key;
    const keys = new Set<string>();
    let url: string | undefined = collectionUrl(pull.pulled.upstream, { $select: key, $filter: pull.pulled.filter, $orderby: `${key} asc` });
    while (url) {
      await this.context.stillMine();
      const page = await this.context.upstream.page(url, { maxPageSize: this.context.settings.pageSize });
      for (const r of page.records) if (typeof r[key] === 'string' || typeof r[key] === 'number') keys.add(JSON.stringify(r[key]));
      url = page.nextLink;
    }
    return keys;
  }
}

/** Keys read from the provenance per statement, and asked of the upstream per confirming request. */
const LOCAL_PAGE = 1000;
const CONFIRM_BATCH = 40;

/** Removes this upstream's records of `pull`'s set that the upstream no longer has; returns how many. */
export async function reconcile(context: PullContext, source: KeySource, pull: SetPull): Promise<number> {
  const upstreamKeys = await source.keys(pull);
  const { settings, progress } = context;
  const gone: string[] = [];
  for (let after: string | undefined; ;) {
    const local = await progress.keys(settings.name, pull.set.name, after, LOCAL_PAGE);
    gone.push(...local.filter((k) => !upstreamKeys.has(k)));
    if (local.length < LOCAL_PAGE) break;
    after = local.at(-1);
  }
  let removed = 0;
  for (let i = 0; i < gone.length; i += CONFIRM_BATCH) {
    const absent = await confirmAbsent(context, pull, gone.slice(i, i + CONFIRM_BATCH));
    const lines: PageLine[] = absent.map((k, n) => ({ line: n + 1, input: { [pull.set.key]: JSON.parse(k) as unknown, [DELETE_MARK]: true } }));
    const report = await context.writer.write(pull.set, lines);
    removed += report.deleted;
    context.onWritten(pull.set.name, report.deleted);
  }
  if (removed) context.log(`pull ${settings.name}: ${pull.pulled.upstream}: ${removed} record(s) gone upstream removed from ${pull.set.name}`);
  return removed;
}

/**
 * The keys of `candidates` the upstream does not serve when asked for them by key: a walk that missed a key (an
 * upstream paging by $skip while records were removed) never removes a record that is still there.
 */
export async function confirmAbsent(context: PullContext, pull: SetPull, candidates: readonly string[]): Promise<string[]> {
  if (candidates.length === 0) return [];
  const key = pull.set.key;
  const literals = candidates.map((k) => { const v = JSON.parse(k) as unknown; return typeof v === 'string' ? `'${v.replace(/'/g, "''")}'` : String(v); });
  const present = new Set<string>();
  let url: string | undefined = collectionUrl(pull.pulled.upstream, { $select: key, $filter: allOf(pull.pulled.filter, `${key} in (${literals.join(',')})`) });
  while (url) {
    await context.stillMine();
    const page = await context.upstream.page(url, { maxPageSize: context.settings.pageSize });
    for (const r of page.records) present.add(JSON.stringify(r[key]));
    url = page.nextLink;
  }
  return candidates.filter((k) => !present.has(k));
}
