/**
 * The usage journal: one append-only file per server process, where the transaction counts of each request are
 * written (one write(2) for all requests finishing in the same turn of the event loop) before the responses go
 * out. A write that has returned is in the operating system's hands, so the count survives the process being
 * killed or crashing; the counts reach the usage table in the database later, in the background (meter.ts).
 *
 * Format, one line each, tab-separated:
 *   header   reso-usage-journal 1 <id> <database id> <host> <pid>
 *   entry    <seq> <client id> <UTC hour YYYY-MM-DDTHH> <class A count> <class B count>
 * `seq` counts up from 1 within a journal; the database remembers the last one applied, which makes applying
 * a journal idempotent (several processes may apply the same file; each entry is added once).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, ftruncateSync, futimesSync, mkdirSync, openSync, read } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writeAll } from '../foundation/write-all';

const MAGIC = 'reso-usage-journal 1';
export const JOURNAL_SUFFIX = '.usage-journal';
/** A journal whose owner has not touched it for this long is taken to be abandoned, wherever the owner ran. */
const STALE_AFTER_MS = 120_000;
/** Bytes read per step when applying a journal: bounds memory (a line is under 200 bytes). */
const READ_CHUNK = 1 << 20;

const readAt = promisify(read);

export interface JournalHeader {
  readonly id: string;
  /** The database the counts belong to (settings `database-id`): a journal is only ever applied to it. */
  readonly database: string;
  readonly host: string;
  readonly pid: number;
}

export interface UsageEntry {
  readonly seq: number;
  readonly client: string;
  readonly hour: string;
  readonly A: number;
  readonly B: number;
}

/** Counts of one write, by client id and hour (`<client>\t<hour>`). */
export type CountsByClientHour = Map<string, { A: number; B: number }>;

const journalPath = (dir: string, id: string) => join(dir, `${id}${JOURNAL_SUFFIX}`);

/** Journals this process has open (any of its meters): never abandoned, whatever their files look like. */
const openHere = new Set<string>();

/** The owner's side: creates the file and appends to it. Not safe for two writers; each process has its own. */
export class JournalFile {
  private seq = 0;
  private closed = false;
  /** Bytes of complete writes: a failed write is cut back to this. */
  private size: number;
  /** A failed write could not be cut back: nothing more may follow it in this file. */
  broken = false;

  private constructor(readonly header: JournalHeader, readonly path: string, readonly fd: number, readonly headerBytes: number) {
    this.size = headerBytes;
  }

  /** Bytes of the file written so far (its header included). */
  get written(): number {
    return this.size;
  }

  static newId(): string {
    return randomBytes(16).toString('hex');
  }

  static create(dir: string, id: string, database: string): JournalFile {
    mkdirSync(dir, { recursive: true });
    const header: JournalHeader = { id, database, host: hostname(), pid: process.pid };
    const path = journalPath(dir, id);
    const fd = openSync(path, 'ax+');
    const line = Buffer.from(`${[MAGIC, id, database, header.host, header.pid].join('\t')}\n`);
    try {
      writeAll(fd, line);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
    openHere.add(id);
    return new JournalFile(header, path, fd, line.length);
  }

  /**
   * Appends the counts as entries; returns once the kernel has them. If it would not take them all (a full
   * disk), none count: what was written is cut off again, as the requests they belong to are refused.
   */
  append(counts: CountsByClientHour): void {
    if (this.broken) throw new Error('the journal is damaged by an earlier failed write');
    const first = this.seq;
    let text = '';
    for (const [clientHour, c] of counts) text += `${++this.seq}\t${clientHour}\t${c.A}\t${c.B}\n`;
    if (!text) return;
    const buf = Buffer.from(text);
    try {
      writeAll(this.fd, buf);
    } catch (e) {
      try {
        ftruncateSync(this.fd, this.size);
        this.seq = first;
      } catch {
        this.broken = true;
      }
      throw e;
    }
    this.size += buf.length;
  }

  /** Tells other processes the owner is alive (see `abandoned`). */
  touch(): void {
    const now = new Date();
    futimesSync(this.fd, now, now);
  }

  /** True once the file has been removed from its directory (by a process that took it for abandoned). */
  unlinked(): boolean {
    return fstatSync(this.fd).nlink === 0;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    openHere.delete(this.header.id);
    closeSync(this.fd);
  }
}

/** The header of a journal file, or undefined when the file is not one (or is not complete yet). */
function parseHeader(text: string): { header: JournalHeader; bytes: number } | undefined {
  const end = text.indexOf('\n');
  if (end < 0) return undefined;
  const [magic, id, database, host, pid] = text.slice(0, end).split('\t');
  if (magic !== MAGIC || !/^[0-9a-f]{32}$/.test(id ?? '') || !database || !host || !/^\d+$/.test(pid ?? '')) return undefined;
  return { header: { id, database, host, pid: Number(pid) }, bytes: Buffer.byteLength(text.slice(0, end + 1)) };
}

export async function readHeader(fd: number): Promise<{ header: JournalHeader; bytes: number } | undefined> {
  const buf = Buffer.alloc(512);
  const { bytesRead } = await readAt(fd, buf, 0, buf.length, 0);
  return parseHeader(buf.subarray(0, bytesRead).toString('utf8'));
}

const ENTRY = /^(\d+)\t([A-Za-z0-9._-]{1,64})\t(\d{4}-\d{2}-\d{2}T\d{2})\t(\d+)\t(\d+)$/;

/**
 * Entries from byte `offset` to `until` (the file's end when the caller began), up to the last complete line within
 * one chunk. `next` is where the following read starts; equal to `offset` means the end. A line without its newline
 * is a write that never finished (its response was never sent), so it is left unread. A malformed line (only a
 * damaged file has one) is skipped and counted.
 */
export async function readEntries(fd: number, offset: number, until: number): Promise<{ entries: UsageEntry[]; next: number; malformed: number }> {
  const available = until - offset;
  if (available <= 0) return { entries: [], next: offset, malformed: 0 };
  const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, available));
  const { bytesRead } = await readAt(fd, buf, 0, buf.length, offset);
  const end = bytesRead === 0 ? -1 : buf.lastIndexOf(0x0a, bytesRead - 1);
  if (end < 0) {
    // A whole chunk without a line end is damage, not a write in progress (lines are short): skip it.
    if (bytesRead === READ_CHUNK) return { entries: [], next: offset + bytesRead, malformed: 1 };
    return { entries: [], next: offset, malformed: 0 };
  }
  const entries: UsageEntry[] = [];
  let malformed = 0;
  for (const line of buf.toString('utf8', 0, end).split('\n')) {
    const m = ENTRY.exec(line);
    if (!m) { malformed++; continue; }
    entries.push({ seq: Number(m[1]), client: m[2], hour: m[3], A: Number(m[4]), B: Number(m[5]) });
  }
  return { entries, next: offset + end + 1, malformed };
}

/**
 * Whether the process that wrote a journal is gone, so that another may apply and remove it: it is gone when
 * it ran on this host and no longer exists (or its pid is now this process's, which does not have the journal
 * open), or when the file has not been touched for STALE_AFTER_MS (an owner touches its file every time it
 * applies it, so this also covers other hosts sharing the directory).
 */
export function abandoned(header: JournalHeader, modifiedMs: number, now = Date.now()): boolean {
  const here = header.host === hostname();
  if (here && header.pid === process.pid) return !openHere.has(header.id);
  if (now - modifiedMs > STALE_AFTER_MS) return true;
  if (!here) return false;
  try {
    process.kill(header.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
