/**
 * What the generated routers call: a collection read and a fetch by key for each entity set.
 * Stored records go into the response as they are stored.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EntitySetSpec, ResourceHandlers } from '../model/service-model';
import type { ListingService } from '../service';
import type { AppOptions } from './app';
import { parseKeyPredicate } from './key-predicate';
import { badRequest, notFound, notImplemented } from './odata-error';
import { queryOptions } from './query-string';
import { collectionBody, entityBody, sendJson, serviceRoot } from './response';
import { jsonFormat } from './service-root';

/** System query options this release understands; anything else starting with `$` is refused, never ignored. */
const ACCEPTED_OPTIONS = new Set(['$format']);
const KNOWN_OPTIONS = new Set([
  '$filter', '$orderby', '$select', '$expand', '$top', '$count', '$skiptoken', '$search', '$apply',
  '$compute', '$index', '$levels', '$deltatoken', '$schemaversion', '$id',
]);

/**
 * A silently ignored $filter would hand a replicating client the wrong records, so options that are not
 * implemented yet are refused with 501, and $skip with the way to page instead.
 */
function checkOptions(req: Request): void {
  for (const name of Object.keys(queryOptions(req))) {
    if (!name.startsWith('$') || ACCEPTED_OPTIONS.has(name)) continue;
    if (name === '$skip') {
      throw notImplemented('$skip is not supported; page by following @odata.nextLink from the previous response', '$skip');
    }
    if (KNOWN_OPTIONS.has(name)) throw notImplemented(`${name} is not supported by this service yet`, name);
    throw badRequest(`${name} is not an OData system query option`, name);
  }
}

function handle(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => { fn(req, res).catch(next); };
}

export function resourceHandlers(service: ListingService, options: AppOptions): ResourceHandlers {
  return {
    collection(set: EntitySetSpec) {
      const store = service.store(set);
      return handle(async (req, res) => {
        checkOptions(req);
        jsonFormat(req);
        await service.ready();
        const records = await store.firstPage(options.pageSize);
        sendJson(res, collectionBody(`${serviceRoot(req, options)}/$metadata#${set.name}`, records));
      });
    },
    byKey(set: EntitySetSpec) {
      const store = service.store(set);
      return handle(async (req, res) => {
        checkOptions(req);
        jsonFormat(req);
        const key = parseKeyPredicate(set, req.params[0]);
        await service.ready();
        const json = await store.jsonByKey(key);
        if (json === undefined) throw notFound(`no ${set.name} record has ${set.key} ${JSON.stringify(key)}`, set.key);
        sendJson(res, entityBody(`${serviceRoot(req, options)}/$metadata#${set.name}/$entity`, json));
      });
    },
  };
}
