/**
 * The functions every SQLite connection of the service registers: the filter compiler's (OData's Unicode
 * tolower/toupper; SQLite's lower/upper change ASCII letters only) and the scan guard (sqlite-scan-thread.ts).
 */
import type BetterSqlite3 from 'better-sqlite3';
import { performance } from 'node:perf_hooks';

/** The scan guard's name in SQL (sqlite-dialect.ts puts it first in a scan's conditions). */
export const SCAN_GUARD = 'reso_scan_guard';

/** Thrown by the guard, inside SQLite, to stop a scan at its deadline; the statement fails with it. */
export class ScanDeadlinePassed extends Error {
  constructor() {
    super('scan deadline passed');
    this.name = 'ScanDeadlinePassed';
  }
}

/**
 * When the scan running on a connection must stop (performance.now() milliseconds); Infinity when none runs. One
 * per connection: a connection runs one statement at a time.
 */
export class ScanClock {
  deadline = Number.POSITIVE_INFINITY;

  /** Runs `read` (synchronous: one statement) with its deadline `ms` from now. */
  readBefore<T>(ms: number, read: () => T): T {
    this.deadline = performance.now() + ms;
    try {
      return read();
    } finally {
      this.deadline = Number.POSITIVE_INFINITY;
    }
  }
}

export function registerFunctions(db: BetterSqlite3.Database, clock: ScanClock): void {
  db.function('odata_tolower', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v));
  db.function('odata_toupper', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toUpperCase() : v));
  // Not deterministic, so SQLite calls it for every row it visits instead of once per statement. True until the
  // deadline: then it throws, and the statement stops with that error. The clock is read every 64th row (a row
  // takes a microsecond or so: the stop is as prompt, the reading cheaper).
  let rows = 0;
  db.function(SCAN_GUARD, { deterministic: false }, () => {
    if ((++rows & 63) === 0 && performance.now() > clock.deadline) throw new ScanDeadlinePassed();
    return 1;
  });
}
