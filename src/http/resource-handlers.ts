/**
 * What the generated routers call, for each entity set: a collection query, `/$count`, and a fetch by key.
 * Each runs the query pipeline once: parse (model-free) → bind (against the field tables) → translate (SQL).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EntitySetSpec, ResourceHandlers } from '../model/service-model';
import { bindQuery } from '../query/bind-query';
import type { BoundQuery } from '../query/bound';
import { parseQueryOptions } from '../query/parse-options';
import { projection } from '../query/projection';
import { translateFilter } from '../query/translate';
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
  const bind = (set: EntitySetSpec, req: Request, single = false): BoundQuery =>
    bindQuery(set, parseQueryOptions(queryOptions(req), { maxFilterLength: options.maxFilterLength }), { single });
  const where = (q: BoundQuery) => (q.filter ? translateFilter(q.filter, service.db.dialect) : undefined);

  return {
    collection(set: EntitySetSpec) {
      const store = service.store(set);
      return handle(async (req, res) => {
        const q = bind(set, req);
        const filter = where(q);
        const shape = projection(set, q.select);
        await service.ready();
        const limit = Math.min(options.pageSize, q.top ?? Number.MAX_SAFE_INTEGER);
        const records = limit === 0 ? [] : await store.query({ where: filter, orderBy: q.orderBy, limit, projection: shape });
        const count = q.count ? await store.count(filter) : undefined;
        sendJson(res, collectionBody(`${serviceRoot(req, options)}/$metadata#${set.name}${shape.contextSuffix}`, records, { count }));
      });
    },
    count(set: EntitySetSpec) {
      const store = service.store(set);
      return handle(async (req, res) => {
        const q = bind(set, req);
        await service.ready();
        const n = await store.count(where(q));
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
        const json = await store.jsonByKey(key, shape);
        if (json === undefined) throw notFound(`no ${set.name} record has ${set.key} ${JSON.stringify(key)}`, set.key);
        sendJson(res, entityBody(`${serviceRoot(req, options)}/$metadata#${set.name}${shape.contextSuffix}/$entity`, json));
      });
    },
  };
}
