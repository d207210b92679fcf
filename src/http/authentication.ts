/**
 * OAuth2 on the wire: `POST /oauth2/token` (client-credentials grant, credentials as HTTP Basic or in the
 * form body, RFC 6749 §4.4; failed attempts throttled, auth/token-throttle.ts) and the bearer check in front of every
 * endpoint under the service root.
 */
import express, { Response } from 'express';
import type { Client, TokenIssuer, TokenLookup } from '../auth/clients';
import { TOKEN_LIFETIME_SECONDS } from '../auth/clients';
import { TokenThrottle } from '../auth/token-throttle';
import { Errors } from '../errors/catalogue';
import { REALM } from './error-status';
import type { Step } from './pipeline';

/** The bearer check: the request's client, in its context, or 401. */
export function requireBearer(clients: TokenLookup): Step {
  return (ctx, next) => {
    const header = ctx.req.headers.authorization;
    if (!header) return next(Errors.Unauthorized('missing'));
    const m = /^Bearer\s+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header);
    if (!m) return next(Errors.Unauthorized('malformed'));
    const admit = (client: Client | undefined) => {
      if (!client) return next(Errors.Unauthorized('refused'));
      ctx.client = client;
      next();
    };
    const known = clients.recall(m[1]);
    if (known) return admit(known.client);
    clients.byToken(m[1]).then(admit, next);
  };
}

function formDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

function tokenError(res: Response, status: number, error: string, description: string, basic = false): void {
  if (basic) res.setHeader('WWW-Authenticate', `Basic realm="${REALM}"`);
  res.setHeader('Cache-Control', 'no-store');
  res.status(status).json({ error, error_description: description });
}

export function tokenEndpoint(clients: TokenIssuer, throttle = new TokenThrottle()): express.Router {
  const router = express.Router();
  router.post('/oauth2/token', express.urlencoded({ extended: false, limit: '16kb' }), (req, res, next) => {
    (async () => {
      const form = (req.body ?? {}) as Record<string, string | string[]>;
      // RFC 6749 §3.2: a parameter must not be sent more than once (the form parser makes repeats an array).
      const repeated = Object.keys(form).find((k) => typeof form[k] !== 'string');
      if (repeated) return tokenError(res, 400, 'invalid_request', `${repeated} is sent more than once; send each parameter once`);
      const body = form as Record<string, string>;
      const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
      if (basic && (body.client_id !== undefined || body.client_secret !== undefined)) {
        return tokenError(res, 400, 'invalid_request', 'send the client credentials one way: HTTP Basic or the form body, not both');
      }
      if (body.grant_type !== 'client_credentials') {
        return tokenError(res, 400, body.grant_type ? 'unsupported_grant_type' : 'invalid_request', 'grant_type must be client_credentials');
      }
      const credentials = basic ? basicCredentials(basic[1]) : { id: body.client_id, secret: body.client_secret };
      // Every attempt from here on may check a secret: a throttled one is refused before any hashing.
      const attempt = throttle.begin(credentials?.id ?? '', req.socket.remoteAddress ?? '');
      if ('retryAfterSeconds' in attempt) {
        res.setHeader('Retry-After', String(attempt.retryAfterSeconds));
        const whose = attempt.by === 'client' ? 'this client id' : 'this address';
        return tokenError(res, 429, 'slow_down', `too many failed attempts for ${whose}; retry after ${attempt.retryAfterSeconds} s`);
      }
      if (!credentials) return tokenError(res, 401, 'invalid_client', 'HTTP Basic credentials must be client_id:client_secret', true);
      const { id, secret } = credentials;
      if (!id || !secret) return tokenError(res, 401, 'invalid_client', 'send client_id and client_secret (HTTP Basic or form body)', !!basic);
      const client = await clients.authenticate(id, secret);
      if (!client) return tokenError(res, 401, 'invalid_client', 'unknown client, wrong secret, or revoked', !!basic);
      attempt.succeeded();
      const token = await clients.issueToken(client.id, TOKEN_LIFETIME_SECONDS);
      res.setHeader('Cache-Control', 'no-store');
      res.json({ access_token: token, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_SECONDS });
    })().catch(next);
  });
  return router;
}

/** HTTP Basic credentials; undefined without the colon between id and secret. */
function basicCredentials(encoded: string): { id: string; secret: string } | undefined {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  // RFC 6749 §2.3.1: both parts are form-urlencoded before Basic encoding.
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}
