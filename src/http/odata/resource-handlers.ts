/**
 * The data requests of each entity set: a collection query, `/$count`, a fetch by key, and navigation paths
 * (`Property('<key>')/Media`). Each runs the request's plan (request-plans.ts: parsed, bound and
 * prepared once per shape) and writes from it: a page reads by keyset in batches and expands each batch.
 */
import type { EntitySetSpec, FieldSpec, ServiceModel } from '../../model/service-model';
import { PagePlan, PagePlanner, PagingParts } from '../../paging/page-plan';
import type { BoundPredicate } from '../../query/bound';
import { projection } from '../../query/projection';
import { relatedTo } from '../../query/related-records';
import type { RequestPlan } from '../../query/request-plan';
import type { LicenceSource } from '../../auth/licence';
import { TRANSACTION_CLASSES, UsageRecorder } from '../../metering/meter';
import type { PreparedRead } from '../../storage/records/record-store';
import type { RecordStores } from '../../storage/records/record-stores';
import type { WriteMark } from '../../storage/records/write-mark';
import { Errors } from '../../errors/catalogue';
import { type AppOptions, DEFAULT_GZIP_PAGE_CACHE_BYTES, DEFAULT_GZIP_RUN_CACHE_BYTES } from '../app-options';
import { withExpansions } from './expansions';
import { parseKeyPredicate } from './key-predicate';
import { PageBatches } from './page-batches';
import { entityTag, notModified } from '../caching';
import { EntityShapers } from './entity-shape';
import { jsonContentType, preferenceApplied } from './json-format';
import type { RequestContext } from '../request-context';
import { ExecutablePlan, RequestPlans } from './request-plans';
import { RunSegments } from '../gzip/run-segments';
import type { StitchedBody } from '../gzip/stitched-body';
import { sendStitched, sendStitchedEntity, stitchedPage, stitches, writeStitchedPage } from './stitched-responses';
import { PageBodies } from '../gzip/page-bodies';
import { BodyWriter, collectionBody, collectionHead, collectionTail, entityBody, noContent, type RecordBytes, sendJson, sendPieces, sendText } from './response';

interface PageScope {
  /** A condition beyond the request's own (a navigation path's parent). */
  readonly parent?: BoundPredicate;
  readonly defaultOrder?: readonly string[];
}

/** What the data handlers use. */
export interface ResourceParts extends PagingParts {
  readonly model: ServiceModel;
  readonly stores: RecordStores;
  readonly licences: LicenceSource;
  readonly meter: UsageRecorder;
  /** What every record write moves: with it, stitched gzip pages are kept whole while it stays (http/gzip/page-bodies.ts). */
  readonly writeMark?: Pick<WriteMark, 'current'>;
}

/** One request's work against one set, for each kind of path. */
export class ResourceRequests {
  readonly plans: RequestPlans;
  private readonly sets: ReadonlyMap<string, EntitySetSpec>;
  private readonly shapers: EntityShapers;
  private readonly paging: PagePlanner;
  /** Compressed runs of records, for gzip bodies stitched from them (http/gzip). */
  private readonly runs: RunSegments;
  /** Stitched gzip pages kept whole while no record is written (http/gzip/page-bodies.ts). */
  private readonly pages: PageBodies;

  constructor(private readonly parts: ResourceParts, private readonly options: AppOptions) {
    this.paging = new PagePlanner(parts, options);
    this.runs = new RunSegments(options.gzipRunCacheBytes ?? DEFAULT_GZIP_RUN_CACHE_BYTES);
    options.metrics?.gzipRuns(() => this.runs.stats());
    this.pages = new PageBodies(options.gzipPageCacheBytes ?? DEFAULT_GZIP_PAGE_CACHE_BYTES);
    options.metrics?.gzipPages(() => this.pages.stats());
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
    const { query, tree } = p.plan;
    const page = await this.paging.plan({ set, query, tree, options: ctx.query, search: ctx.search, path: ctx.path!, client: ctx.client, req: ctx.req });
    const stitched = stitches(ctx, p, this.options.compression) ? stitchedPage(this.runs, p) : undefined;
    const kept = stitched && !scope.parent ? await this.keptPage(ctx, p, page) : undefined;
    if (kept?.body) {
      preferenceApplied(ctx, page.applied);
      await this.charge(ctx, p.plan.charge);
      return sendStitched(ctx, [kept.body], this.options.writeStallMs);
    }
    const batches = this.batches(ctx, p, read, page, stitched);
    const first = await batches.next();
    // Once, after the first batch: retention may have passed the mark while the page was read (a gap).
    await page.refuseExpiredMark();
    const count = query.count ? await read.count() : undefined;
    preferenceApplied(ctx, page.applied);
    await this.charge(ctx, p.plan.charge);
    await this.writePage(ctx, p, batches, first, count, () => page.nextLink(ctx.root, batches), stitched, kept?.keep);
  }

  /**
   * A stitched page kept whole (http/gzip/page-bodies.ts): its body when no record was written since it was
   * read, else how to keep the page about to be written. The write mark is read before the page's records are.
   * Not for the change log's own pages (retention removes events without a record write) or a plan made for one
   * request.
   */
  private async keptPage(ctx: RequestContext, p: ExecutablePlan, page: PagePlan) {
    const marks = this.parts.writeMark;
    if (!marks || !this.pages.keeping || p.key === undefined || p.set.changeLog) return undefined;
    const key = `${p.key}\u0000${ctx.root}\u0000${page.place}`;
    const mark = await marks.current();
    const body = this.pages.find(key, mark);
    return { body, keep: (written: readonly Buffer[]) => this.pages.keep(key, mark, written) };
  }

  /** `stitched`: the page's gzip body, whose kept runs' records need not be read (PageRead.needed). */
  private batches(ctx: RequestContext, p: ExecutablePlan, read: PreparedRead, page: PagePlan, stitched?: StitchedBody): PageBatches {
    const format = { set: p.set, shaper: this.shapers.shaper(ctx.format, ctx.root) };
    return new PageBatches(read, {
      after: page.after,
      limit: page.limit,
      skip: p.plan.query.skip,
      batch: this.options.pageBatchSize,
      keyAt: p.plan.keyAt,
      expand: (parents, records, first) => withExpansions(p.expansions, parents, records, format, first),
      needed: stitched && (() => (stitched.worthAsking ? (keys, revisions, position) => stitched.needed(keys, revisions, position) : undefined)),
    });
  }

  private async writePage(
    ctx: RequestContext, p: ExecutablePlan, batches: PageBatches, first: RecordBytes[], count: number | undefined, next: () => string | undefined,
    stitched?: StitchedBody, keep?: (pieces: readonly Buffer[]) => void,
  ): Promise<void> {
    const countText = count !== undefined && ctx.format.ieee754 ? String(count) : count;
    const context = ctx.context(`${ctx.root}/$metadata#${p.plan.context}`);
    if (stitched) return writeStitchedPage(ctx, stitched, batches, first, { context, count: countText }, next, this.options.writeStallMs, keep);
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
    if (stitches(ctx, p, this.options.compression) && Buffer.isBuffer(record)) {
      if (sendStitchedEntity(ctx, this.runs, set, { key, revision: found.revision, record }, body, this.options.writeStallMs)) return;
    }
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
