/** The service document and the metadata document (XML or CSDL JSON). */
import type { Request, RequestHandler } from 'express';
import type { EntitySetSpec } from '../model/service-model';
import { clientOf } from './authentication';
import type { Licences } from '../auth/licence';
import type { AppOptions } from './app';
import { Errors } from '../errors/catalogue';
import { JSON_FORMAT, requireJsonFormat, XML_FORMAT } from '../query/formats';
import { contextFor, serviceRoot, sendJson } from './response';
import { queryOptions } from './query-string';
import { metadataTag, notModified } from './caching';
import { odataVersionOf } from './json-format';

export function serviceDocument(sets: readonly EntitySetSpec[], options: AppOptions): RequestHandler {
  const value = sets.map((s) => ({ name: s.name, kind: 'EntitySet', url: s.name }));
  const body = (context: string | undefined) => JSON.stringify({ ...(context !== undefined ? { '@odata.context': context } : {}), value });
  return (req, res) => {
    jsonFormat(req);
    sendJson(res, body(contextFor(res, `${serviceRoot(req, options)}/$metadata`)));
  };
}

/**
 * The metadata as the client is licensed to see it (without its hidden fields). The XML document declares
 * the version the response speaks: 4.0 to a 4.0 client (the document uses nothing 4.01 added); CSDL JSON
 * exists only since 4.01 and says so.
 */
export function metadataDocument(licences: Licences): RequestHandler {
  return (req, res) => {
    const views = licences.of(clientOf(res)).metadata();
    const json = metadataFormat(req) === 'json';
    const document = json ? views.json() : views.xml(odataVersionOf(res));
    if (notModified(req, res, metadataTag(document))) return;
    if (json) {
      sendJson(res, document);
    } else {
      res.setHeader('Content-Type', 'application/xml; charset=utf-8');
      res.end(document);
    }
  };
}


/** $format first, then Accept; XML unless JSON is asked for (the OData default for $metadata). */
function metadataFormat(req: Request): 'xml' | 'json' {
  const format = queryOptions(req).$format;
  if (format !== undefined) {
    if (JSON_FORMAT.test(format)) return 'json';
    if (XML_FORMAT.test(format)) return 'xml';
    throw Errors.FormatNotSupported(format, 'metadata');
  }
  const accept = req.headers.accept ?? '';
  if (!accept || /application\/xml|\*\/\*|application\/\*/i.test(accept)) return 'xml';
  if (/application\/json/i.test(accept)) return 'json';
  throw Errors.MediaTypeNotAcceptable(accept);
}

/** Data responses are JSON only. */
export function jsonFormat(req: Request): void {
  requireJsonFormat(queryOptions(req).$format);
}
