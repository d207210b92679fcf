/**
 * API clients and their access tokens in the database (reso_clients, reso_tokens). Rows are as stored;
 * auth/clients.ts decides what they mean.
 */
import type { Database, Executor, Row } from '../db/database';
import { CLIENTS_TABLE, TOKENS_TABLE } from './internal-schema';
import { compile, type Buildable } from '../sql/query-builder';
import { Settings } from './settings';
import { standIn, textTaking } from '../sql/shapes';

export interface ClientRow {
  client_id: string;
  name: string;
  secret_hash: string;
  scope: string | null;
  hidden_fields: string;
  rate_limit: number | null;
  admin: 0 | 1;
  created_at: string;
  revoked_at: string | null;
  scope_epoch?: string | null;
}

export interface TokenRow {
  token_hash: string;
  client_id: string;
  expires_at: string | null;
  created_at: string;
}

/** What the client registry asks of the database. */
export interface ClientStore {
  /** Inserts a client unless its id is taken; returns whether this call inserted it. */
  insertClient(row: ClientRow): Promise<boolean>;
  client(id: string): Promise<Row | undefined>;
  /** Every client, by id. */
  clients(): Promise<Row[]>;
  updateClient(id: string, values: Partial<ClientRow>): Promise<void>;
  /** Sets a client's scope and its epoch, a ModificationTimestamp from the one clock, in one transaction. */
  updateScope(id: string, scope: string | null): Promise<void>;
  deleteTokens(clientId: string): Promise<void>;
  /** The `expires_at` of each of a client's tokens (null: a static token). */
  tokenExpiries(clientId: string): Promise<(string | null)[]>;
  /** The client a token hash belongs to, if it is stored. */
  tokenOwner(tokenHash: string): Promise<string | undefined>;
  /** Stores a token, replacing one with the same hash. */
  saveToken(row: TokenRow): Promise<void>;
  /** The client row of a token hash, with the token's `expires_at`. */
  clientByToken(tokenHash: string): Promise<Row | undefined>;
}

const [CLIENT, HASH, EXPIRES, CREATED] = [standIn('client'), standIn('token hash'), standIn('expires'), standIn('created')];

export class ClientTable implements ClientStore {
  private readonly byTokenSql: string;
  private readonly clientSql: string;
  private readonly clientsSql: string;
  private readonly deleteTokensSql: string;
  private readonly expiriesSql: string;
  private readonly ownerSql: string;
  private readonly saveTokenSql: string;

  constructor(private readonly db: Database, private readonly settings: Settings = new Settings(db)) {
    const k = db.knex;
    const [clients, tokens] = [() => k(CLIENTS_TABLE), () => k(TOKENS_TABLE)];
    const [client, token] = [(column: string) => `${CLIENTS_TABLE}.${column}`, (column: string) => `${TOKENS_TABLE}.${column}`];
    this.byTokenSql = textTaking(tokens().join(CLIENTS_TABLE, token('client_id'), client('client_id'))
      .select(client('*'), token('expires_at')).where(token('token_hash'), HASH), [HASH]);
    this.clientSql = textTaking(clients().select('*').where('client_id', CLIENT), [CLIENT]);
    this.clientsSql = textTaking(clients().select('*').orderBy('client_id', 'asc'), []);
    this.deleteTokensSql = textTaking(tokens().where('client_id', CLIENT).delete(), [CLIENT]);
    this.expiriesSql = textTaking(tokens().select('expires_at').where('client_id', CLIENT), [CLIENT]);
    this.ownerSql = textTaking(tokens().select('client_id').where('token_hash', HASH), [HASH]);
    const row: Record<keyof TokenRow, string> = { token_hash: HASH, client_id: CLIENT, expires_at: EXPIRES, created_at: CREATED };
    // knex lists an insert's columns alphabetically.
    this.saveTokenSql = textTaking(tokens().insert(row).onConflict('token_hash').merge(['client_id', 'expires_at', 'created_at']), [CLIENT, CREATED, EXPIRES, HASH]);
  }

  async insertClient(row: ClientRow): Promise<boolean> {
    await this.run(this.db.dialect.keepExisting(this.db.knex(CLIENTS_TABLE).insert(row), ['client_id']));
    // Each secret hash has a salt of its own: only the row this call wrote has it.
    return (await this.client(row.client_id))?.secret_hash === row.secret_hash;
  }

  async client(id: string): Promise<Row | undefined> {
    const [row] = await this.db.all(this.clientSql, [id]);
    return row;
  }

  clients(): Promise<Row[]> {
    return this.db.all(this.clientsSql);
  }

  async updateClient(id: string, values: Partial<ClientRow>): Promise<void> {
    await this.run(this.db.knex(CLIENTS_TABLE).update(values).where('client_id', id));
  }

  async updateScope(id: string, scope: string | null): Promise<void> {
    await this.db.transaction(async (tx) => {
      const epoch = await this.settings.nextModificationTime(tx);
      await this.run(this.db.knex(CLIENTS_TABLE).update({ scope, scope_epoch: epoch }).where('client_id', id), tx);
    });
  }

  async deleteTokens(clientId: string): Promise<void> {
    await this.db.run(this.deleteTokensSql, [clientId]);
  }

  async tokenExpiries(clientId: string): Promise<(string | null)[]> {
    const rows = await this.db.all(this.expiriesSql, [clientId]);
    return rows.map((r) => (r.expires_at as string | null) ?? null);
  }

  async tokenOwner(tokenHash: string): Promise<string | undefined> {
    const [row] = await this.db.all(this.ownerSql, [tokenHash]);
    return row?.client_id as string | undefined;
  }

  async saveToken(row: TokenRow): Promise<void> {
    await this.db.run(this.saveTokenSql, [row.client_id, row.created_at, row.expires_at, row.token_hash]);
  }

  async clientByToken(tokenHash: string): Promise<Row | undefined> {
    const [row] = await this.db.all(this.byTokenSql, [tokenHash]);
    return row;
  }

  /** An operator's change, compiled as it comes (its columns are the caller's): the values are knex's bindings. */
  private run(q: Buildable, ex: Executor = this.db): Promise<void> {
    const { sql, params } = compile(q);
    return ex.run(sql, params);
  }
}
