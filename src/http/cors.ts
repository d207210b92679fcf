/**
 * CORS (the `cors` package), off unless CORS_ORIGINS lists the origins browsers may call the API from (`*`:
 * any). A preflight from a listed origin answers 204 with the methods and request headers a client of this
 * service sends; one from another origin gets no CORS headers (and the answer the path would give an OPTIONS
 * request, 405 under the service root), so the browser refuses it. Bearer tokens travel in a header, not a
 * cookie: credentials mode is not needed.
 */
import cors from 'cors';
import type { Middleware } from './pipeline';

const ALLOWED_HEADERS = ['Authorization', 'Prefer', 'OData-MaxVersion', 'OData-Version', 'Content-Type', 'Accept', 'X-Request-Id'];
const EXPOSED_HEADERS = [
  'OData-Version', 'Preference-Applied', 'ETag', 'Retry-After', 'X-Request-Id',
  'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'WWW-Authenticate',
];
/** How long a browser may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = 600;

/** The CORS middleware for these origins; undefined when the list is empty (CORS off). */
export function corsFor(origins: readonly string[]): Middleware | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return cors({
    origin: (origin, done) => done(null, origin !== undefined && (any || allowed.has(origin)) ? (any ? '*' : origin) : false),
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE,
    optionsSuccessStatus: 204,
  });
}
