/**
 * Which records a request may see. The operator's feed scope (FEED_SCOPE, an OData filter over the listing
 * root's filterable fields, e.g. `MlsStatus ne 'Withdrawn'`) decides which listings are distributed; a listing
 * outside it is absent everywhere: from queries, counts and key fetches (404, like a missing one), and its
 * Media, OpenHouse, history, rooms and units with it (records of other resources, like a Member's media,
 * are not affected). That is how a listing "stops appearing in the feed"
 * (spec §3), which the removed-listings check detects.
 */
import { EntitySetSpec, listingRootOf, ServiceModel } from '../model/service-model';
import type { Dialect } from '../storage/database';
import { bindQuery } from './bind-query';
import { parseQueryOptions } from './parse-options';
import { discriminatorOf } from './related-records';
import { quoteIdentifier, SqlFragment, translateFilter } from './translate';

export class Visibility {
  private readonly bySet = new Map<string, SqlFragment>();

  /**
   * Binds each scope once (all must hold); a scope that is not a valid filter on Property stops the server
   * at start (the feed scope) or is refused when the client is created (a client's).
   */
  constructor(model: ServiceModel, dialect: Dialect, scopes: readonly string[]) {
    if (scopes.length === 0) return;
    const listings = listingRootOf(model);
    if (!listings) throw new Error('a scope needs the dictionary to name a ListingRoot entity set');
    let scope: SqlFragment | undefined;
    let outside: SqlFragment | undefined;
    for (const text of scopes) {
      let q;
      try {
        q = bindQuery(listings, parseQueryOptions({ $filter: text }));
      } catch (e) {
        throw new Error(`the scope ${JSON.stringify(text)} is not a usable filter on ${listings.name}: ${(e as Error).message}`);
      }
      scope = both(scope, translateFilter(q.filter!, dialect));
      // Outside any one scope is outside them all.
      outside = either(outside, translateFilter(q.filter!, dialect, true));
    }
    this.bySet.set(listings.name, scope!);
    const key = quoteIdentifier(listings.fieldsByName[listings.key].column!);
    for (const nav of listings.navigations) {
      if (!nav.join) continue;
      const child = model.entitySets.find((s) => s.name === nav.target)!;
      const fk = quoteIdentifier(child.fieldsByName[nav.join.foreignKey].column!);
      // Hidden: records of a listing outside the scope. Records of other resources (a Member's media, told
      // apart by the join's discriminator) and records without a parent stay visible.
      const discriminator = discriminatorOf(nav, child);
      const otherResource = discriminator ? translateFilter(discriminator, dialect, true) : undefined;
      this.bySet.set(child.name, {
        sql: `(${fk} IS NULL${otherResource ? ` OR (${otherResource.sql})` : ''}`
          + ` OR ${fk} NOT IN (SELECT ${key} FROM ${quoteIdentifier(listings.table)} WHERE ${outside!.sql}))`,
        params: [...(otherResource?.params ?? []), ...outside!.params],
      });
    }
  }

  /** The condition every read of `set` carries, if any. */
  of(set: EntitySetSpec): SqlFragment | undefined {
    return this.bySet.get(set.name);
  }
}

/** `a OR b`, either side optional. */
function either(a: SqlFragment | undefined, b: SqlFragment): SqlFragment {
  return a ? { sql: `(${a.sql}) OR (${b.sql})`, params: [...a.params, ...b.params] } : b;
}

/** `a AND b`, either side optional. */
export function both(a: SqlFragment | undefined, b: SqlFragment | undefined): SqlFragment | undefined {
  if (!a) return b;
  if (!b) return a;
  return { sql: `(${a.sql}) AND (${b.sql})`, params: [...a.params, ...b.params] };
}
