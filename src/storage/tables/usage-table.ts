/**
 * Usage in the database: counts per client, UTC hour and transaction class (reso_usage), and for each usage
 * journal the last entry added to them (reso_usage_journals). Applying a journal's entries and moving that
 * mark happen in one transaction with the journal's row locked, so however many processes apply the same
 * journal, at once or one after another, each entry is counted exactly once.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Executor } from '../db/database';
import { USAGE_JOURNALS_TABLE, USAGE_TABLE } from './internal-schema';
import { compile } from '../sql/query-builder';
import type { Settings } from './settings';
import { InsertBatches, standIn, textTaking } from '../sql/shapes';

export type UsageClass = 'A' | 'B';

export interface UsageRow {
  client: string;
  hour: string;
  class: UsageClass;
  count: number;
}

/** One line of a usage journal: counts of one client in one hour, numbered within the journal. */
export interface JournalEntry {
  readonly seq: number;
  readonly client: string;
  readonly hour: string;
  readonly A: number;
  readonly B: number;
}

/** What metering asks of the database. */
export interface UsageStore {
  /** This database's identity, created once: journals name it, so counts never go to another database. */
  databaseId(): Promise<string>;
  /** Before a journal file exists: from then on, its entries are owed to this database. */
  register(journalId: string): Promise<void>;
  /** After the journal is applied in full and its file removed (without its row a journal counts as done). */
  forget(journalId: string): Promise<void>;
  /** Adds the entries after the journal's mark and moves the mark past them, at once. */
  apply(journalId: string, entries: readonly JournalEntry[]): Promise<void>;
  /** Usage rows, oldest hour first; bounds are UTC hours `YYYY-MM-DDTHH` (inclusive). */
  rows(filter?: { client?: string; from?: string; to?: string }): Promise<UsageRow[]>;
}

/** The usage table's columns, in the order an increment's rows carry them. */
const USAGE_COLUMNS = ['client_id', 'hour', 'class', 'count'];
const USAGE_KEY = ['client_id', 'hour', 'class'];
const [JOURNAL, APPLIED] = [standIn('journal'), standIn('applied')];

/**
 * The usage tables' statements for one database, compiled once; each takes its values in the order of the
 * stand-ins in its check.
 */
export function usageStatements(db: Pick<Database, 'knex' | 'dialect'>) {
  const { knex, dialect } = db;
  const journals = () => knex(USAGE_JOURNALS_TABLE);
  // Increments commute, so processes adding to the same rows add up: the stored count plus the inserted one.
  const added = knex.raw(`?? + ${dialect.inserted('count')}`, ['count']);
  return {
    /** The journal's mark, locked: knex's SQLite compiler leaves the lock out (the write transaction excludes every other writer). */
    lock: textTaking(journals().select('applied_seq').where('journal_id', JOURNAL).forUpdate(), [JOURNAL]),
    mark: textTaking(journals().update({ applied_seq: APPLIED }).where('journal_id', JOURNAL), [APPLIED, JOURNAL]),
    // knex lists an insert's columns alphabetically.
    register: textTaking(journals().insert({ journal_id: JOURNAL, applied_seq: APPLIED }), [APPLIED, JOURNAL]),
    forget: textTaking(journals().where('journal_id', JOURNAL).delete(), [JOURNAL]),
    /** A journal chunk can span many clients and hours: many rows a statement. */
    increments: new InsertBatches(db, USAGE_TABLE, USAGE_COLUMNS, (insert) => insert.onConflict(USAGE_KEY).merge({ count: added })),
  };
}

export class UsageTable implements UsageStore {
  private readonly sql: ReturnType<typeof usageStatements>;
  private database?: string;

  constructor(private readonly db: Database, private readonly settings: Settings) {
    this.sql = usageStatements(db);
  }

  async databaseId(): Promise<string> {
    this.database ??= await this.settings.getOrCreate('database-id', () => randomUUID());
    return this.database;
  }

  async register(journalId: string): Promise<void> {
    await this.write(this.sql.register, [0, journalId]);
  }

  /**
   * Only its owner, who knows nothing more will be written to it, forgets a journal; one applied by another
   * process keeps its row (a few bytes per crashed process).
   */
  async forget(journalId: string): Promise<void> {
    await this.write(this.sql.forget, [journalId]);
  }

  async apply(journalId: string, entries: readonly JournalEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // A transaction that loses a deadlock or (Galera) a certification conflict is run again by the database:
    // the journal's mark, read again under its lock, keeps every entry counted once.
    await this.db.transaction((tx) => this.applyIn(tx, journalId, entries));
  }

  private async applyIn(tx: Executor, journalId: string, entries: readonly JournalEntry[]): Promise<void> {
    const [mark] = await tx.all(this.sql.lock, [journalId]);
    if (!mark) return;
    const applied = Number(mark.applied_seq);
    const sums = new Map<string, number>();
    let last = applied;
    for (const e of entries) {
      if (e.seq <= applied) continue;
      last = Math.max(last, e.seq);
      for (const cls of ['A', 'B'] as const) {
        if (e[cls] > 0) {
          const key = `${e.client}\u0000${e.hour}\u0000${cls}`;
          sums.set(key, (sums.get(key) ?? 0) + e[cls]);
        }
      }
    }
    if (last === applied) return;
    // Rows are locked in key order, so processes applying at once cannot deadlock on them.
    const rows = [...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, n]) => [...key.split('\u0000'), n]);
    await this.sql.increments.insert(tx, rows);
    await tx.run(this.sql.mark, [last, journalId]);
  }

  async rows(filter: { client?: string; from?: string; to?: string } = {}): Promise<UsageRow[]> {
    // A report, compiled as asked (which bounds it has varies): the values are knex's bindings.
    const q = this.db.knex(USAGE_TABLE).select(USAGE_COLUMNS).orderBy(['hour', 'client_id', 'class']);
    if (filter.client) q.where('client_id', filter.client);
    if (filter.from) q.where('hour', '>=', filter.from.slice(0, 13));
    if (filter.to) q.where('hour', '<=', filter.to.slice(0, 13));
    const { sql, params } = compile(q);
    return (await this.db.all(sql, params)).map((r) => ({
      client: r.client_id as string, hour: r.hour as string, class: r.class as UsageClass, count: Number(r.count),
    }));
  }

  private write(sql: string, params: readonly unknown[]): Promise<void> {
    return this.db.transaction((tx) => tx.run(sql, params));
  }
}
