/** Writing responses without rebuilding records: stored record texts are spliced into the body as they are. */
import type { Request, Response } from 'express';
import type { AppOptions } from './app';

export const SERVICE_ROOT = '/odata';

export const JSON_CONTENT_TYPE = 'application/json; odata.metadata=minimal; charset=utf-8';

export function serviceRoot(req: Request, options: AppOptions): string {
  return options.baseUrl ?? `${req.protocol}://${req.headers.host ?? 'localhost'}${SERVICE_ROOT}`;
}

export function sendJson(res: Response, body: string): void {
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.end(body);
}

/** One entity: the context annotation spliced in front of the stored record's fields. */
export function entityBody(context: string, recordJson: string): string {
  const rest = recordJson.length > 2 ? `,${recordJson.slice(1)}` : '}';
  return `{"@odata.context":${JSON.stringify(context)}${rest}`;
}

/** A collection page: stored records joined into `value`. */
export function collectionBody(context: string, recordJsons: readonly string[], extra: { count?: number; nextLink?: string } = {}): string {
  const count = extra.count !== undefined ? `,"@odata.count":${extra.count}` : '';
  const next = extra.nextLink ? `,"@odata.nextLink":${JSON.stringify(extra.nextLink)}` : '';
  return `{"@odata.context":${JSON.stringify(context)}${count},"value":[${recordJsons.join(',')}]${next}}`;
}
