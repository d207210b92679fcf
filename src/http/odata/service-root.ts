/** The service document and the metadata document (XML or CSDL JSON): data routes (pipeline.ts). */
import type { IncomingMessage } from 'node:http';
import type { EntitySetSpec } from '../../model/service-model';
import { Errors } from '../../errors/catalogue';
import { JSON_FORMAT, requireJsonFormat, XML_FORMAT } from '../../query/formats';
import vary from 'vary';
import { sendJson } from './response';
import type { QueryOptions } from '../query-string';
import { MetadataTags, notModified } from '../caching';
import type { CsdlVersion } from '../../metadata/render-metadata';
import { annotationChoice } from '../../metadata/annotation-choice';
import type { DataHandler } from './data-routes';
import type { RequestContext } from '../request-context';

export function serviceDocument(sets: readonly EntitySetSpec[]): DataHandler {
  const value = sets.map((s) => ({ name: s.name, kind: 'EntitySet', url: s.name }));
  const body = (context: string | undefined) => JSON.stringify({ ...(context !== undefined ? { '@odata.context': context } : {}), value });
  return (ctx) => {
    // Data responses are JSON only.
    requireJsonFormat(ctx.query.$format);
    sendJson(ctx, body(ctx.context(`${ctx.root}/$metadata`)));
  };
}

/**
 * The metadata as the client is licensed to see it (without its hidden fields). CSDL JSON exists only since 4.01
 * and says so; the XML document says Version="4.01" only to a client that asks for 4.01 (csdlVersionFor). A client
 * may leave vocabularies' annotations out with the include-annotations preference (metadata/annotation-choice.ts).
 */
export function metadataDocument(): DataHandler {
  const tags = new MetadataTags();
  return (ctx) => {
    const { req, res } = ctx;
    const views = ctx.licence.metadata();
    const json = metadataFormat(req, ctx.query) === 'json';
    const prefer = req.headers.prefer;
    const asked = annotationChoice(Array.isArray(prefer) ? prefer.join(', ') : prefer);
    const document = json ? views.json(asked?.choice) : views.xml(csdlVersionFor(ctx), asked?.choice);
    vary(res, ['OData-MaxVersion', 'OData-Version', 'Prefer']);
    if (asked) res.setHeader('Preference-Applied', asked.applied);
    if (notModified(req, res, tags.of(document))) return;
    if (json) {
      sendJson(ctx, document);
    } else {
      res.setHeader('Content-Type', 'application/xml; charset=utf-8');
      res.end(document);
    }
  };
}

/**
 * The Version an XML document declares. It uses nothing CSDL 4.01 added, so it is a 4.0 document, and says so
 * unless the client asked for 4.01 (OData-MaxVersion: 4.01 or later, or a request written in 4.01 without one): what reads a saved EDMX sends no header, and
 * generators that know only 4.0 refuse or misread Version="4.01" (SAP Cloud SDK's reads it as OData V2). The
 * response's OData-Version stays the protocol version the service speaks (4.01 unless the client's maximum is
 * 4.0), which is what a 4.01 client checks before it uses 4.01 syntax such as `in`.
 */
function csdlVersionFor(ctx: RequestContext): CsdlVersion {
  const headers = ctx.req.headers;
  if (headers['odata-maxversion'] !== undefined) return ctx.version;
  // A request written in 4.01 (OData-Version: 4.01, without a maximum) comes from a client that reads 4.01.
  const written = /^\s*4\.(\d+)\s*$/.exec(String(headers['odata-version'] ?? ''));
  return written && Number(written[1]) >= 1 ? '4.01' : '4.0';
}

/** $format first, then Accept; XML unless JSON is asked for (the OData default for $metadata). */
function metadataFormat(req: IncomingMessage, query: QueryOptions): 'xml' | 'json' {
  const format = query.$format;
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
