/**
 * What the generated routers call, for each entity set: a collection query, `/$count`, a fetch by key, and
 * navigation paths (`Property('<key>')/Media`). Each runs the query pipeline once: parse (model-free) →
 * bind (against the field tables) → translate (SQL), then pages by keyset and expands in batches.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EntitySetSpec, ResourceHandlers, ServiceModel } from '../model/service-model';
import { nextLink, pageSize } from '../paging/page-request';
import { queryDigest, SkipTokens } from '../paging/skiptoken';
import { bindQuery, BindOptions } from '../query/bind-query';
import type { BoundQuery } from '../query/bound';
import { keysetAfter } from '../query/keyset';
import { parseQueryOptions } from '../query/parse-options';
import { projection } from '../query/projection';
import { quoteIdentifier, SqlFragment, translateFilter } from '../query/translate';
import { both } from '../query/visibility';
import { clientOf } from '../auth/http';
import type { Licence, LicenceSource } from '../auth/licence';
import { CHARGED_EXPANSIONS, TransactionClass, UsageRecorder } from '../metering/meter';
import type { Dialect } from '../storage/database';
import type { RecordStores } from '../storage/record-stores';
import type { AppOptions } from './app';
import { contextProjection, withExpansions } from './expansions';
import { parseKeyPredicate } from './key-predicate';
import { badRequest, notFound } from './odata-error';
import { queryOptions } from './query-string';
import { collectionBody, entityBody, sendJson, serviceRoot } from './response';

function handle(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => { fn(req, res).catch(next); };
}

interface PageScope {
  /** A condition beyond the request's own (a navigation path's parent). */
  readonly within?: SqlFragment;
  readonly defaultOrder?: readonly string[];
}

/** What the data handlers use. */
export interface ResourceParts {
  readonly model: ServiceModel;
  readonly dialect: Dialect;
  readonly stores: RecordStores;
  readonly licences: LicenceSource;
  readonly meter: UsageRecorder;
  /** Seals and opens $skiptoken values (there whenever a handler runs: requests wait for readiness). */
  readonly skipTokens: () => SkipTokens;
}

