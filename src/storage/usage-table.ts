/**
 * Usage in the database: counts per client, UTC hour and transaction class (reso_usage), and for each usage
 * journal the last entry added to them (reso_usage_journals). Applying a journal's entries and moving that
 * mark happen in one transaction with the journal's row locked, so however many processes apply the same
 * journal, at once or one after another, each entry is counted exactly once.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Executor } from './database';
import { USAGE_JOURNALS_TABLE, USAGE_TABLE } from './internal-schema';
import type { Settings } from './settings';
import type { Sql } from './sql';

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
/** Rows per increment statement (a journal chunk can span many clients and hours). */
const ROWS_PER_STATEMENT = 500;
/** Attempts of a transaction the database rolled back to break a deadlock. */
const ATTEMPTS = 5;

export class UsageTable implements UsageStore {
  private readonly lockSql: string;
  private readonly markSql: string;
  private readonly rowsPerStatement: number;
  private database?: string;

  constructor(private readonly db: Database, private readonly settings: Settings) {
    const s = db.statements;
    const byJournal = s.eq('journal_id', '');
    // SQLite has no row locks; its write transaction already excludes every other writer.
    this.lockSql = s.select({ from: USAGE_JOURNALS_TABLE, columns: ['applied_seq'], where: byJournal, lock: true }).sql;
    this.markSql = s.update(USAGE_JOURNALS_TABLE, { applied_seq: 0 }, byJournal).sql;
    this.rowsPerStatement = Math.min(ROWS_PER_STATEMENT, Math.floor(db.dialect.maxParams / USAGE_COLUMNS.length));
  }

  async databaseId(): Promise<string> {
    this.database ??= await this.settings.getOrCreate('database-id', () => randomUUID());
    return this.database;
  }

  async register(journalId: string): Promise<void> {
    await this.write(this.db.statements.insert(USAGE_JOURNALS_TABLE, ['journal_id', 'applied_seq'], [[journalId, 0]]));
  }

  /**
   * Only its owner, who knows nothing more will be written to it, forgets a journal; one applied by another
   * process keeps its row (a few bytes per crashed process).
   */
  async forget(journalId: string): Promise<void> {
    await this.write(this.db.statements.delete(USAGE_JOURNALS_TABLE, this.db.statements.eq('journal_id', journalId)));
  }

  async apply(journalId: string, entries: readonly JournalEntry[]): Promise<void> {
    if (entries.length === 0) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.db.transaction((tx) => this.applyIn(tx, journalId, entries));
        return;
      } catch (e) {
        // A deadlock rolled the whole transaction back, so it can run again.
        const code = (e as { cause?: { code?: string } }).cause?.code;
        if (attempt >= ATTEMPTS || (code !== 'ER_LOCK_DEADLOCK' && code !== 'ER_LOCK_WAIT_TIMEOUT')) throw e;
        await new Promise((r) => setTimeout(r, 5 * attempt));
      }
    }
  }

  private async applyIn(tx: Executor, journalId: string, entries: readonly JournalEntry[]): Promise<void> {
    const [mark] = await tx.all(this.lockSql, [journalId]);
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
    for (let i = 0; i < rows.length; i += this.rowsPerStatement) {
      // Increments commute, so processes adding to the same rows add up.
      const q = this.db.statements.insert(USAGE_TABLE, USAGE_COLUMNS, rows.slice(i, i + this.rowsPerStatement), {
        key: ['client_id', 'hour', 'class'], increment: ['count'],
      });
      await tx.run(q.sql, q.params);
    }
    await tx.run(this.markSql, [last, journalId]);
  }

  async rows(filter: { client?: string; from?: string; to?: string } = {}): Promise<UsageRow[]> {
    const s = this.db.statements;
    const where = s.and([
      filter.client ? s.eq('client_id', filter.client) : undefined,
      filter.from ? s.compare('hour', '>=', filter.from.slice(0, 13)) : undefined,
      filter.to ? s.compare('hour', '<=', filter.to.slice(0, 13)) : undefined,
    ]);
    const q = s.select({
      from: USAGE_TABLE, columns: USAGE_COLUMNS, where,
      orderBy: [{ column: 'hour', direction: 'asc' }, { column: 'client_id', direction: 'asc' }, { column: 'class', direction: 'asc' }],
    });
    return (await this.db.all(q.sql, q.params)).map((r) => ({
      client: r.client_id as string, hour: r.hour as string, class: r.class as UsageClass, count: Number(r.count),
    }));
  }

  private write(q: Sql): Promise<void> {
    return this.db.transaction((tx) => tx.run(q.sql, q.params));
  }
}
