/**
 * $expand on a page of records: one batched read per navigation for the whole page (never one per record),
 * prepared with the request's plan (request-plans.ts), then each record gets its related records spliced in as an
 * array, `[]` when it has none. Records and related records are put in the negotiated format first
 * (entity-shape.ts), when it is not the stored one.
 */
import type { EntitySetSpec } from '../model/service-model';
import type { EntityShaper } from './entity-shape';
import type { Expansion } from './request-plans';

/** The set a page's records belong to, and the shaper for the client's format (undefined: as stored). */
export interface RecordFormat {
  readonly set: EntitySetSpec;
  readonly shaper?: EntityShaper;
}

export async function withExpansions(expansions: readonly Expansion[], keys: readonly unknown[], records: string[], format: RecordFormat): Promise<string[]> {
  const shaper = format.shaper;
  if (shaper) {
    const names = expansions.map((e) => e.plan.navigation);
    for (let i = 0; i < records.length; i++) records[i] = shaper.entity(format.set, records[i], keys[i], names);
  }
  if (expansions.length === 0 || records.length === 0) return records;
  const related = await Promise.all(expansions.map((e) => e.read.of(keys)));
  return records.map((json, i) => {
    const parts = expansions.map(({ plan }, n) => {
      const children = related[n].get(keys[i]) ?? [];
      const shaped = shaper ? children.map((c) => shaper.entity(plan.set, c)) : children;
      const link = shaper ? shaper.beforeExpansion(format.set, keys[i], plan.navigation) : '';
      return `${link}${JSON.stringify(plan.navigation)}:[${shaped.join(',')}]`;
    });
    return json.length > 2 ? `${json.slice(0, -1)},${parts.join(',')}}` : `{${parts.join(',')}}`;
  });
}