export function resourceHandlers(parts: ResourceParts, options: AppOptions): ResourceHandlers {
  const { dialect, stores, licences, meter, skipTokens } = parts;
  const sets = new Map(parts.model.entitySets.map((s) => [s.name, s]));
  const parse = (req: Request) => parseQueryOptions(queryOptions(req), { maxFilterLength: options.maxFilterLength });
  const bind = (set: EntitySetSpec, req: Request, licence: Licence, extra: BindOptions = {}) => {
    const tree = parse(req);
    return { tree, q: bindQuery(set, tree, { sets, hidden: (s) => licence.hiddenIn(s), ...extra }) };
  };
  const where = (set: EntitySetSpec, q: BoundQuery, licence: Licence, within?: SqlFragment) =>
    both(both(licence.visibility.of(set), within), q.filter ? translateFilter(q.filter, dialect) : undefined);
  /** Counts the request's transactions (spec §8) before its response goes out. */
  const charge = (res: Response, cls: TransactionClass, q: BoundQuery) => {
    const client = clientOf(res);
    if (!client) return Promise.resolve();
    const expansions = q.expand.filter((e) => CHARGED_EXPANSIONS.has(e.navigation.name)).length;
    return meter.record(client.id, cls === 'A' ? { A: 1, B: expansions } : { B: 1 + expansions });
  };

  /** One page of a collection, with nextLink, count and expansions. */
  async function page(req: Request, res: Response, set: EntitySetSpec, scope: PageScope = {}): Promise<void> {
    const licence = licences.of(clientOf(res));
    const { tree, q } = bind(set, req, licence, { defaultOrder: scope.defaultOrder });
    const filter = where(set, q, licence, scope.within);
    const shape = projection(set, q.select, licence.hiddenIn(set));
    const size = pageSize(req, options.pageSize, options.maxPageSize);
    const store = stores.store(set);
    // A token is bound to the client and the path too: it continues one client's walk of one query.
    const digest = queryDigest(`${clientOf(res)?.id ?? ''} ${req.path}`, { ...tree.texts, skiptoken: undefined, format: undefined });
    const position = q.skiptoken !== undefined ? skipTokens().decode(q.skiptoken, digest) : undefined;
    const returned = position?.returned ?? 0;
    const limit = Math.min(size.size, (q.top ?? Number.MAX_SAFE_INTEGER) - returned);
    // One row more than the page tells whether another page follows.
    const result = limit <= 0 ? { records: [], sortValues: [] } : await store.query({
      where: filter,
      after: position ? keysetAfter(q.orderBy, position.last) : undefined,
      orderBy: q.orderBy,
      limit: limit + 1,
      projection: shape,
    });
    const n = Math.min(result.records.length, Math.max(limit, 0));
    const keyAt = q.orderBy.findIndex((o) => o.field.name === set.key);
    const keys = result.sortValues.slice(0, n).map((v) => v[keyAt]);
    const records = await withExpansions(stores, dialect, licence, q.expand, keys, result.records.slice(0, n));
    let next: string | undefined;
    // Another page follows when rows remain and $top (a total across pages) is not yet reached.
    if (result.records.length > limit && returned + n < (q.top ?? Number.MAX_SAFE_INTEGER)) {
      const token = skipTokens().encode({ last: result.sortValues[n - 1], returned: returned + n }, digest);
      next = nextLink(serviceRoot(req, options), req, token);
    }
    const count = q.count ? await store.count(filter) : undefined;
    if (size.applied) res.setHeader('Preference-Applied', size.applied);
    const context = `${serviceRoot(req, options)}/$metadata#${set.name}${contextProjection(q.select, q.expand)}`;
    const body = collectionBody(context, records, { count, nextLink: next });
    await charge(res, 'B', q);
    sendJson(res, body);
  }

  return {
    collection(set: EntitySetSpec) {
      return handle((req, res) => page(req, res, set));
    },
    count(set: EntitySetSpec) {
      return handle(async (req, res) => {
        const licence = licences.of(clientOf(res));
        const { q } = bind(set, req, licence);
        for (const [option, given] of [['$expand', q.expand.length > 0], ['$select', q.select !== undefined]] as const) {
          if (given) throw badRequest(`${option} does not apply to /$count, which answers a number`, option);
        }
            const n = await stores.store(set).count(where(set, q, licence));
        await charge(res, 'B', q);
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.end(String(n));
      });
    },
    byKey(set: EntitySetSpec) {
      return handle(async (req, res) => {
        const key = parseKeyPredicate(set, req.params[0]);
        const licence = licences.of(clientOf(res));
        const { q } = bind(set, req, licence, { single: true });
        const shape = projection(set, q.select, licence.hiddenIn(set));
            // Outside the client's licence is indistinguishable from absent.
        const json = await stores.store(set).jsonByKey(key, shape, licence.visibility.of(set));
        if (json === undefined) throw notFound(`no ${set.name} record has ${set.key} ${JSON.stringify(key)}`, set.key);
        const [record] = await withExpansions(stores, dialect, licence, q.expand, [key], [json]);
        const body = entityBody(`${serviceRoot(req, options)}/$metadata#${set.name}${contextProjection(q.select, q.expand)}/$entity`, record);
        await charge(res, 'A', q);
        sendJson(res, body);
      });
    },
    navigation(set: EntitySetSpec) {
      return handle(async (req, res) => {
        const key = parseKeyPredicate(set, req.params[0]);
        const nav = set.navigations.find((n) => n.name === req.params[1]);
        const target = nav && sets.get(nav.target);
        if (!nav?.join || !target || nav.join.referencedKey !== set.key) throw badRequest(`${set.name} has no navigation ${req.params[1]} to follow`, req.params[1]);
            // The parent must exist and be visible; otherwise the path leads nowhere (404, as for a missing record).
        const visible = licences.of(clientOf(res)).visibility.of(set);
        if ((await stores.store(set).jsonByKey(key, projection(set, [set.fieldsByName[set.key]]), visible)) === undefined) {
          throw notFound(`no ${set.name} record has ${set.key} ${JSON.stringify(key)}`, set.key);
        }
        const fk = target.fieldsByName[nav.join.foreignKey];
        await page(req, res, target, { within: { sql: `${quoteIdentifier(fk.column!)} = ?`, params: [key] }, defaultOrder: nav.order });
      });
    },
  };
}
