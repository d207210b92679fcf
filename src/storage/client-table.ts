/**
 * API clients and their access tokens in the database (reso_clients, reso_tokens). Rows are as stored;
 * auth/clients.ts decides what they mean.
 */
import type { Database, Row } from './database';
import { CLIENTS_TABLE, TOKENS_TABLE } from './internal-schema';
import { Settings } from './settings';
import { Sql, sql } from './sql';

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

export class ClientTable implements ClientStore {
  private readonly byTokenSql: string;

  constructor(private readonly db: Database, private readonly settings: Settings = new Settings(db)) {
    const s = db.statements;
    const [clients, tokens] = [s.id(CLIENTS_TABLE), s.id(TOKENS_TABLE)];
    const clientId = s.id('client_id');
    const join = sql`${tokens} JOIN ${clients} ON ${tokens}.${clientId} = ${clients}.${clientId}`;
    this.byTokenSql = sql`SELECT ${clients}.*, ${tokens}.${s.id('expires_at')} FROM ${join} WHERE ${tokens}.${s.id('token_hash')} = ?`.sql;
  }

  async insertClient(row: ClientRow): Promise<boolean> {
    await this.run(this.db.statements.insert(CLIENTS_TABLE, Object.keys(row), [Object.values(row)], { key: ['client_id'], keep: true }));
    // Each secret hash has a salt of its own: only the row this call wrote has it.
    return (await this.client(row.client_id))?.secret_hash === row.secret_hash;
  }

  async client(id: string): Promise<Row | undefined> {
    const [row] = await this.all(this.db.statements.select({ from: CLIENTS_TABLE, columns: '*', where: this.db.statements.eq('client_id', id) }));
    return row;
  }

  clients(): Promise<Row[]> {
    return this.all(this.db.statements.select({ from: CLIENTS_TABLE, columns: '*', orderBy: [{ column: 'client_id', direction: 'asc' }] }));
  }

  async updateClient(id: string, values: Partial<ClientRow>): Promise<void> {
    await this.run(this.db.statements.update(CLIENTS_TABLE, values, this.db.statements.eq('client_id', id)));
  }

  async updateScope(id: string, scope: string | null): Promise<void> {
    await this.db.transaction(async (tx) => {
      const epoch = await this.settings.nextModificationTime(tx);
      const q = this.db.statements.update(CLIENTS_TABLE, { scope, scope_epoch: epoch }, this.db.statements.eq('client_id', id));
      await tx.run(q.sql, q.params);
    });
  }

  async deleteTokens(clientId: string): Promise<void> {
    await this.run(this.db.statements.delete(TOKENS_TABLE, this.db.statements.eq('client_id', clientId)));
  }

  async tokenExpiries(clientId: string): Promise<(string | null)[]> {
    const rows = await this.all(this.db.statements.select({ from: TOKENS_TABLE, columns: ['expires_at'], where: this.db.statements.eq('client_id', clientId) }));
    return rows.map((r) => (r.expires_at as string | null) ?? null);
  }

  async tokenOwner(tokenHash: string): Promise<string | undefined> {
    const [row] = await this.all(this.db.statements.select({ from: TOKENS_TABLE, columns: ['client_id'], where: this.db.statements.eq('token_hash', tokenHash) }));
    return row?.client_id as string | undefined;
  }

  async saveToken(row: TokenRow): Promise<void> {
    const columns = Object.keys(row);
    await this.run(this.db.statements.insert(TOKENS_TABLE, columns, [Object.values(row)], {
      key: ['token_hash'], replace: columns.filter((c) => c !== 'token_hash'),
    }));
  }

  async clientByToken(tokenHash: string): Promise<Row | undefined> {
    const [row] = await this.db.all(this.byTokenSql, [tokenHash]);
    return row;
  }

  private all(q: Sql): Promise<Row[]> {
    return this.db.all(q.sql, q.params);
  }

  private run(q: Sql): Promise<void> {
    return this.db.run(q.sql, q.params);
  }
}
