/**
 * The admin API for clients, as the console uses it (admin clients only): list, add (the secret and static
 * token in the answer, once), change scope, revoke, rotate, and a licence check that answers as adding would.
 * Every operation is admin/client-admin.ts's, the same as `reso-server clients`; errors are OData error bodies.
 */
import express, { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { addClient, changeScope, checkLicence, ClientAdmin, existing, ClientRequest, LicenceTerms, listClients, revokeClient, rotateClient } from '../../admin/client-admin';
import { Errors } from '../../errors/catalogue';
import type { Step } from '../pipeline';

/** Refuses a client that is not an admin (after the bearer check). */
export function requireAdmin(what: string): Step {
  return (ctx, next) => next(ctx.client?.admin ? undefined : Errors.AdminRequired(what));
}

type Handler = (req: Request, res: Response) => Promise<unknown>;

/** Runs an operation and answers its result as JSON (`status` 201 for what it created). */
function answer(handler: Handler, status = 200): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    handler(req, res).then((body) => {
      res.status(status);
      res.setHeader('Cache-Control', 'no-store');
      res.json(body);
    }, next);
  };
}

function body(req: Request): Record<string, unknown> {
  const b = req.body as unknown;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw Errors.ClientSpecInvalid('body', 'a JSON object, sent as application/json');
  return b as Record<string, unknown>;
}

function optional<T>(b: Record<string, unknown>, name: string, check: (v: unknown) => v is T, expected: string): T | undefined {
  const v = b[name];
  if (v === undefined || v === null) return undefined;
  if (!check(v)) throw Errors.ClientSpecInvalid(name, expected);
  return v;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isNumber = (v: unknown): v is number => typeof v === 'number';
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);

/** A licence's terms from a body: an empty scope is all listings, hidden fields a list of names. */
function licenceTerms(b: Record<string, unknown>): LicenceTerms {
  const scope = optional(b, 'scope', isString, 'an OData filter on the listings, or null for all')?.trim();
  const hiddenFields = optional(b, 'hiddenFields', isStrings, 'a list of field names (a listing field by name, another set\'s as Set.Name)')?.map((f) => f.trim()).filter(Boolean);
  return { scope: scope || undefined, hiddenFields };
}

function clientRequest(b: Record<string, unknown>): ClientRequest {
  return {
    ...licenceTerms(b),
    name: optional(b, 'name', isString, 'a name') ?? '',
    id: optional(b, 'id', isString, 'a client id')?.trim() || undefined,
    rateLimit: optional(b, 'rateLimit', isNumber, 'a positive whole number of requests a minute'),
    admin: optional(b, 'admin', isBoolean, 'true or false') ?? false,
    staticToken: optional(b, 'staticToken', isBoolean, 'true or false') ?? false,
  };
}

/** `/admin/clients…` and `/admin/licence-check`, behind `guard` (ready, bearer check, admin clients only). */
export function adminClients(admin: ClientAdmin, guard: RequestHandler[]): Router {
  const router = express.Router({ caseSensitive: true });
  router.use(['/admin/clients', '/admin/licence-check'], ...guard, express.json({ limit: '16kb' }));
  router.get('/admin/clients', answer(async () => ({ value: await listClients(admin) })));
  router.post('/admin/clients', answer((req) => addClient(admin, clientRequest(body(req))), 201));
  router.get('/admin/clients/:id', answer((req) => existing(admin, req.params.id)));
  router.put('/admin/clients/:id/scope', answer((req) => changeScope(admin, req.params.id, licenceTerms(body(req)).scope)));
  router.post('/admin/clients/:id/revoke', answer((req) => revokeClient(admin, req.params.id)));
  router.post('/admin/clients/:id/rotate', answer((req) => rotateClient(admin, req.params.id)));
  router.post('/admin/licence-check', answer(async (req) => {
    const terms = licenceTerms(body(req));
    checkLicence(admin.model, terms);
    return { valid: true, ...terms };
  }));
  return router;
}
