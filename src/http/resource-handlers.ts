/**
 * What the generated routers call, for each entity set: a collection query, `/$count`, and a fetch by key.
 * Each runs the query pipeline once: parse (model-free) → bind (against the field tables) → translate (SQL).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EntitySetSpec, ResourceHandlers } from '../model/service-model';
import { bindQuery } from '../query/bind-query';
import type { BoundQuery } from '../query/bound';
import { parseQueryOptions } from '../query/parse-options';
import { keysetAfter } from '../query/keyset';
import { projection } from '../query/projection';
import { nextLink, pageSize } from '../paging/page-request';
import { queryDigest } from '../paging/skiptoken';
import { translateFilter } from '../query/translate';
import { both, Visibility } from '../query/visibility';
import type { ListingService } from '../service';
import type { AppOptions } from './app';
import { parseKeyPredicate } from './key-predicate';
import { notFound } from './odata-error';
import { queryOptions } from './query-string';
import { collectionBody, entityBody, sendJson, serviceRoot } from './response';

function handle(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => { fn(req, res).catch(next); };
}

export function resourceHandlers(service: ListingService, options: AppOptions): ResourceHandlers {
  const parse = (req: Request) => parseQueryOptions(queryOptions(req), { maxFilterLength: options.maxFilterLength });
  const bind = (set: EntitySetSpec, req: Request, single = false): BoundQuery => bindQuery(set, parse(req), { single });
  const visibility = new Visibility(service.model, service.db.dialect, options.feedScope);
  const where = (set: EntitySetSpec, q: BoundQuery) =>
    both(visibility.of(set), q.filter ? translateFilter(q.filter, service.db.dialect) : undefined);

  return {
    collection(set: EntitySetSpec) {
      const store = service.store(set);
      return handle(async (req, res) => {
        const tree = parse(req);
        const q = bindQuery(set, tree);
        const filter = where(set, q);
        const shape = projection(set, q.select);
        const page = pageSize(req, options.pageSize, options.maxPageSize);
        await service.ready();
        const digest = queryDigest(set.name, { ...tree.texts, skiptoken: undefined, format: undefined });
        const position = q.skiptoken !== undefined ? service.skipTokens.decode(q.skiptoken, digest) : undefined;
        const returned = position?.returned ?? 0;
        const limit = Math.min(page.size, (q.top ?? Number.MAX_SAFE_INTEGER) - returned);
        // One row more than the page tells whether another page follows.
        const result = limit <= 0 ? { records: [], sortValues: [] } : await store.query({
          where: filter,
          after: position ? keysetAfter(q.orderBy, position.last) : undefined,
          orderBy: q.orderBy,
          limit: limit + 1,
          projection: shape,
        });
        const records = result.records.slice(0, Math.max(limit, 0));
        let next: string | undefined;
        // Another page follows when rows remain and $top (a total across pages) is not yet reached.
        if (result.records.length > limit && returned + records.length < (q.top ?? Number.MAX_SAFE_INTEGER)) {
          const token = service.skipTokens.encode({ last: result.sortValues[limit - 1], returned: returned + records.length }, digest);
          next = nextLink(serviceRoot(req, options), req, token);
        }
        const count = q.count ? await store.count(filter) : undefined;
        if (page.applied) res.setHeader('Preference-Applied', page.applied);
        sendJson(res, collectionBody(`${serviceRoot(req, options)}/$metadata#${set.name}${shape.contextSuffix}`, records, { count, nextLink: next }));
      });
    },
    count(set: EntitySetSpec) {
      const store = service.store(set);
      return handle(async (req, res) => {
        const q = bind(set, req);
        await service.ready();
        const n = await store.count(where(set, q));
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.end(String(n));
      });
    },
    byKey(set: EntitySetSpec) {
      const store = service.store(set);
      return handle(async (req, res) => {
        const key = parseKeyPredicate(set, req.params[0]);
        const q = bind(set, req, true);
        const shape = projection(set, q.select);
        await service.ready();
        const json = await store.jsonByKey(key, shape, visibility.of(set));
        if (json === undefined) throw notFound(`no ${set.name} record has ${set.key} ${JSON.stringify(key)}`, set.key);
        sendJson(res, entityBody(`${serviceRoot(req, options)}/$metadata#${set.name}${shape.contextSuffix}/$entity`, json));
      });
    },
  };
}
