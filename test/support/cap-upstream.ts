/**
 * SAP CAP as an upstream: a generic OData v4 server (server-driven paging by `$skip`, no RESO extensions) serving a
 * Property entity with a subset of the dictionary's Property fields, from records the test gives, which it may
 * change while CAP runs (by SQL on CAP's own SQLite file). CAP is installed outside the repository by
 * `scripts/install-client-tools.sh cap` (test/cap/package-lock.json); absent, the suites that need it skip (fail in CI).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { run } from './client-tools';

export const CAP_HOME = process.env.RESO_CAP_HOME ?? join(homedir(), '.cache', 'reso-cap');
const MODULES = join(CAP_HOME, 'node_modules');
const HOW = 'run scripts/install-client-tools.sh cap (it installs test/cap/package-lock.json there)';

/** The fields CAP serves, as the dictionary names and types them; the first is the key. */
export const CAP_FIELDS: readonly (readonly [string, string])[] = [
  ['ListingKey', 'String(255)'],
  ['ModificationTimestamp', 'Timestamp'],
  ['ListingId', 'String(255)'],
  ['StandardStatus', 'String(50)'],
  ['MlsStatus', 'String(50)'],
  ['ListPrice', 'Decimal(14,2)'],
  ['City', 'String(50)'],
  ['PostalCode', 'String(10)'],
  ['BedroomsTotal', 'Integer'],
];
const TABLE = 'upstream_Property';

export interface CapUpstream {
  /** The service root: `<origin>/odata`, with the entity set `Property`. */
  readonly url: string;
  /** Inserts or replaces records (fields CAP does not serve are dropped). */
  upsert(records: readonly Readonly<Record<string, unknown>>[]): void;
  remove(keys: readonly string[]): void;
  stop(): Promise<void>;
}

/** Call from a suite's `before`: skips it when CAP is not installed, or fails in CI. */
export function requireCap(ctx: Mocha.Context): void {
  if (existsSync(join(MODULES, '.bin', 'cds-serve'))) return;
  if (process.env.CI) throw new Error(`SAP CAP is not installed at ${CAP_HOME}: ${HOW}`);
  console.log(`      (skipped: SAP CAP is not installed at ${CAP_HOME}; ${HOW})`);
  ctx.skip();
}

/** A CAP server whose pages hold at most `pageSize` records, serving `records`. */
export async function startCapUpstream(records: readonly Readonly<Record<string, unknown>>[], pageSize: number): Promise<CapUpstream> {
  const dir = mkdtempSync(join(tmpdir(), 'reso-cap-'));
  const file = join(dir, 'upstream.sqlite');
  writeProject(dir, file, pageSize);
  const deployed = await run(join(MODULES, '.bin', 'cds-deploy'), [], { cwd: dir, timeoutMs: 60_000 });
  if (deployed.code !== 0) throw new Error(`cds deploy failed:\n${deployed.stdout}\n${deployed.stderr}`);
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  const upsert = (rs: readonly Readonly<Record<string, unknown>>[]) => writeRecords(db, rs);
  upsert(records);
  const child = spawn(join(MODULES, '.bin', 'cds-serve'), ['--port', '0'], { cwd: dir, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = async () => {
    await ended(child);
    db.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const origin = await listening(child);
    return { url: `${origin}/odata`, upsert, remove: (keys) => removeRecords(db, keys), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

function writeProject(dir: string, file: string, pageSize: number): void {
  symlinkSync(MODULES, join(dir, 'node_modules'), 'dir');
  const config = { cds: { requires: { db: { kind: 'sqlite', credentials: { url: file } } }, log: { levels: { cds: 'warn' } } } };
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'cap-upstream', private: true, ...config }));
  mkdirSync(join(dir, 'srv'));
  const elements = CAP_FIELDS.map(([name, type], i) => `  ${i === 0 ? 'key ' : ''}${name} : ${type};`).join('\n');
  writeFileSync(join(dir, 'srv', 'upstream.cds'), `@path: '/odata'\n@requires: 'any'\nservice upstream {\n`
    + `  @cds.query.limit: { default: ${pageSize}, max: ${pageSize} }\n  entity Property {\n${elements}\n  }\n}\n`);
}

function writeRecords(db: Database.Database, records: readonly Readonly<Record<string, unknown>>[]): void {
  const names = CAP_FIELDS.map(([name]) => name);
  const insert = db.prepare(`INSERT OR REPLACE INTO ${TABLE} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`);
  db.transaction(() => {
    for (const r of records) insert.run(...names.map((n) => stored(r[n])));
  })();
}

function removeRecords(db: Database.Database, keys: readonly string[]): void {
  const remove = db.prepare(`DELETE FROM ${TABLE} WHERE ${CAP_FIELDS[0][0]} = ?`);
  db.transaction(() => { for (const k of keys) remove.run(k); })();
}

const stored = (v: unknown) => (v === undefined ? null : typeof v === 'boolean' ? Number(v) : v);

/** The origin CAP says it listens on; rejects when it exits first or says nothing within 30 s. */
function listening(child: ChildProcess): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`CAP did not listen within 30 s:\n${out}`)), 30_000);
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /server listening on \{ url: '(http:\/\/[^']+)'/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1].replace('localhost', '127.0.0.1')); }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`CAP exited (${code}) before listening:\n${out}`)); });
  });
}

function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return gone;
}
