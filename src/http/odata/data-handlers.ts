/**
 * What the data routes call (data-routes.ts), for each entity set: the requests on the set and its records
 * (resource-handlers.ts), on the members below one record (member-paths.ts), and a set's digest (digest.ts).
 */
import type { AppOptions } from '../app-options';
import type { ResourceHandlers } from './data-routes';
import { DigestRequests } from './digest';
import { parseKeyPredicate } from './key-predicate';
import { MemberRequests } from './member-paths';
import { ResourceParts, ResourceRequests } from './resource-handlers';

export function resourceHandlers(parts: ResourceParts, options: AppOptions): ResourceHandlers {
  const requests = new ResourceRequests(parts, options);
  const members = new MemberRequests(requests, options.writeStallMs);
  const digests = new DigestRequests(requests, parts.model.namespace, options.writeStallMs);
  return {
    collection: (set) => (ctx) => requests.page(ctx, set),
    count: (set) => (ctx) => requests.count(ctx, set),
    byKey: (set) => (ctx, params) => requests.entity(ctx, set, parseKeyPredicate(set, params[0])),
    navigation: (set) => (ctx, params) => requests.navigation(ctx, set, params),
    member: (set) => (ctx, params) => members.member(ctx, set, params),
    rawValue: (set) => (ctx, params) => members.rawValue(ctx, set, params),
    memberCount: (set) => (ctx, params) => members.count(ctx, set, params),
    digest: (set) => (ctx, params) => digests.digest(ctx, set, params),
  };
}
