/**
 * The start-up lock: one row of the settings table, so that of several instances starting together on one
 * database exactly one does the start-up work (schema changes, reference data, the demo client, demo data)
 * while the others answer 503 and try again. It is claimed with an atomic insert-if-absent and kept by a
 * heartbeat: the holder rewrites the row every `renewMs`. A holder that dies stops the heartbeat; an instance
 * that has seen the same row for `leaseMs` by its own clock takes it over with a compare-and-set. Comparing
 * what it saw rather than times stored in the row, it needs no two hosts' clocks to agree.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../../foundation/clock';
import type { Database } from '../db/database';
import { SETTINGS_TABLE } from './internal-schema';
import { standIn, textTaking } from '../sql/shapes';

const LOCK_ROW = 'startup-lock';
const [NAME, VALUE, NEXT] = [standIn('name'), standIn('value'), standIn('next')];

export interface LockTimings {
  /** How long the row may stay unchanged before its holder is taken for dead. */
  readonly leaseMs: number;
  /** How often the holder rewrites it. */
  readonly renewMs: number;
}

const DEFAULT_TIMINGS: LockTimings = { leaseMs: 15_000, renewMs: 2_000 };

/** Another instance holds the start-up lock: the start-up work is not done here yet; try again later. */
export class StartupInProgress extends Error {
  constructor(readonly holder: string, readonly takeoverInMs: number) {
    super(`another instance (${holder}) is doing the start-up work`);
  }
}

export class StartupLock {
  /** Who this process is, for the logs of the others; random so that two processes never share a value. */
  private readonly owner = `${hostname()} pid ${process.pid} ${randomBytes(4).toString('hex')}`;
  private beats = 0;
  /** What this process last read in the row, and since when (by its own clock). */
  private seen?: { value: string; since: number };
  private readonly readSql: string;
  private readonly claimSql: string;
  private readonly swapSql: string;
  private readonly releaseSql: string;

  constructor(private readonly db: Database, private readonly clock: Clock, private readonly timings = DEFAULT_TIMINGS) {
    const settings = () => db.knex(SETTINGS_TABLE);
    const rowWith = { name: NAME, value: VALUE };
    this.readSql = textTaking(settings().select('value').where('name', NAME), [NAME]);
    this.claimSql = textTaking(db.dialect.keepExisting(settings().insert(rowWith), ['name']), [NAME, VALUE]);
    this.swapSql = textTaking(settings().update({ value: NEXT }).where(rowWith), [NEXT, NAME, VALUE]);
    this.releaseSql = textTaking(settings().where(rowWith).delete(), [NAME, VALUE]);
  }

  /**
   * Runs `work` holding the lock (the settings table must exist). While another live instance holds it, throws
   * StartupInProgress without running anything.
   */
  async holding<T>(work: () => Promise<T>, log?: (line: string) => void): Promise<T> {
    let value = await this.claim(log);
    let renewing: Promise<unknown> = Promise.resolve();
    const heartbeat = setInterval(() => {
      renewing = renewing.then(async () => {
        const next = this.nextValue();
        if (await this.swap(value, next)) {
          value = next;
          return;
        }
        clearInterval(heartbeat);
        log?.('start-up lock: taken over by another instance (this one was too slow to renew it); finishing anyway');
      }).catch(() => undefined); // the database is away: the next beat tries again, or the lease runs out
    }, this.timings.renewMs);
    heartbeat.unref();
    try {
      return await work();
    } finally {
      clearInterval(heartbeat);
      await renewing;
      // Not deleted (the database went away): the others take over once the lease has run out.
      await this.db.run(this.releaseSql, [LOCK_ROW, value]).catch(() => undefined);
    }
  }

  /** Returns the value this process wrote into the row; throws StartupInProgress if another instance holds it. */
  private async claim(log?: (line: string) => void): Promise<string> {
    const mine = this.nextValue();
    let stored = await this.read();
    if (stored === undefined) {
      await this.db.run(this.claimSql, [LOCK_ROW, mine]);
      stored = await this.read();
      if (stored === mine) return mine;
    }
    if (stored === undefined) throw new StartupInProgress('an instance that has just finished', 0);
    const now = this.clock.now();
    if (this.seen?.value !== stored) this.seen = { value: stored, since: now };
    const waited = now - this.seen.since;
    if (waited >= this.timings.leaseMs && (await this.swap(stored, mine))) {
      log?.(`start-up lock: ${holderOf(stored)} held it without a sign of life for ${Math.round(waited / 1000)} s; taken over`);
      this.seen = undefined;
      return mine;
    }
    throw new StartupInProgress(holderOf(stored), Math.max(0, this.timings.leaseMs - waited));
  }

  private async read(): Promise<string | undefined> {
    const rows = await this.db.all(this.readSql, [LOCK_ROW]);
    return rows.length ? String(rows[0].value) : undefined;
  }

  /** Replaces the row's value if it is still `expected`; returns whether it did (each value is written once). */
  private async swap(expected: string, next: string): Promise<boolean> {
    await this.db.run(this.swapSql, [next, LOCK_ROW, expected]);
    return (await this.read()) === next;
  }

  private nextValue(): string {
    return `${this.owner} beat ${++this.beats}`;
  }
}

/** The holder's name in a row's value, without its heartbeat count. */
function holderOf(value: string): string {
  return value.replace(/ beat \d+$/, '');
}
