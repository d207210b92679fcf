/**
 * What the generated routers call, for each entity set: a collection query, `/$count`, a fetch by key, and
 * navigation paths (`Property('<key>')/Media`). Each runs the query pipeline once: parse (model-free) →
 * bind (against the field tables) → read through storage, which compiles the bound query to SQL; then pages by
 * keyset and expands in batches.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EntitySetSpec, FieldSpec, ResourceHandlers, ServiceModel } from '../model/service-model';
import { ChangeLogMarks, markOf, refuseEventMarkBefore, refuseExpiredMark } from '../paging/change-log-marks';
import { nextLink, PageSize, pageSize } from '../paging/page-request';
import { refuseMarkBefore, refusePositionBefore, ScopeEpochs } from '../paging/scope-epoch';
import { queryDigest, SkipTokens } from '../paging/skiptoken';
import { bindQuery, BindOptions } from '../query/bind-query';
import type { Lookups } from '../query/bind-enum';
import type { QueryOptionsTree } from '../query/ast';
import type { BoundPredicate, BoundQuery } from '../query/bound';
import { parseQueryOptions } from '../query/parse-options';
import { both } from '../query/predicates';
import { projection } from '../query/projection';
import { relatedTo } from '../query/related-records';
import type { Licence, LicenceSource } from '../auth/licence';
import { TRANSACTIONS, TransactionClass, UsageRecorder } from '../metering/meter';
import type { RecordStores } from '../storage/record-stores';
import { Errors } from '../errors/catalogue';
import type { AppOptions } from './app';
import { clientOf } from './authentication';
import { contextProjection, withExpansions } from './expansions';
import { parseKeyPredicate } from './key-predicate';
import { QueryOptions, queryOptions } from './query-string';
import { PageBatches } from './page-batches';
import { entityTag, notModified } from './caching';
import { entityShaper } from './entity-shape';
import { jsonContentType, jsonFormat, preferenceApplied } from './json-format';
import { MemberRequests } from './member-paths';
import { BodyWriter, collectionBody, collectionHead, collectionTail, contextFor, entityBody, resourcePath, sendJson, sendText, serviceRoot } from './response';

/**
 * Records per page, and in all ($top). `$top` is a total across pages, and also asks for that many records at
 * once: up to MAX_PAGE_SIZE they come in one page (as MLS Grid and Trestle answer, and as clients that read one
 * response for `$top` expect: CAP's remote service asks `$top=250` and follows no nextLink), unless the client
 * asked for smaller pages with odata.maxpagesize. Beyond MAX_PAGE_SIZE, pages of MAX_PAGE_SIZE continue by
 * nextLink to `$top`. On a set whose dictionary declares Policy.PagedByTop, `$top` is the page size alone
 * and the walk goes on to the end.
 */
function pageLimits(set: EntitySetSpec, $top: number | undefined, size: PageSize, maxPageSize: number): { perPage: number; top: number } {
  if ($top === undefined) return { perPage: size.size, top: Number.MAX_SAFE_INTEGER };
  const perPage = Math.min($top, size.applied ? size.size : maxPageSize);
  return { perPage, top: set.pagedByTop ? Number.MAX_SAFE_INTEGER : $top };
}

function noOptions(given: QueryOptions): boolean {
  for (const _ in given) return false;
  return true;
}

function handle(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => { fn(req, res).catch(next); };
}

interface PageScope {
  /** A condition beyond the request's own (a navigation path's parent). */
  readonly within?: BoundPredicate;
  readonly defaultOrder?: readonly string[];
}

/** What the data handlers use. */
export interface ResourceParts {
  readonly model: ServiceModel;
  readonly stores: RecordStores;
  readonly licences: LicenceSource;
  readonly meter: UsageRecorder;
  /** Seals and opens $skiptoken values (there whenever a handler runs: requests wait for readiness). */
  readonly skipTokens: () => SkipTokens;
  /** When what each client may see last changed without its records changing. */
  readonly scopeEpochs: ScopeEpochs;
  readonly changeLogMarks?: ChangeLogMarks;
}

export function resourceHandlers(parts: ResourceParts, options: AppOptions): ResourceHandlers {
  const requests = new ResourceRequests(parts, options);
  const members = new MemberRequests(requests, parts, options);
  return {
    collection: (set) => handle((req, res) => requests.page(req, res, set)),
    count: (set) => handle((req, res) => requests.count(req, res, set)),
    byKey: (set) => handle((req, res) => requests.entity(req, res, set, parseKeyPredicate(set, req.params[0]))),
    navigation: (set) => handle((req, res) => requests.navigation(req, res, set)),
    member: (set) => handle((req, res) => members.member(req, res, set)),
    rawValue: (set) => handle((req, res) => members.rawValue(req, res, set)),
    memberCount: (set) => handle((req, res) => members.count(req, res, set)),
  };
}

/** One request's work against one set, for each kind of path. */
export class ResourceRequests {
  private readonly sets: ReadonlyMap<string, EntitySetSpec>;
  private readonly lookups: Lookups;
  /** A fetch by key without query options binds alike for every client and licence: once per set. */
  private readonly plainFetches = new Map<EntitySetSpec, { tree: QueryOptionsTree; q: BoundQuery }>();

