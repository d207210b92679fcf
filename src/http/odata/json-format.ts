/**
 * The JSON a data response is written in (OData JSON Format 4.01 §3, §4.1), negotiated once per request:
 * how much control information it carries (`metadata=minimal`, the default, `full` or `none`; spelled with or
 * without the 4.0 prefix `odata.`), whether Int64 and Decimal values are strings (`IEEE754Compatible=true`),
 * whether null values are left out (`Prefer: omit-values=nulls`), and the protocol version it speaks (4.0 to
 * a client whose OData-MaxVersion is 4.0). `$format` wins over `Accept`. A request that accepts no JSON at all
 * gets 406, not a JSON body it did not ask for.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import { Errors } from '../../errors/catalogue';
import { JSON_FORMAT } from '../../query/formats';
import type { QueryOptions } from '../query-string';

export type MetadataLevel = 'minimal' | 'full' | 'none';
export type ODataVersion = '4.0' | '4.01';

export interface JsonFormat {
  readonly metadata: MetadataLevel;
  /** Int64 and Decimal values (and the count) as strings. */
  readonly ieee754: boolean;
  /** Null properties left out (`Prefer: omit-values=nulls`); otherwise every property is there. */
  readonly omitNulls: boolean;
  readonly version: ODataVersion;
}

export const DEFAULT_FORMAT: JsonFormat = { metadata: 'minimal', ieee754: false, omitNulls: false, version: '4.01' };

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
const LEVELS: ReadonlySet<string> = new Set<MetadataLevel>(['minimal', 'full', 'none']);

/** The format parameters of the chosen range; unknown metadata values are answered as minimal, as the Content-Type says. */
function formatOf(range: MediaRange): Pick<JsonFormat, 'metadata' | 'ieee754'> {
  const level = range.params.get('odata.metadata') ?? range.params.get('metadata') ?? 'minimal';
  return {
    metadata: LEVELS.has(level) ? (level as MetadataLevel) : 'minimal',
    ieee754: (range.params.get('ieee754compatible') ?? range.params.get('odata.ieee754compatible')) === 'true',
  };
}

/**
 * The format of data requests, negotiated once per request (the request pipeline keeps it in the request's
 * context): `$format` first (json, or application/json with parameters), then `Accept`; no Accept means any.
 */
export class FormatNegotiation {
  /** A client sends the same Accept with every request: each header text is read once (a bounded few are kept). */
  private readonly accepted = new LRUCache<string, Pick<JsonFormat, 'metadata' | 'ieee754'>>({ max: 64 });

  format(req: IncomingMessage, query: QueryOptions, version: ODataVersion): JsonFormat {
    const prefer = req.headers.prefer;
    const range = this.range(req, query);
    const omitNulls = typeof prefer === 'string' && OMIT_NULLS.test(prefer);
    // Most requests ask for nothing but the default: they share its one object.
    if (range === DEFAULT_FORMAT && !omitNulls && version === DEFAULT_FORMAT.version) return DEFAULT_FORMAT;
    return { ...range, omitNulls, version };
  }

  private range(req: IncomingMessage, query: QueryOptions): Pick<JsonFormat, 'metadata' | 'ieee754'> {
    const format = query.$format;
    if (format !== undefined && JSON_FORMAT.test(format)) return formatOf(mediaRange(format.replace(/^json\b/i, 'application/json')));
    // Any other $format is refused where the query is bound (FormatNotSupported).
    if (format !== undefined) return DEFAULT_FORMAT;
    const accept = req.headers.accept?.trim();
    if (!accept) return DEFAULT_FORMAT;
    let range = this.accepted.get(accept);
    if (range === undefined) this.accepted.set(accept, (range = acceptedRange(accept)));
    return range;
  }
}

function acceptedRange(accept: string): Pick<JsonFormat, 'metadata' | 'ieee754'> {
  const json = accept.split(',').map(mediaRange).filter((r) => r.q > 0 && JSON_RANGES.has(r.type))
    .sort((a, b) => b.q - a.q);
  if (json.length === 0) throw Errors.MediaTypeNotAcceptable(accept, 'data');
  const format = formatOf(json[0]);
  return format.metadata === DEFAULT_FORMAT.metadata && format.ieee754 === DEFAULT_FORMAT.ieee754 ? DEFAULT_FORMAT : format;
}

const OMIT_NULLS = /(?:^|[,;\s])omit-values\s*=\s*"?nulls"?\s*(?:$|[,;])/i;

/**
 * The Content-Type of a data response, echoing the format parameters applied. The `odata.` spelling of the
 * metadata parameter is the one 4.0 requires and 4.01 clients read (the service writes one spelling for all).
 */
export function jsonContentType(format: Pick<JsonFormat, 'metadata' | 'ieee754'>): string {
  return CONTENT_TYPES[format.metadata][format.ieee754 ? 1 : 0];
}

function contentType(metadata: MetadataLevel, ieee754: boolean): string {
  return `application/json; odata.metadata=${metadata}${ieee754 ? '; IEEE754Compatible=true' : ''}; charset=utf-8`;
}

/** Every data response's Content-Type is one of these six, so none is built per response. */
const CONTENT_TYPES: Record<MetadataLevel, readonly [string, string]> = {
  minimal: [contentType('minimal', false), contentType('minimal', true)],
  full: [contentType('full', false), contentType('full', true)],
  none: [contentType('none', false), contentType('none', true)],
};

/**
 * `Preference-Applied` for the preferences a response honoured (e.g. the page size), with omit-values added. Given
 * the parts of the request's context it reads, not the context itself, which is built on this module's formats.
 */
export function preferenceApplied(ctx: { readonly format: JsonFormat; readonly res: ServerResponse }, ...applied: (string | undefined)[]): void {
  const { omitNulls } = ctx.format;
  if (applied.length === 0 && !omitNulls) return;
  const all = [...applied, omitNulls ? 'omit-values=nulls' : undefined].filter((p): p is string => !!p);
  if (all.length) ctx.res.setHeader('Preference-Applied', all.join(', '));
}
