/**
 * `reso-server pull`'s throughput against a bare client walking the same upstream by nextLinks: records per second
 * of each, and their ratio (target ≥ 0.8). The upstream is a `reso-server serve` over a seeded SQLite database; the
 * bare client asks the puller's own first URLs (timestamp order, Prefer: odata.maxpagesize), follows each
 * nextLink and parses every page (as any client that keeps the records does), and writes nothing; the puller
 * (`pull run`, one pass, by timestamp, into a fresh database of its own: SQLite, or `--database`, made again each
 * round) parses, checks and writes every record, its checkpoint with each page. Rounds alternate, the best of each
 * side kept.
 *
 *   npm run build && npm run build:tests && node dist/bench/pull.js [--listings 1000] [--rounds 3] [--sets Property,Media]
 *     [--database mysql://root@127.0.0.1:3306/bench_pull]
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freshDatabase } from './fresh-database';

const CLI = resolve(__dirname, '../../bin/reso-server.js');
const PAGE = 1000;

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
}

function cli(databaseUrl: string, args: readonly string[]): string {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl };
  delete env.DEMO_TOKEN;
  return execFileSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
}

function serve(databaseUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', WORKERS: '1', SEED_LISTINGS: '0', MAX_PAGE_SIZE: String(PAGE) };
  delete env.DEMO_TOKEN;
  const child = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((done, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`the upstream did not start:\n${out}`)), 60_000);
    const seen = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /serving (http:\/\/\S+\/odata)/.exec(out);
      if (m) { clearTimeout(timer); done({ url: m[1], child }); }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
  });
}

/** The bare client: the puller's first URL per set, every nextLink followed, every page parsed; returns records read. */
async function bareWalk(root: string, token: string, sets: readonly string[]): Promise<number> {
  let records = 0;
  for (const set of sets) {
    let url: string | undefined = `${root}/${set}?$orderby=${encodeURIComponent(`ModificationTimestamp asc,${set === 'Property' ? 'ListingKey' : 'MediaKey'} asc`)}`;
    while (url) {
      const res = await fetch(url, { headers: { Authorization: `Bearer ${token}`, Prefer: `odata.maxpagesize=${PAGE}`, 'Accept-Encoding': 'gzip' } });
      if (!res.ok) throw new Error(`${url}: ${res.status}`);
      const page = await res.json() as { value: unknown[]; '@odata.nextLink'?: string };
      records += page.value.length;
      url = page['@odata.nextLink'];
    }
  }
  return records;
}

/** One pass of `pull run` into a fresh database; returns the records written and the seconds of the whole command. */
async function pullRun(root: string, token: string, sets: readonly string[], dir: string, round: number): Promise<{ records: number; seconds: number }> {
  const given = arg('database', '');
  const db = given || `sqlite:${join(dir, `down-${round}.sqlite`)}`;
  if (given) await freshDatabase(db);
  cli(db, ['migrate']);
  cli(db, ['pull', 'add', 'up', '--url', root, '--token', token, '--set', sets.join(','), '--page-size', String(PAGE), '--rate', '10000', '--strategy', 'timestamp']);
  const started = performance.now();
  const out = cli(db, ['pull', 'run', 'up', '--reconcile-every', '100000000']);
  const seconds = (performance.now() - started) / 1000;
  return { records: Number(/(\d+) record\(s\) written/.exec(out)?.[1]), seconds };
}

async function main(): Promise<void> {
  const listings = Number(arg('listings', '1000'));
  const rounds = Number(arg('rounds', '3'));
  const sets = arg('sets', 'Property,Media').split(',');
  const dir = mkdtempSync(join(tmpdir(), 'bench-pull-'));
  const up = `sqlite:${join(dir, 'up.sqlite')}`;
  cli(up, ['seed', '--listings', String(listings), '--json']);
  const token = /^static token:\s+(\S+)/m.exec(cli(up, ['clients', 'add', '--name', 'puller', '--static-token']))![1];
  const upstream = await serve(up);
  try {
    let bare = 0;
    let pulled = 0;
    for (let round = 1; round <= rounds; round++) {
      const started = performance.now();
      const read = await bareWalk(upstream.url, token, sets);
      const bareRate = read / ((performance.now() - started) / 1000);
      const run = await pullRun(upstream.url, token, sets, dir, round);
      if (run.records !== read) throw new Error(`the pull wrote ${run.records} records, the walk read ${read}`);
      const pullRate = run.records / run.seconds;
      console.log(`round ${round}: bare walk ${read} records, ${Math.round(bareRate)}/s; pull ${run.records} records in ${run.seconds.toFixed(2)} s, ${Math.round(pullRate)}/s`);
      bare = Math.max(bare, bareRate);
      pulled = Math.max(pulled, pullRate);
    }
    console.log(`best: bare walk ${Math.round(bare)} records/s, pull ${Math.round(pulled)} records/s, ratio ${(pulled / bare).toFixed(2)} (target ≥ 0.8)`);
  } finally {
    upstream.child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => { console.error(e); process.exitCode = 1; });
