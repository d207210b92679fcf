/**
 * Usage by transaction class (spec §1, §8): a fetch by key is class A; a query (each page, each $count)
 * is class B; expanding Media, OpenHouse or historyTransactional adds one class B each; PropertyRooms and
 * PropertyUnits are free. Counts are kept per client, UTC hour and class in the database.
 *
 * A response goes out only after its count is in this process's usage journal (journal.ts): the counts of
 * every request finishing in one turn of the event loop are one write(2), which costs microseconds, where a
 * database commit per batch of responses cost 15–30% of key-fetch throughput on MariaDB (docs/benchmarks.md,
 * notes). The journal is applied to the
 * usage table every `applyEveryMs`, exactly once (storage/usage-table.ts). A process that is killed or crashes leaves
 * its journal behind; the next process on the same database to look (a server, at start and every half
 * minute, or `reso-server usage`) applies it and removes it. So no count is lost when a process dies; only
 * the loss of the host itself (its page cache) can lose the last moments of counts not yet applied.
 */
import { EventEmitter } from 'node:events';
import { closeSync, fstatSync, openSync } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { UsageClass, UsageRow, UsageStore } from '../storage/tables/usage-table';
import { abandoned, CountsByClientHour, JOURNAL_SUFFIX, JournalFile, readEntries, readHeader } from './journal';

/** A (fetch by key) or B (query). */
export type TransactionClass = UsageClass;

/** The class of each kind of request (spec §8): what the handlers charge, and what the console's explorer shows before a query runs. */
export const TRANSACTION_CLASSES = {
  keyFetch: 'A',
  /** Each page of a collection, each `$count`. */
  query: 'B',
  /** Each expansion of a navigation the dictionary marks charged, on top of the request's own. */
  chargedExpansion: 'B',
} as const satisfies Record<string, TransactionClass>;
export type { UsageRow } from '../storage/tables/usage-table';


/** A journal is replaced by a fresh one once this much of it has been applied, so files stay small. */
const ROTATE_AT_BYTES = 8 << 20;
/** Looking for journals of processes that are gone, in applying intervals. */
const ADOPT_EVERY = 30;

/** Counts cannot be recorded (the journal cannot be written): the request must not be served uncounted. */
export class MeteringUnavailable extends Error {
  constructor(readonly cause?: unknown) {
    super(`usage cannot be recorded (${(cause as Error)?.message ?? cause})`);
  }
}

export interface MeterOptions {
  /** Where this process keeps its usage journal, and finds those of processes that are gone. */
  readonly journalDir?: string;
  /** How often the journal is applied to the usage table. */
  readonly applyEveryMs?: number;
  /** Size past which an applied journal is replaced by a fresh one (default 8 MiB). */
  readonly rotateAtBytes?: number;
  readonly log?: (line: string) => void;
}

interface OpenJournal {
  readonly file: JournalFile;
  /** Where the entries not yet applied begin. */
  offset: number;
}

interface Waiter { resolve: () => void; reject: (e: unknown) => void }

const HOUR_MS = 3_600_000;
/** The last hour named, kept: every request of an hour is counted under the same name. */
let namedHour = { start: NaN, name: '' };

/** The UTC hour an instant falls in, as counts are kept: `YYYY-MM-DDTHH`. */
function hourOf(at: Date): string {
  const start = Math.floor(at.getTime() / HOUR_MS) * HOUR_MS;
  if (start !== namedHour.start) namedHour = { start, name: new Date(start).toISOString().slice(0, 13) };
  return namedHour.name;
}

/** Emits 'applied' after each background step that brought the usage table up to date with the journals. */
export class Meter extends EventEmitter {
  private journal?: OpenJournal;
  private opening?: Promise<OpenJournal>;
  /** Journals replaced by a fresh one, until what was written to them is applied. */
  private retiring: OpenJournal[] = [];
  private pending: CountsByClientHour = new Map();
  private waiters: Waiter[] = [];
  private writeScheduled = false;
  private timer?: NodeJS.Timeout;
  private ticks = 0;
  /** A background step is under way: while the database cannot take counts, steps must not pile up behind it. */
  private ticking = false;
  private closed = false;
  /** Applying runs one step at a time (the timer, flush, close, adoption never interleave). */
  private applying: Promise<unknown> = Promise.resolve();
  private lastComplaint = '';
  /** When the usage table last caught up with this process's journals (performance.now()). */
  private appliedAt = performance.now();

