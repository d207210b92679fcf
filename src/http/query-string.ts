/**
 * The request's query options. Parsed from the raw query once, with form decoding ('+' is a space, as
 * HTTP client libraries send it), and a repeated option is an error rather than silently an array.
 */
import { Errors } from '../errors/catalogue';

export type QueryOptions = Readonly<Record<string, string>>;

export function parseQueryString(raw: string): QueryOptions {
  const out: Record<string, string> = {};
  if (!raw) return out;
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(raw);
  } catch {
    throw Errors.QueryStringInvalid();
  }
  for (const [name, value] of params) {
    if (Object.prototype.hasOwnProperty.call(out, name)) throw Errors.OptionRepeated(name);
    out[name] = value;
  }
  return out;
}
