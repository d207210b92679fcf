/**
 * Usage by transaction class (spec §1, §8): a fetch by key is class A; a query (each page, each $count)
 * is class B; expanding Media, OpenHouse or historyTransactional adds one class B each; PropertyRooms and
 * PropertyUnits are free. Counts are kept per client, UTC hour and class in the database.
 *
 * Durable by group commit: a response is sent only after its count is committed, and the counts of all
 * requests waiting at that moment are committed together in one transaction (increments, so several
 * instances on one database add up). A crash loses no count of a response that was sent.
 */
import type { Database } from '../storage/database';
import { USAGE_TABLE } from '../storage/internal-schema';

export type TransactionClass = 'A' | 'B';

/** Expansions that cost one class B transaction each (spec §4 "Expansion rules for Property" 2 and 3). */
export const CHARGED_EXPANSIONS: ReadonlySet<string> = new Set(['Media', 'OpenHouse', 'historyTransactional']);

export interface UsageRow {
  client: string;
  hour: string;
  class: TransactionClass;
  count: number;
}

export class Meter {
  private pending = new Map<string, number>();
  private waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  /** The one commit loop; while a commit is in flight, new counts gather for the next (group commit). */
  private running?: Promise<void>;
  /** Multi-row increment statements by row count. */
  private readonly upserts = new Map<number, string>();

  constructor(private readonly db: Database) {}

  /**
   * One statement adds every row of a batch: atomic on its own, and on MariaDB it needs neither an explicit
   * transaction nor the writers' lock (increments commute), so a commit is one round trip.
   */
  private upsert(rows: number): string {
    let sql = this.upserts.get(rows);
    if (!sql) {
      const t = `\`${USAGE_TABLE}\``;
      const values = Array.from({ length: rows }, () => '(?, ?, ?, ?)').join(', ');
      const head = `INSERT INTO ${t} (\`client_id\`, \`hour\`, \`class\`, \`count\`) VALUES ${values}`;
      sql = this.db.dialect === 'mysql'
        ? `${head} ON DUPLICATE KEY UPDATE \`count\` = \`count\` + VALUES(\`count\`)`
        : `${head} ON CONFLICT (\`client_id\`, \`hour\`, \`class\`) DO UPDATE SET \`count\` = \`count\` + excluded.\`count\``;
      if (this.upserts.size > 64) this.upserts.clear();
      this.upserts.set(rows, sql);
    }
    return sql;
  }

  /** Counts transactions for a client; resolves once they are committed. */
  record(clientId: string, counts: Partial<Record<TransactionClass, number>>, at = new Date()): Promise<void> {
    const hour = at.toISOString().slice(0, 13);
    for (const cls of ['A', 'B'] as const) {
      const n = counts[cls] ?? 0;
      if (n > 0) {
        const key = `${clientId}\u0000${hour}\u0000${cls}`;
        this.pending.set(key, (this.pending.get(key) ?? 0) + n);
      }
    }
    const committed = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    // The first count after a quiet spell starts the loop on the next turn, so a burst joins one batch.
    this.running ??= new Promise<void>((r) => setImmediate(r)).then(() => this.loop());
    return committed;
  }

  /** Resolves when everything recorded so far is committed (or has failed). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  private async loop(): Promise<void> {
    try {
      while (this.waiters.length > 0) {
        const batch = this.pending;
        const waiters = this.waiters;
        this.pending = new Map();
        this.waiters = [];
        try {
          await this.commit(batch);
          for (const w of waiters) w.resolve();
        } catch (e) {
          for (const w of waiters) w.reject(e);
        }
      }
    } finally {
      this.running = undefined;
    }
  }

  private async commit(batch: Map<string, number>): Promise<void> {
    if (batch.size === 0) return;
    // Rows are locked in key order, so instances committing at once cannot deadlock each other; a deadlock
    // that happens anyway (another writer) is retried, as the transaction was rolled back whole.
    const rows = [...batch].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (let attempt = 1; ; attempt++) {
      try {
        await this.db.run(this.upsert(rows.length), rows.flatMap(([key, n]) => [...key.split('\u0000'), n]));
        return;
      } catch (e) {
        const code = (e as { cause?: { code?: string } }).cause?.code;
        if (attempt >= 5 || (code !== 'ER_LOCK_DEADLOCK' && code !== 'ER_LOCK_WAIT_TIMEOUT')) throw e;
        await new Promise((r) => setTimeout(r, 5 * attempt));
      }
    }
  }

  /** Usage rows, oldest hour first; bounds are UTC hours `YYYY-MM-DDTHH` (inclusive). */
  async usage(filter: { client?: string; from?: string; to?: string } = {}): Promise<UsageRow[]> {
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
