/**
 * Server-wide values kept in the database so that every instance on it agrees: the paging secret, and the
 * last ModificationTimestamp handed out (writers allocate strictly after it).
 */
import { randomBytes } from 'node:crypto';
import type { Database, Executor } from '../db/database';
import { SETTINGS_TABLE } from './internal-schema';
import { standIn, textTaking } from '../sql/shapes';

const CLOCK = 'modification-clock';
const [NAME, VALUE] = [standIn('name'), standIn('value')];

/**
 * The settings table's statements for one database, compiled once; each takes its values in the order of the
 * stand-ins in its check.
 */
export function settingsStatements({ knex, dialect }: Pick<Database, 'knex' | 'dialect'>) {
  const settings = () => knex(SETTINGS_TABLE);
  return {
    read: textTaking(settings().select('value').where('name', NAME), [NAME]),
    /** The read that takes the row lock: knex's SQLite compiler leaves it out (the write transaction holds the database). */
    lock: textTaking(settings().select('value').where('name', NAME).forUpdate(), [NAME]),
    /** Inserts a row unless its name is taken. */
    insert: textTaking(dialect.keepExisting(settings().insert({ name: NAME, value: VALUE }), ['name']), [NAME, VALUE]),
    update: textTaking(settings().update({ value: VALUE }).where('name', NAME), [VALUE, NAME]),
    remove: textTaking(settings().where('name', NAME).delete(), [NAME]),
    clock: dialect.clockMillis().sql,
  };
}

export class Settings {
  private readonly sql: ReturnType<typeof settingsStatements>;

  constructor(private readonly db: Database) {
    this.sql = settingsStatements(db);
  }

  async get(name: string, ex: Executor = this.db): Promise<string | undefined> {
    const rows = await ex.all(this.sql.read, [name]);
    return rows.length ? (rows[0].value as string) : undefined;
  }

  /** Stores `value` unless the name is set already; returns what is stored. */
  async getOrCreate(name: string, make: () => string): Promise<string> {
    const existing = await this.get(name);
    if (existing !== undefined) return existing;
    await this.db.transaction((tx) => tx.run(this.sql.insert, [name, make()]));
    return (await this.get(name))!;
  }

  async set(ex: Executor, name: string, value: string): Promise<void> {
    await ex.run(this.sql.insert, [name, value]);
    await ex.run(this.sql.update, [value, name]);
  }

  async remove(name: string): Promise<void> {
    await this.db.run(this.sql.remove, [name]);
  }

  /**
   * Hands out the ModificationTimestamp of one write transaction: strictly after every earlier one, and
   * never before the database's clock says now. The clock row is locked first (SELECT … FOR UPDATE on
   * MariaDB; SQLite's write lock is already held), so transactions commit in timestamp order: once a reader
   * sees time T, nothing at T or earlier can still appear. The time is the database's (its server's clock on
   * MariaDB, read after the lock is held), never the writer host's: a writer whose clock runs fast cannot
   * push later timestamps ahead.
   */
  async nextModificationTime(tx: Executor): Promise<string> {
    const rows = await tx.all(this.sql.lock, [CLOCK]);
    const last = rows.length ? Number(rows[0].value) : 0;
    const [{ t: databaseNow }] = await tx.all(this.sql.clock);
    const t = Math.max(Number(databaseNow), last + 1);
    await this.set(tx, CLOCK, String(t));
    return new Date(t).toISOString();
  }

  /**
   * Hands out `count` consecutive numbers of the counter `name` (the first is returned), under its row's lock:
   * held to the transaction's end, so numbers are taken in commit order on every database (MariaDB's
   * AUTO_INCREMENT is not: a transaction may take a number and commit after a later one).
   */
  async nextNumbers(tx: Executor, name: string, count: number): Promise<number> {
    let rows = await tx.all(this.sql.lock, [name]);
    if (rows.length === 0) {
      await tx.run(this.sql.insert, [name, '0']);
      rows = await tx.all(this.sql.lock, [name]);
    }
    const last = Number(rows[0].value);
    await tx.run(this.sql.update, [String(last + count), name]);
    return last + 1;
  }

  /**
   * Records the scope `name` now has and answers its epoch: the ModificationTimestamp at which it last
   * changed from a different recorded scope (none for the first one recorded). Under the clock's lock, so
   * the epoch falls between writers' timestamps and instances recording at once agree.
   */
  async scopeEpoch(name: string, scope: string): Promise<string | undefined> {
    const key = `scope:${name}`;
    const read = async (ex: Executor) => {
      const v = await this.get(key, ex);
      return v === undefined ? undefined : (JSON.parse(v) as { scope: string; epoch: string | null });
    };
    const stored = await read(this.db);
    if (stored?.scope === scope) return stored.epoch ?? undefined;
    return this.db.transaction(async (tx) => {
      const now = await this.nextModificationTime(tx);
      const current = await read(tx);
      if (current?.scope === scope) return current.epoch ?? undefined;
      const epoch = current ? now : null;
      await this.set(tx, key, JSON.stringify({ scope, epoch }));
      return epoch ?? undefined;
    });
  }

  /** The clock row must exist before writers lock it. */
  async ensureClock(): Promise<void> {
    await this.getOrCreate(CLOCK, () => '0');
  }

  /** The secret that signs $skiptoken values, created once per database. */
  pagingSecret(): Promise<Buffer> {
    return this.getOrCreate('paging-secret', () => randomBytes(32).toString('base64')).then((s) => Buffer.from(s, 'base64'));
  }
}
