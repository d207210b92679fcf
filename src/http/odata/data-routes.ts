/**
 * The data routes: the one route table of the paths under the service root, built from the generated entity sets
 * (their names, path aliases and followable navigations): the service document and $metadata first, then per set
 * the collection, `/$count`, a key, the navigation paths the dictionary makes followable, and a segment after a
 * key (a property, its `/$value` and `/$count`, or a single-valued navigation: the handler knows the set's members).
 *
 * A set's routes are found by the path's first segment, then tried in order (the first match answers): a string
 * matches itself, with or without a trailing slash; a pattern matches the raw path, its captures decoded as
 * Express decodes route parameters. Every pattern of a set begins with one of its names followed by `/`, `(` or
 * the end, so the segment up to the first of those names the only set whose routes can match.
 */
import type { EntitySetSpec } from '../../model/service-model';
import { Errors } from '../../errors/catalogue';
import { DIGEST_FUNCTION } from '../../query/digest-call';
import type { Routes } from '../pipeline';
import { RequestContext, SERVICE_ROOT } from '../request-context';

/** A data route's handler, given the path's captures (decoded). */
export type DataHandler = (ctx: RequestContext, params: readonly string[]) => Promise<void> | void;

/** A route's path from the service root: `/Property`, or a pattern such as `^\/Property\((.*)\)$`. */
export type RoutePath = string | RegExp;

/** What answers each kind of path below an entity set (`H`: a handler, as the route table's user makes them). */
export interface ResourceHandlers<H = DataHandler> {
  collection(set: EntitySetSpec): H;
  /** `<Set>/$count`: the number of matching records as text/plain. */
  count(set: EntitySetSpec): H;
  byKey(set: EntitySetSpec): H;
  /** `<Set>('<key>')/<Navigation>`: the related records of one record, as a collection. */
  navigation(set: EntitySetSpec): H;
  /** `<Set>('<key>')/<name>`: a property's value, or the record a single-valued navigation leads to. */
  member(set: EntitySetSpec): H;
  /** `<Set>('<key>')/<property>/$value`: a property's raw value as text/plain. */
  rawValue(set: EntitySetSpec): H;
  /** `<Set>('<key>')/<name>/$count`: how many related records a navigation leads to, or items a collection holds. */
  memberCount(set: EntitySetSpec): H;
  /** `<Set>/<Namespace>.Digest(…)` (the namespace may be left out): a replica digest of a key range. */
  digest(set: EntitySetSpec): H;
}

export interface SetRoute {
  readonly kind: keyof ResourceHandlers;
  readonly path: RoutePath | readonly string[];
}

/**
 * The paths one entity set answers on (its name and path aliases), in the order they are tried; a set with a
 * replication timestamp also its digest, bound to the collection, called with or without `namespace`, and without
 * parentheses as OData 4.01 allows a function whose parameters are all optional (boundFunctionCallNoParens).
 */
export function setRoutes(set: Pick<EntitySetSpec, 'name' | 'pathAliases' | 'navigations' | 'changeTimestamp'>, namespace?: string): SetRoute[] {
  const names = [set.name, ...set.pathAliases];
  const qualifier = namespace === undefined ? '' : `(?:${namespace.replace(/[.]/g, '\\.')}\\.)?`;
  const digest = namespace !== undefined && set.changeTimestamp !== undefined
    ? [{ kind: 'digest', path: new RegExp(`^\\/(?:${names.join('|')})\\/${qualifier}${DIGEST_FUNCTION}(?:\\((.*)\\))?$`) } as const] : [];
  const key = `^\\/(?:${names.join('|')})\\((.*)\\)`;
  const navigations = set.navigations.filter((n) => n.followable).map((n) => n.name);
  return [
    { kind: 'collection', path: names.map((n) => `/${n}`) },
    { kind: 'count', path: new RegExp(`^\\/(?:${names.join('|')})\\/\\$count$`) },
    { kind: 'byKey', path: new RegExp(`${key}$`) },
    ...navigations.length ? [{ kind: 'navigation', path: new RegExp(`${key}\\/(${navigations.join('|')})$`) } as const] : [],
    { kind: 'member', path: new RegExp(`${key}\\/([^/]+)$`) },
    { kind: 'rawValue', path: new RegExp(`${key}\\/([^/]+)\\/\\$value$`) },
    { kind: 'memberCount', path: new RegExp(`${key}\\/([^/]+)\\/\\$count$`) },
    ...digest,
  ];
}

interface Route {
  /** The path's captures when it matches, else undefined. */
  readonly match: (path: string) => string[] | undefined;
  readonly handler: DataHandler;
}

export class DataRoutes implements Routes {
  /** Routes of no set (the service document, $metadata), tried before the sets'. */
  private readonly root: Route[] = [];
  /** Each set's routes, under each of its names. */
  private readonly bySegment = new Map<string, Route[]>();

  /** A route of no set. */
  get(path: RoutePath, handler: DataHandler): void {
    this.root.push(route(path, handler));
  }

  /** The routes of `sets`, answered by `handlers`; `namespace`: the schema's, which qualifies bound functions. */
  sets(sets: readonly EntitySetSpec[], handlers: ResourceHandlers, namespace: string): void {
    for (const set of sets) {
      const routes = setRoutes(set, namespace).flatMap(({ kind, path }) => (typeof path === 'string' || path instanceof RegExp ? [path] : path)
        .map((p) => route(p, handlers[kind](set))));
      for (const name of [set.name, ...set.pathAliases]) this.bySegment.set(name, [...this.bySegment.get(name) ?? [], ...routes]);
    }
  }

  dispatch(ctx: RequestContext): Promise<void> {
    const path = ctx.path!;
    const answered = this.answer(this.root, ctx, path) ?? this.answer(this.bySegment.get(firstSegment(path)), ctx, path);
    return answered ?? Promise.reject(Errors.ResourceNotFound(ctx.pathname, SERVICE_ROOT));
  }

  private answer(routes: readonly Route[] | undefined, ctx: RequestContext, path: string): Promise<void> | undefined {
    for (const r of routes ?? []) {
      const params = r.match(path);
      if (params) return Promise.resolve(r.handler(ctx, params));
    }
    return undefined;
  }
}

const SLASH = 0x2f;
const PARENTHESIS = 0x28;

/** The path's first segment: what follows its leading slash up to the next slash or parenthesis. */
function firstSegment(path: string): string {
  for (let i = 1; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === SLASH || c === PARENTHESIS) return path.slice(1, i);
  }
  return path.slice(1);
}

const NO_PARAMS: string[] = [];

function route(p: RoutePath, handler: DataHandler): Route {
  if (typeof p === 'string') {
    const slashed = p === '/' ? p : `${p}/`;
    return { match: (path) => (path === p || path === slashed ? NO_PARAMS : undefined), handler };
  }
  return {
    match: (path) => {
      const m = p.exec(path);
      return m ? m.slice(1).map(decodeParam) : undefined;
    },
    handler,
  };
}

function decodeParam(value: string | undefined): string {
  if (value === undefined || !value.includes('%')) return value as string;
  try {
    return decodeURIComponent(value);
  } catch {
    throw Errors.RequestMalformed(`Failed to decode param '${value}'`);
  }
}
