/** The `$format` values this service understands. */
import { Errors } from '../errors/catalogue';

export const JSON_FORMAT = /^(json|application\/json)(;.*)?$/i;
export const XML_FORMAT = /^(xml|application\/xml)(;.*)?$/i;

/** Data responses are JSON only. */
export function requireJsonFormat(format: string | undefined): void {
  if (format !== undefined && !JSON_FORMAT.test(format)) throw Errors.FormatNotSupported(format, 'data');
}
