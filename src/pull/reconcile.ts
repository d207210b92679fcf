/**
 * Removed-records reconciliation: the records this upstream wrote locally (its provenance, never another
 * upstream's) compared with what the upstream serves under the set's filter; each key found gone or changed is
 * asked for again by key (records-by-key.ts) and written: removed as the dictionary says a removal is (a listing
 * marked, a photo deleted) when the upstream does not serve it, so a walk that missed a key (an upstream paging by
 * $skip while records were removed) never removes a record that is still there. How the differences are found is
 * a Reconciler: a `$select=<key>` walk here, the upstream's digest (digest-search.ts) when it declares one.
 */
import { collectionUrl, PullContext, SetPull } from './pull-context';
import { chunks, KEYS_PER_FETCH, linesByKey } from './records-by-key';

export const RECONCILED_STRATEGY = 'reconciled';

/** Keys (as JSON text) of this upstream's records gone upstream, and of records changed there or missing here. */
export interface Differences {
  readonly gone: string[];
  readonly changed: string[];
}

export interface Reconciler {
  differences(pull: SetPull): Promise<Differences>;
}

/** Keys read from the provenance per statement. */
const LOCAL_PAGE = 1000;

/** Every key, by a `$select=<key>` walk of the set following nextLinks: finds keys gone upstream. */
export class SelectKeyWalk implements Reconciler {
  constructor(private readonly context: PullContext) {}

  async differences(pull: SetPull): Promise<Differences> {
    const key = pull.set.key;
    const upstreamKeys = new Set<string>();
    let url: string | undefined = collectionUrl(pull.pulled.upstream, { $select: key, $filter: pull.pulled.filter, $orderby: `${key} asc` });
    while (url) {
      await this.context.stillMine();
      const page = await this.context.upstream.page(url, { maxPageSize: this.context.settings.pageSize });
      for (const r of page.records) if (typeof r[key] === 'string' || typeof r[key] === 'number') upstreamKeys.add(JSON.stringify(r[key]));
      url = page.nextLink;
    }
    const gone: string[] = [];
    for (let after: string | undefined; ;) {
      const local = await this.context.progress.keys(this.context.settings.name, pull.set.name, after, LOCAL_PAGE);
      gone.push(...local.filter((k) => !upstreamKeys.has(k)));
      if (local.length < LOCAL_PAGE) break;
      after = local.at(-1);
    }
    return { gone, changed: [] };
  }
}

/** Applies what `reconciler` finds for `pull`'s set; returns the records removed. */
export async function reconcile(context: PullContext, reconciler: Reconciler, pull: SetPull): Promise<number> {
  const { gone, changed } = await reconciler.differences(pull);
  let removed = 0;
  for (const keys of chunks([...new Set([...gone, ...changed])], KEYS_PER_FETCH)) {
    const report = await context.writer.write(pull.set, await linesByKey(context, pull, keys));
    removed += report.deleted;
    await context.onWritten(pull.set.name, report.created + report.updated + report.deleted);
  }
  if (removed) context.log(`pull ${context.settings.name}: ${pull.pulled.upstream}: ${removed} record(s) gone upstream removed from ${pull.set.name}`);
  return removed;
}
