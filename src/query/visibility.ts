/**
 * Which records a request may see. The operator's feed scope (FEED_SCOPE, an OData filter over the listing
 * root's filterable fields, e.g. `MlsStatus ne 'Withdrawn'`) decides which listings are distributed; a listing
 * outside it is absent everywhere: from queries, counts and key fetches (404, like a missing one), and its
 * Media, OpenHouse, history, rooms and units with it (records of other resources, like a Member's media,
 * are not affected). That is how a listing "stops appearing in the feed"
 * (spec §3), which the removed-listings check detects. Records naming a field hidden from the client (or a
 * lookup only hidden fields use) are absent the same way (see named-fields.ts).
 */
import { scopeInvalid } from '../errors/admin-errors';
import { EntitySetSpec, listingRootOf, ownedNavigations, ServiceModel } from '../model/service-model';
import { bindQuery } from './bind-query';
import { changeLogCondition } from './change-log-visibility';
import type { BoundPredicate } from './bound';
import { parseQueryOptions } from './parse-options';
import { HiddenFields, namedFieldConditions } from './named-fields';
import { allOf, fieldOf } from './predicates';
import { discriminatorOf } from './related-records';

export class Visibility {
  private readonly bySet = new Map<string, BoundPredicate>();

  /**
   * Binds each scope once (all must hold); a scope that is not a valid filter on the listings stops the server
   * at start (the feed scope) or is refused when the client is created (a client's).
   */
  constructor(model: ServiceModel, scopes: readonly string[], hidden: HiddenFields = new Map()) {
    const scope = this.bindScopes(model, scopes);
    const named = namedFieldConditions(model, hidden);
    for (const [set, condition] of named) this.bySet.set(set, allOf(this.bySet.get(set), condition)!);
    // The change log's events follow the records they name (change-log-visibility.ts).
    for (const log of model.entitySets.filter((s) => s.changeLog)) {
      const events = changeLogCondition(model, log, { of: (set) => this.bySet.get(set.name), scope, named: (set) => named.get(set.name) });
      if (events) this.bySet.set(log.name, allOf(this.bySet.get(log.name), events)!);
    }
  }

  /** Binds the scopes on the listing root and hides what they hide; answers the scope, if any. */
  private bindScopes(model: ServiceModel, scopes: readonly string[]): BoundPredicate | undefined {
    if (scopes.length === 0) return undefined;
    const listings = listingRootOf(model);
    if (!listings) throw new Error('a scope needs the dictionary to name a ListingRoot entity set');
    let scope: BoundPredicate | undefined;
    for (const text of scopes) {
      let q;
      try {
        q = bindQuery(listings, parseQueryOptions({ $filter: text }));
      } catch (e) {
        // The parser's or binder's own error rides along as a detail (the console shows it beside the scope).
        throw scopeInvalid(text, listings.name, e);
      }
      scope = allOf(scope, q.filter!);
    }
    this.bySet.set(listings.name, scope!);
    const key = fieldOf(listings.fieldsByName[listings.key]);
    // The listing's own records (its media, rooms), not the ones it names (its agent, whose Member is no listing's).
    for (const nav of ownedNavigations(listings)) {
      const child = model.entitySets.find((s) => s.name === nav.target)!;
      // Hidden: records of a listing outside the scope. Records of other resources (a Member's media, told
      // apart by the join's discriminator) and records without a parent stay visible.
      const outside: BoundPredicate = { kind: 'not', operand: scope! };
      const inHiddenListing: BoundPredicate = { kind: 'inQuery', left: fieldOf(child.fieldsByName[nav.join.foreignKey]), set: listings, column: key, where: outside };
      this.bySet.set(child.name, { kind: 'not', operand: allOf(discriminatorOf(nav, child), inHiddenListing)! });
    }
    return scope;
  }

  /** The condition every read of `set` carries, if any. */
  of(set: EntitySetSpec): BoundPredicate | undefined {
    return this.bySet.get(set.name);
  }
}
