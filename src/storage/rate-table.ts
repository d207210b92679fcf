/**
 * The shared rate-limit records (reso_rate_windows): per client, numbered versions of its window record,
 * the highest the current one. Writing a version that exists fails, which is how instances on one database
 * learn that another moved the record first (metering/rate-limit.ts decides what the record means).
 */
import type { Database } from './database';
import { RATE_WINDOWS_TABLE } from './internal-schema';

/** What the rate limit asks of the database. */
export interface RateStore {
  /** The current version of a client's record, if there is one. */
  latest(clientId: string): Promise<{ version: number; state: string } | undefined>;
  /** Writes `version` of the record; false when that version exists already (another writer was first). */
  advance(clientId: string, version: number, state: string): Promise<boolean>;
  /** Deletes the versions before `version`. */
  forgetBefore(clientId: string, version: number): Promise<void>;
}

/** A taken key on insert: MariaDB's code, SQLite's. */
const DUPLICATE_KEY = new Set(['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE']);

export class RateTable implements RateStore {
  private readonly latestSql: string;
  private readonly insertSql: string;
  private readonly pruneSql: string;

  constructor(private readonly db: Database) {
    const s = db.statements;
    const client = s.eq('client_id', '');
    this.latestSql = s.select({
      from: RATE_WINDOWS_TABLE, columns: ['version', 'state'], where: client, orderBy: [{ column: 'version', direction: 'desc' }], limit: 1,
    }).sql;
    this.insertSql = s.insert(RATE_WINDOWS_TABLE, ['client_id', 'version', 'state'], [[0, 0, 0]]).sql;
    this.pruneSql = s.delete(RATE_WINDOWS_TABLE, s.and([client, s.compare('version', '<', 0)])!).sql;
  }

  async latest(clientId: string): Promise<{ version: number; state: string } | undefined> {
    const [row] = await this.db.all(this.latestSql, [clientId, 1]);
    return row ? { version: Number(row.version), state: row.state as string } : undefined;
  }

  async advance(clientId: string, version: number, state: string): Promise<boolean> {
    try {
      await this.db.run(this.insertSql, [clientId, version, state]);
      return true;
    } catch (e) {
      if (DUPLICATE_KEY.has((e as { code?: string })?.code ?? '')) return false;
      throw e;
    }
  }

  async forgetBefore(clientId: string, version: number): Promise<void> {
    await this.db.run(this.pruneSql, [clientId, version]);
  }
}
