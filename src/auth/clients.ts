/**
 * API clients (OAuth2 client credentials) and their access tokens. Secrets are kept as scrypt hashes and
 * tokens as SHA-256 hashes: the database never holds anything that grants access by itself.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { LRUCache } from 'lru-cache';
import { Clock, systemClock } from '../foundation/clock';
import type { ClientRow, ClientStore } from '../storage/tables/client-table';
import type { CredentialChanges } from '../storage/tables/credential-changes';
import { sha256 } from '../foundation/digest';

const scrypt = promisify(scryptCb) as (secret: string, salt: Buffer, length: number) => Promise<Buffer>;

export interface Client {
  readonly id: string;
  readonly name: string;
  /** OData filter on Property: the listings this client is licensed to see; undefined: all. */
  readonly scope?: string;
  /** Fields the client may not see: removed from payloads and its metadata, 403 when filtered. */
  readonly hiddenFields: readonly string[];
  /** Requests per minute; undefined: unlimited. */
  readonly rateLimit?: number;
  readonly admin: boolean;
  readonly createdAt: string;
  readonly revokedAt?: string;
  /** When an operator last changed the scope: replication positions from before it are refused (paging/scope-epoch.ts). */
  readonly scopeEpoch?: string;
}

export interface NewClient {
  id?: string;
  name: string;
  scope?: string;
  hiddenFields?: readonly string[];
  rateLimit?: number;
  admin?: boolean;
}

/** How long an access token from the token endpoint lives. */
export const TOKEN_LIFETIME_SECONDS = 3600;
/** How long a looked-up token is trusted without asking the database again (bounds how late an expiry set by hand bites). */
const CACHE_MS = 5_000;
/**
 * How often the credentials-changed mark is read (at most once per interval, by a request): a revocation or
 * rotation by another process or instance takes effect here within this bound.
 */
export const CREDENTIAL_CHECK_MS = 1_000;
/** Tokens whose lookup is kept (the least recently used goes first). */
const CACHE_SIZE = 10_000;
/** Tokens up to this long are their own cache key; longer ones are keyed by their hash, so the cache stays small. */
const CACHED_TOKEN_CHARS = 128;

/**
 * A token's key in the lookup cache: the token itself, which this process holds in every request anyway, so that
 * a known token costs no hash (a SHA-256 call was a few µs of every key fetch); the database only ever sees hashes.
 */
function cacheKey(token: string): string {
  return token.length <= CACHED_TOKEN_CHARS ? token : `#${hashToken(token)}`;
}

export const hashToken = (token: string) => sha256(token);
const newSecret = () => randomBytes(32).toString('base64url');

async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64url')}$${(await scrypt(secret, salt, 32)).toString('base64url')}`;
}

