/**
 * Errors as values: each carries its HTTP status and OData error code, and becomes the OData error body
 * `{"error":{"code","message","target","details"}}` at the HTTP edge (see app.ts).
 */
export interface ErrorDetail {
  readonly code: string;
  readonly message: string;
  readonly target?: string;
}

export class ODataError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly target?: string,
    readonly details: readonly ErrorDetail[] = [],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  body(): { error: { code: string; message: string; target?: string; details: readonly ErrorDetail[] } } {
    return { error: { code: this.code, message: this.message, ...(this.target ? { target: this.target } : {}), details: this.details } };
  }
}

export const badRequest = (message: string, target?: string) => new ODataError(400, 'BadRequest', message, target);
export const notFound = (message: string, target?: string) => new ODataError(404, 'NotFound', message, target);
export const notImplemented = (message: string, target?: string) => new ODataError(501, 'NotImplemented', message, target);
export const notAcceptable = (message: string, target?: string) => new ODataError(406, 'NotAcceptable', message, target);
export const serviceUnavailable = (message: string, retryAfterSeconds: number) =>
  new ODataError(503, 'ServiceUnavailable', message, undefined, [], { 'Retry-After': String(retryAfterSeconds) });
