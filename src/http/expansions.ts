/**
 * $expand on a page of records: one batched query per navigation for the whole page (never one per record),
 * then each record gets its related records spliced in as an array, `[]` when it has none.
 */
import type { FieldSpec } from '../model/service-model';
import type { BoundExpand } from '../query/bound';
import { both } from '../query/predicates';
import { projection } from '../query/projection';
import type { Licence } from '../auth/licence';
import type { RecordStores } from '../storage/record-stores';

export async function withExpansions(
  stores: RecordStores, licence: Licence, expand: readonly BoundExpand[], keys: readonly unknown[], records: string[],
): Promise<string[]> {
  if (expand.length === 0 || records.length === 0) return records;
  const related = await Promise.all(expand.map((e) => stores.store(e.target).related({
    foreignKey: e.foreignKey.column!,
    keys,
    where: both(licence.visibility.of(e.target), e.filter),
    orderBy: e.orderBy,
    projection: projection(e.target, e.select, licence.hiddenIn(e.target)),
    perParent: e.top,
  })));
  return records.map((json, i) => {
    const parts = expand.map((e, n) => `${JSON.stringify(e.navigation.name)}:[${(related[n].get(keys[i]) ?? []).join(',')}]`);
    return json.length > 2 ? `${json.slice(0, -1)},${parts.join(',')}}` : `{${parts.join(',')}}`;
  });
}

/** The context URL's projection: `(A,B,Media(MediaKey),OpenHouse())`, or '' for whole records. */
export function contextProjection(select: readonly FieldSpec[] | undefined, expand: readonly BoundExpand[]): string {
  const items = [
    ...(select ?? []).map((f) => f.name),
    ...expand.map((e) => `${e.navigation.name}(${(e.select ?? []).map((f) => f.name).join(',')})`),
  ];
  return items.length ? `(${items.join(',')})` : '';
}
