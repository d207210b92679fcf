/**
 * Usage in the database: counts per client, UTC hour and transaction class (reso_usage), and for each usage
 * journal the last entry added to them (reso_usage_journals). Applying a journal's entries and moving that
 * mark happen in one transaction with the journal's row locked, so however many processes apply the same
 * journal, at once or one after another, each entry is counted exactly once.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Executor } from '../storage/database';
import { USAGE_JOURNALS_TABLE, USAGE_TABLE } from '../storage/internal-schema';
import type { Settings } from '../storage/settings';
import type { UsageEntry } from './journal';

export type TransactionClass = 'A' | 'B';

export interface UsageRow {
  client: string;
  hour: string;
  class: TransactionClass;
  count: number;
}

/** Rows per increment statement (a journal chunk can span many clients and hours). */
const ROWS_PER_STATEMENT = 500;

export class UsageTable {
  private readonly lockSql: string;
  private readonly markSql: string;
  private readonly forgetSql: string;
  /** Multi-row increment statements by row count. */
  private readonly increments = new Map<number, string>();
  private database?: string;

  constructor(private readonly db: Database, private readonly settings: Settings) {
    const lock = db.sql(USAGE_JOURNALS_TABLE).select('applied_seq').where('journal_id', '');
    // SQLite has no row locks; its write transaction already excludes every other writer.
    this.lockSql = (db.dialect === 'mysql' ? lock.forUpdate() : lock).toSQL().toNative().sql;
    this.markSql = db.sql(USAGE_JOURNALS_TABLE).update({ applied_seq: 0 }).where('journal_id', '').toSQL().toNative().sql;
    this.forgetSql = db.sql(USAGE_JOURNALS_TABLE).where('journal_id', '').delete().toSQL().toNative().sql;
  }

  /** This database's identity, created once: journals name it, so counts never go to another database. */
  async databaseId(): Promise<string> {
    this.database ??= await this.settings.getOrCreate('database-id', () => randomUUID());
    return this.database;
  }

  /** Before a journal file exists: from then on, its entries are owed to this database. */
  async register(journalId: string): Promise<void> {
    const { sql, bindings } = this.db.sql(USAGE_JOURNALS_TABLE).insert({ journal_id: journalId, applied_seq: 0 }).toSQL().toNative();
    await this.db.transaction((tx) => tx.run(sql, bindings));
  }

  /**
   * After the journal is applied in full and its file removed. Without its row a journal counts as done, so
   * only its owner, who knows nothing more will be written to it, forgets it; one applied by another process
   * keeps its row (a few bytes per crashed process).
   */
  async forget(journalId: string): Promise<void> {
    await this.db.transaction((tx) => tx.run(this.forgetSql, [journalId]));
  }

  /** Adds the entries after the journal's mark and moves the mark past them, at once. */
  async apply(journalId: string, entries: readonly UsageEntry[]): Promise<void> {
    if (entries.length === 0) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.db.transaction((tx) => this.applyIn(tx, journalId, entries));
        return;
      } catch (e) {
        // A deadlock rolled the whole transaction back, so it can run again.
        const code = (e as { cause?: { code?: string } }).cause?.code;
        if (attempt >= 5 || (code !== 'ER_LOCK_DEADLOCK' && code !== 'ER_LOCK_WAIT_TIMEOUT')) throw e;
        await new Promise((r) => setTimeout(r, 5 * attempt));
      }
    }
  }

  private async applyIn(tx: Executor, journalId: string, entries: readonly UsageEntry[]): Promise<void> {
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
    const rows = [...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      const part = rows.slice(i, i + ROWS_PER_STATEMENT);
      await tx.run(this.increment(part.length), part.flatMap(([key, n]) => [...key.split('\u0000'), n]));
    }
    await tx.run(this.markSql, [last, journalId]);
  }

  /** One statement adds a batch of rows: increments commute, so processes adding to the same rows add up. */
  private increment(rows: number): string {
    let sql = this.increments.get(rows);
    if (!sql) {
      const t = `\`${USAGE_TABLE}\``;
      const values = Array.from({ length: rows }, () => '(?, ?, ?, ?)').join(', ');
      const head = `INSERT INTO ${t} (\`client_id\`, \`hour\`, \`class\`, \`count\`) VALUES ${values}`;
      sql = this.db.dialect === 'mysql'
        ? `${head} ON DUPLICATE KEY UPDATE \`count\` = \`count\` + VALUES(\`count\`)`
        : `${head} ON CONFLICT (\`client_id\`, \`hour\`, \`class\`) DO UPDATE SET \`count\` = \`count\` + excluded.\`count\``;
      if (this.increments.size > 64) this.increments.clear();
      this.increments.set(rows, sql);
    }
    return sql;
  }

  /** Usage rows, oldest hour first; bounds are UTC hours `YYYY-MM-DDTHH` (inclusive). */
  async rows(filter: { client?: string; from?: string; to?: string } = {}): Promise<UsageRow[]> {
    let q = this.db.sql(USAGE_TABLE).select('client_id', 'hour', 'class', 'count');
    const params: unknown[] = [];
    if (filter.client) { q = q.where('client_id', ''); params.push(filter.client); }
    if (filter.from) { q = q.where('hour', '>=', ''); params.push(filter.from.slice(0, 13)); }
    if (filter.to) { q = q.where('hour', '<=', ''); params.push(filter.to.slice(0, 13)); }
    const { sql } = q.orderBy([{ column: 'hour' }, { column: 'client_id' }, { column: 'class' }]).toSQL().toNative();
    return (await this.db.all(sql, params)).map((r) => ({
      client: r.client_id as string, hour: r.hour as string, class: r.class as TransactionClass, count: Number(r.count),
    }));
  }
}