  constructor(private readonly parts: ResourceParts, private readonly options: AppOptions) {
    this.sets = new Map(parts.model.entitySets.map((s) => [s.name, s]));
    this.lookups = new Map(parts.model.lookups.map((l) => [l.name, l]));
  }

  bind(set: EntitySetSpec, req: Request, licence: Licence, extra: BindOptions = {}): { tree: QueryOptionsTree; q: BoundQuery } {
    const given = queryOptions(req);
    const plain = extra.single && noOptions(given);
    const known = plain ? this.plainFetches.get(set) : undefined;
    if (known) return known;
    const tree = parseQueryOptions(given, { maxFilterLength: this.options.maxFilterLength });
    const bound = { tree, q: bindQuery(set, tree, { sets: this.sets, lookups: this.lookups, hidden: (s) => licence.hiddenIn(s), ...extra }) };
    // Nothing named, so nothing the licence hides was consulted: the result holds for every client.
    if (plain) this.plainFetches.set(set, bound);
    return bound;
  }

  private where(set: EntitySetSpec, q: BoundQuery, licence: Licence, within?: BoundPredicate) {
    return both(both(licence.visibility.of(set), within), q.filter);
  }

  /** Counts the request's transactions (spec §8) before its response goes out. */
  charge(res: Response, cls: TransactionClass, q: Pick<BoundQuery, 'expand'> = { expand: [] }): Promise<void> {
    const client = clientOf(res);
    if (!client) return Promise.resolve();
    const expansions = q.expand.filter((e) => e.navigation.charged).length;
    const counts: Partial<Record<TransactionClass, number>> = { [cls]: 1 };
    counts[TRANSACTIONS.chargedExpansion] = (counts[TRANSACTIONS.chargedExpansion] ?? 0) + expansions;
    res.locals.charged = counts; // for the request's log line and metrics (http/request-log.ts)
    return this.parts.meter.record(client.id, counts);
  }

  /**
   * One page of a collection, with nextLink, count and expansions. A page larger than a batch is written as
   * it is read (http/page-batches.ts): what it needs before its headers (the first batch, the count, the
   * charge) comes first, so a failure there is still an error status; one after them cuts the connection.
   */
  async page(req: Request, res: Response, set: EntitySetSpec, scope: PageScope = {}): Promise<void> {
    const { stores, skipTokens } = this.parts;
    const licence = this.parts.licences.of(clientOf(res));
    const { tree, q } = this.bind(set, req, licence, { defaultOrder: scope.defaultOrder });
    const filter = this.where(set, q, licence, scope.within);
    const size = pageSize(req, this.options.pageSize, this.options.maxPageSize);
    // Passing over records reads them: $skip may pass over no more than a page holds, so it costs no more than one.
    if (q.skip !== undefined && q.skip > this.options.maxPageSize) {
      throw Errors.OptionValueInvalid('$skip', `at most ${this.options.maxPageSize} (MAX_PAGE_SIZE); follow @odata.nextLink for later records`, String(q.skip));
    }
    const store = stores.store(set);
    // A token is bound to the client and the path too: it continues one client's walk of one query.
    const digest = queryDigest(`${clientOf(res)?.id ?? ''} ${resourcePath(req)}`, { ...tree.texts, skiptoken: undefined, format: undefined });
    const position = q.skiptoken !== undefined ? skipTokens().decode(q.skiptoken, digest, q.orderBy) : undefined;
    const epoch = await this.parts.scopeEpochs.of(clientOf(res));
    refuseMarkBefore(epoch, set, q.filter);
    if (position) refusePositionBefore(epoch, set, position.epoch);
    await this.refuseStaleEventMarks(set, q, epoch, position?.last);
    const returned = position?.returned ?? 0;
    const { perPage, top } = pageLimits(set, q.top, size, this.options.maxPageSize);
    const format = jsonFormat(res);
    const shaper = entityShaper(format, serviceRoot(req, this.options));
    const batches = new PageBatches(store, {
      where: filter,
      after: position?.last,
      orderBy: q.orderBy,
      projection: projection(set, q.select, licence.hiddenIn(set)),
      limit: Math.min(perPage, top - returned),
      skip: q.skip,
      batch: this.options.pageBatchSize,
      keyAt: q.orderBy.findIndex((o) => o.field.name === set.key),
      expand: (keys, records) => withExpansions(stores, licence, q.expand, keys, records, { set, shaper }),
    });
    const first = await batches.next();
    // Retention may have passed the mark while the page was read: what it read would then have a gap.
    if (set.changeLog && this.parts.changeLogMarks) await refuseExpiredMark(set, markOf(set, q.filter, q.orderBy, position?.last), this.parts.changeLogMarks);
    const count = q.count ? await store.count(filter) : undefined;
    const countText = count !== undefined && format.ieee754 ? String(count) : count;
    // Another page follows when rows remain and $top (a total across pages) is not yet reached.
    const nextPage = () => (batches.more && returned + batches.read < top
      ? nextLink(serviceRoot(req, this.options), resourcePath(req), req, skipTokens().encode({ last: batches.last!, returned: returned + batches.read, epoch }, digest))
      : undefined);
    preferenceApplied(res, size.applied);
    const context = contextFor(res, `${serviceRoot(req, this.options)}/$metadata#${set.name}${contextProjection(q.select, q.expand, format.version)}`);
    await this.charge(res, TRANSACTIONS.query, q);
    if (batches.done) {
      sendJson(res, collectionBody(context, first, { count: countText, nextLink: nextPage() }), this.options.writeStallMs);
      return;
    }
    res.setHeader('Content-Type', jsonContentType(format));
    const body = new BodyWriter(res, this.options.writeStallMs);
    await body.write(collectionHead(context, countText));
    await body.writeRecords(first, false);
    while (!batches.done) await body.writeRecords(await batches.next(), true);
    body.end(collectionTail(nextPage()));
  }

