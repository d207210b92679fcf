/**
 * Records named by key, as the upstream serves them now (40 a request, under the set's filter): those it serves
 * are lines to write; those it does not, removals, of this upstream's records only. Both the EntityEvent strategy
 * and reconciliation apply what they found this way, so a record is removed only once the upstream, asked for it,
 * does not serve it.
 */
import { DELETE_MARK } from '../ingest/ingest';
import { allOf, collectionUrl, keyLiterals, PullContext, SetPull } from './pull-context';
import { linesOf } from './page-lines';
import type { PageLine } from './page-writer';

export const KEYS_PER_FETCH = 40;

/** Lines for `keys` (as JSON text, at most KEYS_PER_FETCH): the records served, and removals of this upstream's others. */
export async function linesByKey(context: PullContext, pull: SetPull, keys: readonly string[]): Promise<PageLine[]> {
  const key = pull.set.key;
  const records: Readonly<Record<string, unknown>>[] = [];
  let url: string | undefined = collectionUrl(pull.pulled.upstream, { $filter: allOf(pull.pulled.filter, `${key} in (${keyLiterals(keys)})`) });
  while (url) {
    await context.stillMine();
    const page = await context.upstream.page(url, { maxPageSize: context.settings.pageSize });
    records.push(...page.records);
    url = page.nextLink;
  }
  const served = new Set(records.map((r) => JSON.stringify(r[key])));
  const owned = await context.progress.owned(context.settings.name, pull.set.name, keys.filter((k) => !served.has(k)));
  return [...linesOf(context, pull, records), ...owned.map((k, n) => ({ line: records.length + n + 1, input: { [key]: JSON.parse(k) as unknown, [DELETE_MARK]: true } }))];
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
