/**
 * Which records a request may see. The operator's feed scope (FEED_SCOPE, an OData filter over Property's
 * filterable fields, e.g. `MlsStatus ne 'Withdrawn'`) decides which listings are distributed; a listing
 * outside it is absent everywhere: from queries, counts and key fetches (404, like a missing one), and its
 * Media, OpenHouse, history, rooms and units with it (records of other resources, like a Member's media,
 * are not affected). That is how a listing "stops appearing in the feed"
 * (spec §3), which the removed-listings check detects.
 */
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import { bindQuery } from './bind-query';
import type { BoundPredicate } from './bound';
import { parseQueryOptions } from './parse-options';
import { both, fieldOf } from './predicates';

export const LISTINGS = 'Property';

export class Visibility {
  private readonly bySet = new Map<string, BoundPredicate>();

  /**
   * Binds each scope once (all must hold); a scope that is not a valid filter on Property stops the server
   * at start (the feed scope) or is refused when the client is created (a client's).
   */
  constructor(model: ServiceModel, scopes: readonly string[]) {
    if (scopes.length === 0) return;
    const listings = model.entitySets.find((s) => s.name === LISTINGS);
    if (!listings) throw new Error('a scope needs a Property entity set');
    let scope: BoundPredicate | undefined;
    for (const text of scopes) {
      let q;
      try {
        q = bindQuery(listings, parseQueryOptions({ $filter: text }));
      } catch (e) {
        throw new Error(`the scope ${JSON.stringify(text)} is not a usable filter on Property: ${(e as Error).message}`);
      }
      scope = both(scope, q.filter!);
    }
    this.bySet.set(listings.name, scope!);
    const key = fieldOf(listings.fieldsByName[listings.key]);
    for (const nav of listings.navigations) {
      if (!nav.join) continue;
      const child = model.entitySets.find((s) => s.name === nav.target)!;
      // Hidden: records of a listing outside the scope. Records of other resources (a Member's media) and
      // records without a parent stay visible.
      const outside: BoundPredicate = { kind: 'not', operand: scope! };
      const ofHiddenListing: BoundPredicate = { kind: 'inQuery', left: fieldOf(child.fieldsByName[nav.join.foreignKey]), set: listings, column: key, where: outside };
      this.bySet.set(child.name, { kind: 'not', operand: ofHiddenListing });
    }
  }

  /** The condition every read of `set` carries, if any. */
  of(set: EntitySetSpec): BoundPredicate | undefined {
    return this.bySet.get(set.name);
  }
}
