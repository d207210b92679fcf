/**
 * The data requests of each entity set: a collection query, `/$count`, a fetch by key, and navigation paths
 * (`Property('<key>')/Media`). Each runs the request's plan (request-plans.ts: parsed, bound and
 * prepared once per shape) and writes from it: a page reads by keyset in batches and expands each batch.
 */
import type { EntitySetSpec, FieldSpec, ServiceModel } from '../../model/service-model';
import { ChangeLogMarks, markOf, refuseEventMarkBefore, refuseExpiredMark } from '../../paging/change-log-marks';
import { nextLink, PageSize, pageSize } from '../../paging/page-request';
import { refuseMarkBefore, refusePositionBefore, ScopeEpochs } from '../../paging/scope-epoch';
import { PagePosition, queryDigest, SkipTokens } from '../../paging/skiptoken';
import type { BoundPredicate } from '../../query/bound';
import { projection } from '../../query/projection';
import { relatedTo } from '../../query/related-records';
import { RequestPlan, skipTokenOf } from '../../query/request-plan';
import type { LicenceSource } from '../../auth/licence';
import { TRANSACTION_CLASSES, UsageRecorder } from '../../metering/meter';
import type { PreparedRead } from '../../storage/records/record-store';
import type { RecordStores } from '../../storage/records/record-stores';
import { Errors } from '../../errors/catalogue';
import type { AppOptions } from '../app-options';
import { withExpansions } from './expansions';
import { parseKeyPredicate } from './key-predicate';
import { PageBatches } from './page-batches';
import { entityTag, notModified } from '../caching';
import { EntityShapers } from './entity-shape';
import { jsonContentType, preferenceApplied } from './json-format';
import type { RequestContext } from '../request-context';
import { ExecutablePlan, RequestPlans } from './request-plans';
import { BodyWriter, collectionBody, collectionHead, collectionTail, entityBody, noContent, type RecordBytes, sendJson, sendPieces, sendText } from './response';

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

interface PageScope {
  /** A condition beyond the request's own (a navigation path's parent). */
  readonly parent?: BoundPredicate;
  readonly defaultOrder?: readonly string[];
}

/** Where a page stands in its walk: the position it continues from, and its limits. */
interface Walk {
  readonly position?: PagePosition;
  readonly digest: string;
  readonly epoch?: string;
  readonly size: PageSize;
  /** Records the walk returned before this page. */
  readonly returned: number;
  readonly perPage: number;
  readonly top: number;
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

/** One request's work against one set, for each kind of path. */
export class ResourceRequests {
  readonly plans: RequestPlans;
  private readonly sets: ReadonlyMap<string, EntitySetSpec>;
  private readonly shapers: EntityShapers;

  constructor(private readonly parts: ResourceParts, private readonly options: AppOptions) {
    this.sets = new Map(parts.model.entitySets.map((s) => [s.name, s]));
    this.shapers = new EntityShapers(parts.model.entitySets);
    const lookups = new Map(parts.model.lookups.map((l) => [l.name, l]));
    this.plans = new RequestPlans(parts.stores, { sets: this.sets, lookups, limits: { maxFilterLength: options.maxFilterLength } });
  }

  /** Counts the request's transactions (spec §8) before its response goes out; the request log reads them from its context. */
  charge(ctx: RequestContext, charge: RequestPlan['charge'] = { transaction: 'keyFetch', chargedExpansions: 0 }): Promise<void> {
    const client = ctx.client;
    if (!client) return Promise.resolve();
    const counts = { [TRANSACTION_CLASSES[charge.transaction]]: 1 };
    counts[TRANSACTION_CLASSES.chargedExpansion] = (counts[TRANSACTION_CLASSES.chargedExpansion] ?? 0) + charge.chargedExpansions;
    ctx.charged = counts;
    return this.parts.meter.record(client.id, counts);
  }