  /** A mark into the change log that retention passed, or from before the client's scope epoch, cannot continue exactly. */
  private async refuseStaleEventMarks(set: EntitySetSpec, q: BoundQuery, epoch: string | undefined, last?: readonly unknown[]): Promise<void> {
    const marks = this.parts.changeLogMarks;
    if (!set.changeLog || !marks) return;
    await refuseExpiredMark(set, markOf(set, q.filter, q.orderBy, last), marks);
    await refuseEventMarkBefore(epoch, set, markOf(set, q.filter, q.orderBy), marks);
  }

  /** `<Set>/$count`, or with `within` the records a navigation leads to (`<Set>('<key>')/<Navigation>/$count`). */
  async count(req: Request, res: Response, set: EntitySetSpec, within?: BoundPredicate): Promise<void> {
    const licence = this.parts.licences.of(clientOf(res));
    const { q } = this.bind(set, req, licence);
    for (const [option, given] of [['$expand', q.expand.length > 0], ['$select', q.select !== undefined]] as const) {
      if (given) throw Errors.OptionNotApplicable(option, '/$count, which answers a number');
    }
    const n = await this.parts.stores.store(set).count(this.where(set, q, licence, within));
    await this.charge(res, TRANSACTIONS.query, q);
    sendText(res, String(n));
  }

  /**
   * One record by its key, as `<Set>('<key>')` answers it; `noContentWhenAbsent`: a record that is absent (or
   * outside the licence) answers 204, as a single-valued navigation that leads nowhere does, rather than 404.
   */
  async entity(req: Request, res: Response, set: EntitySetSpec, key: string | number, noContentWhenAbsent = false): Promise<void> {
    const licence = this.parts.licences.of(clientOf(res));
    const { q } = this.bind(set, req, licence, { single: true });
    const shape = projection(set, q.select, licence.hiddenIn(set));
    // Outside the client's licence is indistinguishable from absent.
    const json = await this.parts.stores.store(set).jsonByKey(key, shape, licence.visibility.of(set));
    if (json === undefined && noContentWhenAbsent) {
      await this.charge(res, TRANSACTIONS.keyFetch);
      res.status(204).end();
      return;
    }
    if (json === undefined) throw Errors.RecordNotFound(set.name, set.key, key);
    const format = jsonFormat(res);
    const root = serviceRoot(req, this.options);
    const shaper = entityShaper(format, root);
    // The stored record as it is, in the default format with nothing to expand.
    const [record] = shaper || q.expand.length ? await withExpansions(this.parts.stores, licence, q.expand, [key], [json], { set, shaper }) : [json];
    preferenceApplied(res);
    const context = contextFor(res, `${root}/$metadata#${set.name}${contextProjection(q.select, q.expand, format.version)}/$entity`);
    const body = entityBody(context, record);
    await this.charge(res, TRANSACTIONS.keyFetch, q);
    if (notModified(req, res, entityTag(body))) return;
    sendJson(res, body, this.options.writeStallMs);
  }

  async navigation(req: Request, res: Response, set: EntitySetSpec): Promise<void> {
    const key = parseKeyPredicate(set, req.params[0]);
    const nav = set.navigations.find((n) => n.name === req.params[1]);
    const target = nav && this.sets.get(nav.target);
    if (!nav?.followable || !target) throw Errors.NavigationNotFound(set.name, req.params[1]);
    await this.requireRecord(res, set, key);
    await this.page(req, res, target, { within: relatedTo(nav, target, key), defaultOrder: nav.order });
  }

  /**
   * The fields of one record the client may see, read for the service's own use (a join's columns), or 404 as for
   * a missing record: a path below a record outside the licence leads nowhere.
   */
  async requireRecord(res: Response, set: EntitySetSpec, key: string | number, fields: readonly FieldSpec[] = [set.fieldsByName[set.key]]): Promise<Record<string, unknown>> {
    const visible = this.parts.licences.of(clientOf(res)).visibility.of(set);
    const json = await this.parts.stores.store(set).jsonByKey(key, projection(set, fields), visible);
    if (json === undefined) throw Errors.RecordNotFound(set.name, set.key, key);
    return JSON.parse(json) as Record<string, unknown>;
  }

  setNamed(name: string): EntitySetSpec | undefined {
    return this.sets.get(name);
  }
}
