/**
 * OAuth2 client credentials (RFC 6749 §4.4) for an upstream: a token fetched from the token URL, kept until shortly
 * before it expires, fetched again when the upstream refuses it. The secret goes only into the token request's
 * form body and never into a message.
 */
import type { Clock } from '../foundation/clock';
import { UpstreamAuth, UpstreamFault } from './upstream';
import { judgeStatus } from './upstream-answer';
import { Agents, exchange } from './upstream-request';

type ClientCredentials = Extract<UpstreamAuth, { kind: 'client-credentials' }>;

/** A token is renewed this long before its stated expiry (a tenth of its lifetime when that is shorter). */
const RENEW_BEFORE_MS = 60_000;

export interface TokenLimits {
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
}

export class TokenSource {
  private token?: { readonly value: string; readonly renewAt: number };
  private pending?: Promise<string>;

  constructor(
    private readonly auth: ClientCredentials,
    private readonly agents: Agents,
    private readonly clock: Clock,
    private readonly limits: TokenLimits,
  ) {}

  /** A token believed valid: the cached one, or a fresh one (one request however many callers wait). */
  async current(): Promise<string> {
    if (this.token && this.clock.now() < this.token.renewAt) return this.token.value;
    this.pending ??= this.fetch().finally(() => { this.pending = undefined; });
    return this.pending;
  }

  /** Forgets `refused` so that the next `current()` fetches a new token (unless another caller did already). */
  forget(refused: string): void {
    if (this.token?.value === refused) this.token = undefined;
  }

  private async fetch(): Promise<string> {
    const url = new URL(this.auth.tokenUrl);
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.auth.clientId, client_secret: this.auth.clientSecret });
    if (this.auth.scope) form.set('scope', this.auth.scope);
    const where = `token endpoint ${url.origin}${url.pathname}`;
    const got = await exchange(this.agents, {
      url,
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: form.toString(),
      timeoutMs: this.limits.timeoutMs,
      maxBytes: this.limits.maxResponseBytes,
    });
    // RFC 6749 §5.2: a refused client is 400 (invalid_client, unauthorized_client…) as often as 401.
    if (got.status === 400 || got.status === 401 || got.status === 403) {
      throw new UpstreamFault('credentials-refused', `${where} refused client ${this.auth.clientId} (${got.status}${oauthError(got.body)})`, got.status);
    }
    judgeStatus(got, where, false, this.clock.now());
    const answer = parseToken(got.body, where);
    const lifetimeMs = answer.expiresIn * 1000;
    this.token = { value: answer.accessToken, renewAt: this.clock.now() + lifetimeMs - Math.min(RENEW_BEFORE_MS, lifetimeMs / 10) };
    return answer.accessToken;
  }
}

/** The standard `error` code of a refusal (`invalid_client`), never its free text, which could echo what was sent. */
function oauthError(body: Buffer): string {
  try {
    const error = (JSON.parse(body.toString('utf8')) as { error?: unknown }).error;
    return typeof error === 'string' && /^[a-z_]{1,40}$/.test(error) ? `: ${error}` : '';
  } catch {
    return '';
  }
}

function parseToken(body: Buffer, where: string): { accessToken: string; expiresIn: number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new UpstreamFault('malformed', `${where}: the answer is not JSON`);
  }
  const { access_token: accessToken, expires_in: expiresIn } = (parsed ?? {}) as { access_token?: unknown; expires_in?: unknown };
  if (typeof accessToken !== 'string' || accessToken === '') throw new UpstreamFault('malformed', `${where}: the answer has no access_token`);
  // Without expires_in a token is kept for an hour and fetched again when refused.
  const seconds = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn : Number(expiresIn) > 0 ? Number(expiresIn) : 3600;
  return { accessToken, expiresIn: seconds };
}