  /** `table`: where usage counts are kept. */
  constructor(private readonly table: UsageStore, private readonly options: MeterOptions = {}) {
    super();
  }

  /** Counts transactions for a client; resolves once they are in the journal. */
  record(clientId: string, counts: Partial<Record<TransactionClass, number>>, at = new Date()): Promise<void> {
    if (this.closed) return Promise.reject(new MeteringUnavailable('the meter is closed'));
    const key = `${clientId}\t${hourOf(at)}`;
    const c = this.pending.get(key) ?? this.pending.set(key, { A: 0, B: 0 }).get(key)!;
    c.A += counts.A ?? 0;
    c.B += counts.B ?? 0;
    const written = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.writeScheduled) {
      this.writeScheduled = true;
      // After the I/O callbacks of this turn: every response finishing in it shares one write.
      setImmediate(() => this.write());
    }
    return written;
  }

  private write(): void {
    this.writeScheduled = false;
    const counts = this.pending;
    const waiters = this.waiters;
    this.pending = new Map();
    this.waiters = [];
    const append = (j: OpenJournal) => {
      try {
        j.file.append(counts);
      } catch (e) {
        throw new MeteringUnavailable(e);
      }
    };
    const settle = (e?: unknown) => { for (const w of waiters) if (e === undefined) w.resolve(); else w.reject(e); };
    if (this.journal?.file.broken) {
      // Counting goes on in a fresh journal; the old one is applied up to its damage and removed.
      this.retiring.push(this.journal);
      this.journal = undefined;
    }
    if (this.journal) {
      try {
        append(this.journal);
        settle();
      } catch (e) {
        settle(e);
      }
      return;
    }
    this.open().then(append).then(() => settle(), settle);
  }

  /** The first count creates the journal. */
  private open(): Promise<OpenJournal> {
    this.opening ??= this.createJournal()
      .then((j) => { this.journal = j; return j; })
      .finally(() => { this.opening = undefined; });
    return this.opening;
  }

  private async createJournal(): Promise<OpenJournal> {
    const dir = this.options.journalDir;
    if (!dir) throw new MeteringUnavailable('no usage journal directory is configured');
    const database = await this.table.databaseId();
    let file: JournalFile;
    try {
      file = JournalFile.create(dir, JournalFile.newId(), database);
    } catch (e) {
      throw new MeteringUnavailable(e);
    }
    // Registered before its first entry (a file with none is harmless: whoever finds it abandoned removes it).
    try {
      await this.table.register(file.header.id);
    } catch (e) {
      file.close();
      await unlinkIfPresent(file.path).catch(() => undefined);
      throw e;
    }
    return { file, offset: file.headerBytes };
  }

  /** Applies journals in the background from now on, starting with those processes that are gone left behind. */
  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => { void this.tick(); }, this.options.applyEveryMs ?? 1000).unref();
    void this.serially(() => this.adoptAbandoned()).catch((e) => this.complain(e));
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      await this.serially(async () => {
        const j = this.journal;
        if (j) {
          j.file.touch();
          await this.applyOwn(j);
          // Taken over by a process that thought this one gone (it stalled for minutes): keep counting elsewhere.
          if (j.file.unlinked() || j.offset >= (this.options.rotateAtBytes ?? ROTATE_AT_BYTES)) await this.rotate(j);
        }
        await this.retire();
        if (++this.ticks % ADOPT_EVERY === 0) await this.adoptAbandoned();
      });
      this.lastComplaint = '';
      this.appliedAt = performance.now();
      this.emit('applied');
    } catch (e) {
      this.complain(e);
    } finally {
      this.ticking = false;
    }
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const run = this.applying.then(step);
    this.applying = run.catch(() => undefined);
    return run;
  }

  private async applyOwn(j: OpenJournal): Promise<void> {
    j.offset = await this.applyFile(j.file.header.id, j.file.fd, j.offset);
  }

  /**
   * Applies a journal's entries from `offset` to its end as it was when this began; returns how far it got. Under
   * load requests append while a batch is applied: chasing them would apply a few lines at a time, a transaction
   * each, without end (measured: a read and a transaction every few milliseconds, 8% of a key fetch's CPU); the
   * next tick takes them.
   */
  private async applyFile(id: string, fd: number, offset: number): Promise<number> {
    const end = fstatSync(fd).size;
    for (;;) {
      const { entries, next, malformed } = await readEntries(fd, offset, end);
      if (next === offset) return offset;
      if (malformed) this.options.log?.(`usage journal ${id}: ${malformed} damaged line(s) skipped`);
      await this.table.apply(id, entries);
      offset = next;
    }
  }

  private async rotate(j: OpenJournal): Promise<void> {
    const fresh = await this.createJournal();
    this.journal = fresh;
    this.retiring.push(j);
  }

  /** Replaced journals: applied to the end (writes to them stopped at the swap), removed, forgotten. */
  private async retire(): Promise<void> {
    while (this.retiring.length) {
      const j = this.retiring[0];
      await this.applyOwn(j);
      await unlinkIfPresent(j.file.path);
      await this.table.forget(j.file.header.id);
      j.file.close();
      this.retiring.shift();
    }
  }

  /** Applies and removes the journals of processes that are gone (same database only); returns how many. */
  async adoptAbandoned(): Promise<number> {
    const dir = this.options.journalDir;
    if (!dir) return 0;
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => n.endsWith(JOURNAL_SUFFIX));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw e;
    }
    const database = await this.table.databaseId();
    let adopted = 0;
    for (const name of names) {
      const path = join(dir, name);
      let fd: number;
      try {
        fd = openSync(path, 'r');
      } catch {
        continue;
      }
      try {
        const head = await readHeader(fd);
        const modified = fstatSync(fd).mtimeMs;
        if (!head) {
          // A process died creating it: no entry can follow a missing header.
          if (Date.now() - modified > 60_000) await unlinkIfPresent(path);
          continue;
        }
        if (head.header.database !== database || !abandoned(head.header, modified)) continue;
        await this.applyFile(head.header.id, fd, head.bytes);
        await unlinkIfPresent(path);
        adopted++;
        this.options.log?.(`usage: applied the journal left by process ${head.header.pid} on ${head.header.host} (${name})`);
      } finally {
        closeSync(fd);
      }
    }
    return adopted;
  }

  /**
   * How far the usage table is behind this process's journals: bytes journaled and not yet applied, and seconds
   * since the table last caught up (grows while the database refuses the counts). For metrics.
   */
  lag(): { bytes: number; seconds: number } {
    const open = [...(this.journal ? [this.journal] : []), ...this.retiring];
    const bytes = open.reduce((n, j) => n + Math.max(0, j.file.written - j.offset), 0);
    return { bytes, seconds: bytes === 0 ? 0 : (performance.now() - this.appliedAt) / 1000 };
  }

  /** Resolves once every count recorded so far is written to the journal (or refused). */
  private async drainWrites(): Promise<void> {
    // The write scheduled for this turn runs before this callback; a first write waits for the journal to open.
    await new Promise((r) => setImmediate(r));
    if (this.opening) await this.opening.catch(() => undefined);
  }

  /** Resolves when every count recorded so far is in the usage table. */
  async flush(): Promise<void> {
    await this.drainWrites();
    await this.serially(async () => {
      if (this.journal) await this.applyOwn(this.journal);
      await this.retire();
    });
  }

  /**
   * Applies everything and removes this process's journals, as for a replaced one. If the database cannot
   * take the counts now, the journals stay, and the next process on this database applies them.
   */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.drainWrites();
    this.closed = true;
    try {
      // In turn with the background steps: one may be replacing the journal right now.
      await this.serially(async () => {
        if (this.journal) this.retiring.push(this.journal);
        this.journal = undefined;
        await this.retire();
      });
    } catch (e) {
      for (const j of this.retiring) {
        this.options.log?.(`usage journal ${j.file.path} kept (${(e as Error).message}): the next server or \`reso-server usage\` on this database applies it`);
      }
    } finally {
      for (const j of this.retiring) j.file.close();
    }
  }

  /** Usage rows, oldest hour first; bounds are UTC hours `YYYY-MM-DDTHH` (inclusive). */
  usage(filter: { client?: string; from?: string; to?: string } = {}): Promise<UsageRow[]> {
    return this.table.rows(filter);
  }

  private complain(e: unknown): void {
    const message = (e as Error)?.message ?? String(e);
    if (message === this.lastComplaint) return;
    this.lastComplaint = message;
    this.options.log?.(`usage: counts stay in the journal until the database takes them (${message})`);
  }
}

/** What a request handler needs of the meter: counting its transactions. */
export type UsageRecorder = Pick<Meter, 'record'>;
/** What a usage report needs: this process's counts applied, then the rows. */
export type UsageReport = Pick<Meter, 'flush' | 'usage'>;

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}