  /**
   * One page of a collection, with nextLink, count and expansions. A page larger than a batch is written as
   * it is read (http/page-batches.ts): what it needs before its headers (the first batch, the count, the
   * charge) comes first, so a failure there is still an error status; one after them cuts the connection.
   */
  async page(ctx: RequestContext, set: EntitySetSpec, scope: PageScope = {}): Promise<void> {
    const p = this.plans.of(ctx, set, 'collection', scope.defaultOrder);
    const read = scope.parent ? this.plans.within(p, scope.parent) : p.read;
    const walk = await this.walk(ctx, p);
    const batches = this.batches(ctx, p, read, walk);
    const first = await batches.next();
    // Once, after the first batch: retention may have passed the mark while the page was read (a gap).
    await this.refuseExpiredMark(p, walk.position?.last);
    const count = p.plan.query.count ? await read.count() : undefined;
    preferenceApplied(ctx, walk.size.applied);
    await this.charge(ctx, p.plan.charge);
    await this.writePage(ctx, p, batches, first, count, () => this.nextPage(ctx, batches, walk));
  }

  /** Where the page stands: its $skiptoken opened and checked against the client's scope epoch and the change log. */
  private async walk(ctx: RequestContext, p: ExecutablePlan): Promise<Walk> {
    const { set, plan: { query: q, tree } } = p;
    // Passing over records reads them: $skip may pass over no more than a page holds, so it costs no more than one.
    if (q.skip !== undefined && q.skip > this.options.maxPageSize) {
      throw Errors.OptionValueInvalid('$skip', `at most ${this.options.maxPageSize} (MAX_PAGE_SIZE); follow @odata.nextLink for later records`, String(q.skip));
    }
    // A token is bound to the client and the path too: it continues one client's walk of one query.
    const digest = queryDigest(`${ctx.client?.id ?? ''} ${ctx.path}`, { ...tree.texts, skiptoken: undefined, format: undefined });
    const token = skipTokenOf(ctx.query);
    const position = token !== undefined ? this.parts.skipTokens().decode(token, digest, q.orderBy) : undefined;
    const epoch = await this.parts.scopeEpochs.of(ctx.client);
    refuseMarkBefore(epoch, set, q.filter);
    if (position) refusePositionBefore(epoch, set, position.epoch);
    const marks = this.parts.changeLogMarks;
    if (set.changeLog && marks) await refuseEventMarkBefore(epoch, set, markOf(set, q.filter, q.orderBy), marks);
    const size = pageSize(ctx.req, this.options.pageSize, this.options.maxPageSize);
    return { position, digest, epoch, size, returned: position?.returned ?? 0, ...pageLimits(set, q.top, size, this.options.maxPageSize) };
  }

  private batches(ctx: RequestContext, p: ExecutablePlan, read: PreparedRead, walk: Walk): PageBatches {
    const format = { set: p.set, shaper: this.shapers.shaper(ctx.format, ctx.root) };
    return new PageBatches(read, {
      after: walk.position?.last,
      limit: Math.min(walk.perPage, walk.top - walk.returned),
      skip: p.plan.query.skip,
      batch: this.options.pageBatchSize,
      keyAt: p.plan.keyAt,
      expand: (parents, records, first) => withExpansions(p.expansions, parents, records, format, first),
    });
  }

  /** A mark into the change log that retention passed cannot continue exactly. */
  private async refuseExpiredMark(p: ExecutablePlan, last?: readonly unknown[]): Promise<void> {
    const marks = this.parts.changeLogMarks;
    if (!p.set.changeLog || !marks) return;
    await refuseExpiredMark(p.set, markOf(p.set, p.plan.query.filter, p.plan.query.orderBy, last), marks);
  }

  /** Another page follows when rows remain and $top (a total across pages) is not yet reached. */
  private nextPage(ctx: RequestContext, batches: PageBatches, walk: Walk): string | undefined {
    if (!batches.more || walk.returned + batches.read >= walk.top) return undefined;
    const token = this.parts.skipTokens().encode({ last: batches.last!, returned: walk.returned + batches.read, epoch: walk.epoch }, walk.digest);
    return nextLink(ctx.root, ctx.path!, ctx.search, token);
  }

