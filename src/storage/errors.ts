/** The database cannot answer right now (down, unreachable, locked); the request may be retried. */
export class DatabaseUnavailable extends Error {
  constructor(readonly reason: string, readonly cause?: unknown) {
    super(`database unavailable (${reason})`);
  }

  /** What an operator reads in the log about it. */
  get explanation(): string {
    if (/^SQLITE_(NOTADB|CORRUPT)/.test(this.reason)) {
      return `the database file is not a SQLite database or is damaged (${this.reason}): restore it, or point DATABASE_URL at another file`;
    }
    if (/^SQLITE_(BUSY|LOCKED)/.test(this.reason)) return `the database file is locked by another process (${this.reason})`;
    if (/^ER_LOCK/.test(this.reason)) return `the database is busy: another transaction holds a lock this one needs (${this.reason})`;
    return `the database is not reachable (${this.reason})`;
  }
}
