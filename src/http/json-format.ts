/**
 * The JSON a data response is written in (OData JSON Format 4.01 §3): how much control information it carries
 * (`odata.metadata=minimal`, the default, or `none`: no context URL), from `$format` when given, else from the
 * `Accept` header's media ranges. A request that accepts no JSON at all gets 406, not a JSON body it did not
 * ask for; `odata.metadata=full` is answered as minimal, and the Content-Type says so.
 */
import type { Request, RequestHandler, Response } from 'express';
import { Errors } from '../errors/catalogue';
import { JSON_FORMAT } from '../query/formats';
import { queryOptions } from './query-string';

export type MetadataLevel = 'minimal' | 'none';

interface MediaRange {
  readonly type: string;
  readonly params: ReadonlyMap<string, string>;
  readonly q: number;
}

function mediaRange(text: string): MediaRange {
  const [type, ...rest] = text.split(';');
  const params = new Map<string, string>();
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq > 0) params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim().replace(/^"|"$/g, '').toLowerCase());
  }
  const q = params.has('q') ? Number(params.get('q')) : 1;
  return { type: type.trim().toLowerCase(), params, q: Number.isFinite(q) ? q : 0 };
}

const JSON_RANGES = new Set(['application/json', 'application/*', '*/*']);

function levelOf(range: MediaRange): MetadataLevel {
  return range.params.get('odata.metadata') === 'none' ? 'none' : 'minimal';
}

/** `$format` first (json, or application/json with parameters), then `Accept`; no Accept means any. */
export function negotiateMetadataLevel(req: Request): MetadataLevel {
  const format = queryOptions(req).$format;
  if (format !== undefined && JSON_FORMAT.test(format)) return levelOf(mediaRange(format.replace(/^json\b/i, 'application/json')));
  // Any other $format is refused where the query is bound (FormatNotSupported).
  if (format !== undefined) return 'minimal';
  const accept = req.headers.accept?.trim();
  if (!accept) return 'minimal';
  const json = accept.split(',').map(mediaRange).filter((r) => r.q > 0 && JSON_RANGES.has(r.type))
    .sort((a, b) => b.q - a.q);
  if (json.length === 0) throw Errors.MediaTypeNotAcceptable(accept, 'data');
  return levelOf(json[0]);
}

/** Negotiates once per data request; handlers read the result with `metadataLevel`. */
export function negotiateJson(): RequestHandler {
  return (req, res, next) => {
    try {
      res.locals.odataMetadata = negotiateMetadataLevel(req);
      next();
    } catch (e) {
      next(e);
    }
  };
}

export function metadataLevel(res: Response): MetadataLevel {
  return (res.locals.odataMetadata as MetadataLevel | undefined) ?? 'minimal';
}

export function jsonContentType(level: MetadataLevel): string {
  return `application/json; odata.metadata=${level}; charset=utf-8`;
}