async function secretMatches(secret: string, stored: string): Promise<boolean> {
  const [kind, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(secret, Buffer.from(salt, 'base64url'), expected.length);
  return timingSafeEqual(actual, expected);
}

function rowToClient(r: Record<string, unknown>): Client {
  return {
    id: r.client_id as string,
    name: r.name as string,
    ...(r.scope ? { scope: r.scope as string } : {}),
    hiddenFields: JSON.parse(r.hidden_fields as string) as string[],
    ...(r.rate_limit !== null && r.rate_limit !== undefined ? { rateLimit: Number(r.rate_limit) } : {}),
    admin: r.admin === 1 || r.admin === true,
    createdAt: r.created_at as string,
    ...(r.revoked_at ? { revokedAt: r.revoked_at as string } : {}),
    ...(r.scope_epoch ? { scopeEpoch: r.scope_epoch as string } : {}),
  };
}

/** What the bearer check needs: the client of a token. */
export type TokenLookup = Pick<ClientRegistry, 'byToken' | 'recall'>;
/** What `clients rotate` did: the new secret, the static token replacing the old ones, how many tokens ended. */
export interface Rotation {
  readonly secret: string;
  /** Issued when the client held static tokens: they ended with the rest. */
  readonly staticToken?: string;
  /** Access tokens (static and from the token endpoint) that stopped working. */
  readonly tokensEnded: number;
}

/** What the token endpoint needs: checking credentials and issuing tokens. */
export type TokenIssuer = Pick<ClientRegistry, 'authenticate' | 'issueToken'>;

export class ClientRegistry {
  /**
   * Lookups by token (cacheKey), unknown tokens too; each kept until CACHE_MS or the token's expiry, whichever is
   * first.
   */
  private readonly cache: LRUCache<string, { client: Client | undefined }>;

  /** When the credentials-changed mark was last read, and what it said. */
  private seen: { at: number; mark: string | undefined } | undefined;
  private reading: Promise<void> | undefined;

  constructor(private readonly table: ClientStore, private readonly clock: Clock = systemClock, private readonly changes?: CredentialChanges) {
    // ttlResolution 0: read the clock on every check (a test moves it by hand).
    this.cache = new LRUCache({ max: CACHE_SIZE, perf: clock, ttlResolution: 0 });
  }

  /** Creates a client; returns it with its secret, which is shown once and never stored. */
  async add(spec: NewClient): Promise<{ client: Client; secret: string }> {
    const added = await this.register(spec);
    if (!added) throw new Error(`client ${spec.id} exists already`);
    return added;
  }

  /**
   * Creates a client unless one with its id exists (then undefined): one insert-if-absent, so that instances
   * registering the same client at once get exactly one.
   */
  async register(spec: NewClient): Promise<{ client: Client; secret: string } | undefined> {
    const id = spec.id ?? `client-${randomBytes(6).toString('hex')}`;
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) throw new Error('a client id is 1–64 letters, digits, ".", "_" or "-"');
    const secret = newSecret();
    const row: ClientRow = {
      client_id: id,
      name: spec.name,
      secret_hash: await hashSecret(secret),
      scope: spec.scope ?? null,
      hidden_fields: JSON.stringify(spec.hiddenFields ?? []),
      rate_limit: spec.rateLimit ?? null,
      admin: spec.admin ? 1 : 0,
      created_at: new Date(this.clock.now()).toISOString(),
      revoked_at: null,
    };
    if (!(await this.table.insertClient(row))) return undefined;
    return { client: (await this.get(id))!, secret };
  }

  async get(id: string): Promise<Client | undefined> {
    const row = await this.table.client(id);
    return row ? rowToClient(row) : undefined;
  }

  async list(): Promise<Client[]> {
    return (await this.table.clients()).map(rowToClient);
  }

  /** Revokes a client: its secret and every token stop working (on other instances within CREDENTIAL_CHECK_MS). */
  async revoke(id: string): Promise<void> {
    await this.update(id, { revoked_at: new Date(this.clock.now()).toISOString() });
    await this.table.deleteTokens(id);
    await this.changes?.announce();
  }

  /**
   * Changes the listings a client may see (undefined: all). Its replication marks and page positions from
   * before now are refused from then on (ScopeChanged), so that it walks each set again.
   */
  async setScope(id: string, scope: string | undefined): Promise<void> {
    if (!(await this.get(id))) throw new Error(`no client ${id}`);
    await this.table.updateScope(id, scope ?? null);
    this.cache.clear();
    await this.changes?.announce();
  }

  /**
   * A new secret for a client: the old secret and every token issued before stop working (on other instances
   * within CREDENTIAL_CHECK_MS); a client that held static tokens gets one new static token.
   */
  async rotate(id: string): Promise<Rotation> {
    const secret = newSecret();
    await this.update(id, { secret_hash: await hashSecret(secret) });
    const ended = await this.table.tokenExpiries(id);
    await this.table.deleteTokens(id);
    const staticToken = ended.some((e) => e === null) ? await this.issueToken(id, undefined) : undefined;
    await this.changes?.announce();
    return { secret, ...(staticToken ? { staticToken } : {}), tokensEnded: ended.length };
  }

  private async update(id: string, values: Partial<ClientRow>): Promise<void> {
    const existing = await this.get(id);
    if (!existing) throw new Error(`no client ${id}`);
    await this.table.updateClient(id, values);
    this.cache.clear();
  }

  /** The client whose id and secret these are, if it is active. */
  async authenticate(id: string, secret: string): Promise<Client | undefined> {
    const row = await this.table.client(id);
    if (!row || row.revoked_at || !(await secretMatches(secret, row.secret_hash as string))) return undefined;
    return rowToClient(row);
  }

  /** Issues an access token; `lifetimeSeconds` undefined makes a static token that does not expire. */
  async issueToken(clientId: string, lifetimeSeconds: number | undefined, token = randomBytes(32).toString('base64url')): Promise<string> {
    const now = this.clock.now();
    const row = {
      token_hash: hashToken(token),
      client_id: clientId,
      expires_at: lifetimeSeconds === undefined ? null : new Date(now + lifetimeSeconds * 1000).toISOString(),
      created_at: new Date(now).toISOString(),
    };
    const owner = await this.table.tokenOwner(row.token_hash);
    if (owner !== undefined && owner !== clientId) throw new Error('that token belongs to another client; choose another');
    await this.table.saveToken(row);
    return token;
  }

  /**
   * The answer for a token known from a recent lookup, when no check for changed credentials is due: no promise,
   * no hashing. `undefined` when only `byToken` can answer.
   */
  recall(token: string): { client: Client | undefined } | undefined {
    if (this.changesDue(this.clock.now())) return undefined;
    return this.cache.get(cacheKey(token));
  }

  /** The active client a bearer token belongs to, or undefined (unknown, expired or revoked). */
  async byToken(token: string): Promise<Client | undefined> {
    const key = cacheKey(token);
    const now = this.clock.now();
    if (this.changesDue(now)) await this.readChanges(now);
    const hit = this.cache.get(key);
    if (hit) return hit.client;
    const row = await this.table.clientByToken(hashToken(token));
    const valid = row && !row.revoked_at && (!row.expires_at || (row.expires_at as string) > new Date(now).toISOString());
    const client = valid ? rowToClient(row) : undefined;
    const expires = row?.expires_at ? Date.parse(row.expires_at as string) : Infinity;
    // The cache counts an entry stale once strictly more than its ttl has passed; the token is invalid at its expiry.
    const ttl = Math.min(CACHE_MS, expires - now) - 1;
    if (ttl > 0) this.cache.set(key, { client }, { ttl });
    return client;
  }

  /** Whether the credentials-changed mark is to be read again before a token is trusted from the cache. */
  private changesDue(now: number): boolean {
    return this.changes !== undefined && (!this.seen || now - this.seen.at >= CREDENTIAL_CHECK_MS);
  }

  /** Reads the credentials-changed mark (one read at a time); a new mark empties the token cache. */
  private readChanges(now: number): Promise<void> {
    this.reading ??= this.changes!.current().then((mark) => {
      if (this.seen && this.seen.mark !== mark) this.cache.clear();
      this.seen = { at: now, mark };
    }).finally(() => { this.reading = undefined; });
    return this.reading;
  }
}
