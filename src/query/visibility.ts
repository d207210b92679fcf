/**
 * Which records a request may see. The operator's feed scope (FEED_SCOPE, an OData filter over Property's
 * filterable fields, e.g. `MlsStatus ne 'Withdrawn'`) decides which listings are distributed; a listing
 * outside it is absent everywhere: from queries, counts and key fetches (404, like a missing one), and its
 * Media, OpenHouse, history, rooms and units with it (records of other resources, like a Member's media,
 * are not affected). That is how a listing "stops appearing in the feed"
 * (spec §3), which the removed-listings check detects.
 */
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import type { Dialect } from '../storage/database';
import { bindQuery } from './bind-query';
import { parseQueryOptions } from './parse-options';
import { quoteIdentifier, SqlFragment, translateFilter } from './translate';

export const LISTINGS = 'Property';

export class Visibility {
  private readonly bySet = new Map<string, SqlFragment>();

  /** Binds the scope once; a scope that is not a valid filter on Property stops the server at start. */
  constructor(model: ServiceModel, dialect: Dialect, feedScope: string | undefined) {
    if (!feedScope) return;
    const listings = model.entitySets.find((s) => s.name === LISTINGS);
    if (!listings) throw new Error('FEED_SCOPE needs a Property entity set');
    let scope: SqlFragment;
    let outside: SqlFragment;
    try {
      const q = bindQuery(listings, parseQueryOptions({ $filter: feedScope }));
      scope = translateFilter(q.filter!, dialect);
      outside = translateFilter(q.filter!, dialect, true);
    } catch (e) {
      throw new Error(`FEED_SCOPE is not a usable filter on Property: ${(e as Error).message}`);
    }
    this.bySet.set(listings.name, scope);
    const key = quoteIdentifier(listings.fieldsByName[listings.key].column!);
    for (const nav of listings.navigations) {
      if (!nav.join) continue;
      const child = model.entitySets.find((s) => s.name === nav.target)!;
      const fk = quoteIdentifier(child.fieldsByName[nav.join.foreignKey].column!);
      // Hidden: records of a listing outside the scope. Records of other resources (a Member's media) and
      // records without a parent stay visible.
      this.bySet.set(child.name, {
        sql: `(${fk} IS NULL OR ${fk} NOT IN (SELECT ${key} FROM ${quoteIdentifier(listings.table)} WHERE ${outside.sql}))`,
        params: outside.params,
      });
    }
  }

  /** The condition every read of `set` carries, if any. */
  of(set: EntitySetSpec): SqlFragment | undefined {
    return this.bySet.get(set.name);
  }
}

/** `a AND b`, either side optional. */
export function both(a: SqlFragment | undefined, b: SqlFragment | undefined): SqlFragment | undefined {
  if (!a) return b;
  if (!b) return a;
  return { sql: `(${a.sql}) AND (${b.sql})`, params: [...a.params, ...b.params] };
}