  private async writePage(ctx: RequestContext, p: ExecutablePlan, batches: PageBatches, first: RecordBytes[], count: number | undefined, next: () => string | undefined): Promise<void> {
    const countText = count !== undefined && ctx.format.ieee754 ? String(count) : count;
    const context = ctx.context(`${ctx.root}/$metadata#${p.plan.context}`);
    if (batches.done) return sendPieces(ctx, collectionBody(context, first, { count: countText, nextLink: next() }), this.options.writeStallMs);
    ctx.res.setHeader('Content-Type', jsonContentType(ctx.format));
    const body = new BodyWriter(ctx.res, this.options.writeStallMs);
    await body.write(collectionHead(context, countText));
    await body.writeRecords(first, false);
    while (!batches.done) await body.writeRecords(await batches.next(), true);
    body.end(collectionTail(next()));
  }

  /** `<Set>/$count`, or with `parent` the records a navigation leads to (`<Set>('<key>')/<Navigation>/$count`). */
  async count(ctx: RequestContext, set: EntitySetSpec, parent?: BoundPredicate): Promise<void> {
    const p = this.plans.of(ctx, set, 'count');
    const q = p.plan.query;
    for (const [option, given] of [['$expand', q.expand.length > 0], ['$select', q.select !== undefined]] as const) {
      if (given) throw Errors.OptionNotApplicable(option, '/$count, which answers a number');
    }
    const n = await (parent ? this.plans.within(p, parent) : p.read).count();
    await this.charge(ctx, p.plan.charge);
    sendText(ctx.res, String(n));
  }

  /**
   * One record by its key, as `<Set>('<key>')` answers it; `noContentWhenAbsent`: a record that is absent (or
   * outside the licence) answers 204, as a single-valued navigation that leads nowhere does, rather than 404.
   */
  async entity(ctx: RequestContext, set: EntitySetSpec, key: string | number, noContentWhenAbsent = false): Promise<void> {
    const p = this.plans.of(ctx, set, 'entity');
    // Outside the client's licence is indistinguishable from absent.
    const found = await p.read.entity(key);
    if (found === undefined && noContentWhenAbsent) {
      await this.charge(ctx);
      noContent(ctx.res);
      return;
    }
    if (found === undefined) throw Errors.RecordNotFound(set.name, set.key, key);
    // The stored bytes as they are, unless the plan changes the record (format, expansions).
    const parents = { keys: [key], links: found.links && [found.links] };
    const [record] = await withExpansions(p.expansions, parents, [found.record], { set, shaper: this.shapers.shaper(ctx.format, ctx.root) }, true);
    preferenceApplied(ctx);
    const body = entityBody(ctx.context(`${ctx.root}/$metadata#${p.plan.context}`), record);
    await this.charge(ctx, p.plan.charge);
    if (notModified(ctx.req, ctx.res, entityTag(body))) return;
    sendJson(ctx, body, this.options.writeStallMs);
  }

  async navigation(ctx: RequestContext, set: EntitySetSpec, params: readonly string[]): Promise<void> {
    const key = parseKeyPredicate(set, params[0]);
    const nav = set.navigations.find((n) => n.name === params[1]);
    const target = nav && this.sets.get(nav.target);
    if (!nav?.followable || !target) throw Errors.NavigationNotFound(set.name, params[1]);
    await this.requireRecord(ctx, set, key);
    await this.page(ctx, target, { parent: relatedTo(nav, target, key), defaultOrder: nav.order });
  }

  /**
   * The fields of one record the client may see, read for the service's own use (a join's columns), or 404 as for
   * a missing record: a path below a record outside the licence leads nowhere.
   */
  async requireRecord(ctx: RequestContext, set: EntitySetSpec, key: string | number, fields: readonly FieldSpec[] = [set.fieldsByName[set.key]]): Promise<Record<string, unknown>> {
    const json = await this.parts.stores.store(set).jsonByKey(key, projection(set, fields), ctx.licence.visibility.of(set));
    if (json === undefined) throw Errors.RecordNotFound(set.name, set.key, key);
    return JSON.parse(json) as Record<string, unknown>;
  }

  setNamed(name: string): EntitySetSpec | undefined {
    return this.sets.get(name);
  }
}
