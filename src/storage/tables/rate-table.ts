/**
 * The shared rate-limit records (reso_rate_windows): per client, numbered versions of its window record,
 * the highest the current one. A version is written only on top of the current one, in one transaction that
 * reads the current version under lock: that is how instances on one database learn that another moved the
 * record first (metering/rate-limit.ts decides what the record means). A bare insert, failing only on a version
 * that exists, let an instance that knew an old version write the next one once older versions were pruned (an
 * allowed request counted on a state several requests old: measured, 13 served of a limit of 12 on Galera).
 */
import type { Database } from '../db/database';
import { RATE_WINDOWS_TABLE } from './internal-schema';
import { standIn, textTaking } from '../sql/shapes';

/** What the rate limit asks of the database. */
export interface RateStore {
  /** The current version of a client's record, if there is one. */
  latest(clientId: string): Promise<{ version: number; state: string } | undefined>;
  /** Writes `version` of the record; false unless the current version is the one before (another writer was first). */
  advance(clientId: string, version: number, state: string): Promise<boolean>;
  /** Deletes the versions before `version`. */
  forgetBefore(clientId: string, version: number): Promise<void>;
}

/** A taken key on insert: MariaDB's code, SQLite's. */
const DUPLICATE_KEY = new Set(['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE']);
const [CLIENT, VERSION, STATE] = [standIn('client'), standIn('version'), standIn('state')];
/** The current version is the one row read (a parameter, as every limit). */
const ONE = 1;

export class RateTable implements RateStore {
  private readonly latestSql: string;
  private readonly lockLatestSql: string;
  private readonly insertSql: string;
  private readonly pruneSql: string;

  constructor(private readonly db: Database) {
    const windows = () => db.knex(RATE_WINDOWS_TABLE);
    const current = (...columns: string[]) => windows().select(columns).where('client_id', CLIENT).orderBy('version', 'desc').limit(ONE);
    this.latestSql = textTaking(current('version', 'state'), [CLIENT, ONE]);
    this.lockLatestSql = textTaking(current('version').forUpdate(), [CLIENT, ONE]);
    // knex lists an insert's columns alphabetically.
    this.insertSql = textTaking(windows().insert({ client_id: CLIENT, version: VERSION, state: STATE }), [CLIENT, STATE, VERSION]);
    this.pruneSql = textTaking(windows().where('client_id', CLIENT).andWhere('version', '<', VERSION).delete(), [CLIENT, VERSION]);
  }

  async latest(clientId: string): Promise<{ version: number; state: string } | undefined> {
    const [row] = await this.db.all(this.latestSql, [clientId, ONE]);
    return row ? { version: Number(row.version), state: row.state as string } : undefined;
  }

  async advance(clientId: string, version: number, state: string): Promise<boolean> {
    try {
      return await this.db.transaction(async (tx) => {
        const [current] = await tx.all(this.lockLatestSql, [clientId, ONE]);
        if ((current ? Number(current.version) : 0) !== version - 1) return false;
        await tx.run(this.insertSql, [clientId, state, version]);
        return true;
      });
    } catch (e) {
      // Two first versions at once: the row the lock would have held did not exist yet.
      if (DUPLICATE_KEY.has((e as { code?: string })?.code ?? '')) return false;
      throw e;
    }
  }

  async forgetBefore(clientId: string, version: number): Promise<void> {
    await this.db.run(this.pruneSql, [clientId, version]);
  }
}
