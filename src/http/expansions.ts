/**
 * $expand on a page of records: one batched query per navigation for the whole page (never one per record),
 * then each record gets its related records spliced in as an array, `[]` when it has none. Records and
 * related records are put in the negotiated format first (entity-shape.ts), when it is not the stored one.
 */
import type { EntitySetSpec, FieldSpec } from '../model/service-model';
import type { BoundExpand } from '../query/bound';
import { allOf } from '../query/predicates';
import { projection } from '../query/projection';
import type { Licence } from '../auth/licence';
import type { RecordStores } from '../storage/record-stores';
import type { EntityShaper } from './entity-shape';
import type { ODataVersion } from './json-format';

/** The set a page's records belong to, and the shaper for the client's format (undefined: as stored). */
export interface RecordFormat {
  readonly set: EntitySetSpec;
  readonly shaper?: EntityShaper;
}

export async function withExpansions(
  stores: RecordStores, licence: Licence, expand: readonly BoundExpand[], keys: readonly unknown[], records: string[],
  format?: RecordFormat,
): Promise<string[]> {
  const shaper = format?.shaper;
  if (shaper) {
    const names = expand.map((e) => e.navigation.name);
    for (let i = 0; i < records.length; i++) records[i] = shaper.entity(format.set, records[i], keys[i], names);
  }
  if (expand.length === 0 || records.length === 0) return records;
  const related = await Promise.all(expand.map((e) => stores.store(e.target).related({
    foreignKey: e.foreignKey.column!,
    keys,
    where: allOf(licence.visibility.of(e.target), e.filter),
    orderBy: e.orderBy,
    projection: projection(e.target, e.select, licence.hiddenIn(e.target)),
    perParent: e.top,
  })));
  return records.map((json, i) => {
    const parts = expand.map((e, n) => {
      const children = related[n].get(keys[i]) ?? [];
      const shaped = shaper ? children.map((c) => shaper.entity(e.target, c)) : children;
      const link = shaper ? shaper.beforeExpansion(format!.set, keys[i], e.navigation.name) : '';
      return `${link}${JSON.stringify(e.navigation.name)}:[${shaped.join(',')}]`;
    });
    return json.length > 2 ? `${json.slice(0, -1)},${parts.join(',')}}` : `{${parts.join(',')}}`;
  });
}

/**
 * The context URL's projection: `(A,B,Media(MediaKey),OpenHouse())`, or '' for whole records. An expansion
 * without a nested $select is `OpenHouse()` in 4.01 and left out in 4.0, which has no empty parentheses
 * (OData Protocol 4.01 §10.10).
 */
export function contextProjection(select: readonly FieldSpec[] | undefined, expand: readonly BoundExpand[], version: ODataVersion = '4.01'): string {
  if (!select && expand.length === 0) return '';
  const items = [
    ...(select ?? []).map((f) => f.name),
    ...expand.filter((e) => version !== '4.0' || e.select).map((e) => `${e.navigation.name}(${(e.select ?? []).map((f) => f.name).join(',')})`),
  ];
  return items.length ? `(${items.join(',')})` : '';
}
