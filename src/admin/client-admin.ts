/**
 * The operator's work on clients, once: `reso-server clients …` (admin/operator-cli.ts) and the admin API the
 * console uses (http/admin-clients.ts) both call these, so a client described either way is checked the same
 * way (with the service's own parser and binder for its scope) before anything is stored. Errors are the
 * catalogue's: the command line prints their message, the HTTP edge gives them a status.
 */
import type { Client, ClientRegistry, NewClient, Rotation } from '../auth/clients';
import { Licence } from '../auth/licence';
import { Errors } from '../errors/catalogue';
import type { ServiceModel } from '../model/service-model';

/** What the operations use: the registry, and the model to check a licence before it is stored. */
export interface ClientAdmin {
  readonly model: ServiceModel;
  readonly clients: ClientRegistry;
}

/** A new client as the operator describes it; `staticToken` also issues a token that does not expire. */
export interface ClientRequest extends NewClient {
  readonly staticToken?: boolean;
}

/** A new client with its secret (and static token), each shown once: only their hashes are stored. */
export interface AddedClient {
  readonly client: Client;
  readonly secret: string;
  readonly staticToken?: string;
}

/** What a licence is made of: the listings a client sees and the fields hidden from it. */
export interface LicenceTerms {
  readonly scope?: string;
  readonly hiddenFields?: readonly string[];
}

const CLIENT_ID = /^[A-Za-z0-9._-]{1,64}$/;
const NAME_MAX = 200;

/**
 * Refuses a licence the service could not apply: a scope that is not a usable filter on the listings
 * (ScopeInvalid, carrying the parser's or binder's error), or a hidden field it cannot hide (HiddenFieldInvalid).
 */
export function checkLicence(model: ServiceModel, terms: LicenceTerms): void {
  new Licence(model, undefined, { id: 'check', name: 'check', scope: terms.scope, hiddenFields: terms.hiddenFields ?? [], admin: false, createdAt: '' });
}

/** Refuses a description of a client that cannot be stored (ClientSpecInvalid, naming the part at fault). */
export function checkClientRequest(spec: ClientRequest): void {
  if (typeof spec.name !== 'string' || !spec.name.trim() || spec.name.length > NAME_MAX) {
    throw Errors.ClientSpecInvalid('name', `1 to ${NAME_MAX} characters`);
  }
  if (spec.id !== undefined && !CLIENT_ID.test(spec.id)) throw Errors.ClientSpecInvalid('id', '1 to 64 letters, digits, ".", "_" or "-"');
  if (spec.rateLimit !== undefined && (!Number.isInteger(spec.rateLimit) || spec.rateLimit < 1)) {
    throw Errors.ClientSpecInvalid('rateLimit', 'a positive whole number of requests a minute');
  }
}

export async function addClient(admin: ClientAdmin, spec: ClientRequest): Promise<AddedClient> {
  checkClientRequest(spec);
  // A scope or hidden field the service could not apply is refused now, not at the client's first request.
  checkLicence(admin.model, spec);
  const { staticToken, ...client } = spec;
  const added = await admin.clients.register(client);
  if (!added) throw Errors.ClientExists(spec.id ?? '');
  if (!staticToken) return added;
  return { ...added, staticToken: await admin.clients.issueToken(added.client.id, undefined) };
}

export function listClients(admin: ClientAdmin): Promise<Client[]> {
  return admin.clients.list();
}

/** The client with this id (ClientNotFound if none). */
export async function existing(admin: ClientAdmin, id: string): Promise<Client> {
  const client = await admin.clients.get(id);
  if (!client) throw Errors.ClientNotFound(id);
  return client;
}

/** A new scope (undefined: all listings), checked with the client's hidden fields; its marks from before are refused (ScopeChanged). */
export async function changeScope(admin: ClientAdmin, id: string, scope: string | undefined): Promise<Client> {
  const client = await existing(admin, id);
  checkLicence(admin.model, { scope, hiddenFields: client.hiddenFields });
  await admin.clients.setScope(id, scope);
  return existing(admin, id);
}

/** Ends the client's secret and every token it holds. */
export async function revokeClient(admin: ClientAdmin, id: string): Promise<Client> {
  await existing(admin, id);
  await admin.clients.revoke(id);
  return existing(admin, id);
}

/** A new secret (and static token, if it held one); every token issued before ends. A revoked client stays revoked (ClientRevoked). */
export async function rotateClient(admin: ClientAdmin, id: string): Promise<Rotation> {
  const client = await existing(admin, id);
  if (client.revokedAt) throw Errors.ClientRevoked(id, client.revokedAt);
  return admin.clients.rotate(id);
}
