/**
 * docs/command-line.md "Command line" and "Exit codes": every command's own help, the version, options and dates refused with
 * one line and exit code 2, and each start-up misconfiguration refused with one actionable line, its exit code
 * and no stack trace (real processes of `dist/src/cli/main.js`).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { hourOf } from '../src/cli/command-line';
import { Progress } from '../src/cli/progress';
import { MYSQL_URL } from './support/databases';
import { CliResult, pool, runCli } from './support/licence-http';
import { spawnServer } from './support/server-process';

const COMMANDS = ['serve', 'seed', 'ingest', 'clients', 'webhooks', 'usage', 'generate', 'init'];

/** `text` matched literally in a RegExp. */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const VERSION = (JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;

/** One line on stderr, prefixed, naming `pattern`; nothing that looks like a stack trace. */
function expectOneLine(r: CliResult, code: number, pattern: RegExp): void {
  const lines = r.stderr.trim().split('\n');
  expect(r.code, `exit code; stderr: ${r.stderr}`).to.equal(code);
  expect(lines, r.stderr).to.have.length(1);
  expect(lines[0]).to.match(/^reso-server: /).and.match(pattern);
  expect(r.stderr + r.stdout).not.to.match(/\n\s+at /);
}

describe('Command line: help, version and validation', () => {
  let dir: string;
  /** A database URL whose folder does not exist: a command that opened it would fail, so these never do. */
  let nowhere: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'reso-cli-'));
    nowhere = `sqlite:${join(dir, 'absent', 'x.sqlite')}`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--version (and -v) prints the package version; --help lists the commands', async () => {
    for (const flag of ['--version', '-v']) {
      const v = await runCli(nowhere, [flag]);
      expect(v.code, flag).to.equal(0);
      expect(v.stdout.trim(), flag).to.equal(VERSION);
    }
    const h = await runCli(nowhere, ['--help']);
    expect(h.code).to.equal(0);
    for (const command of COMMANDS) expect(h.stdout).to.match(new RegExp(`^  ${command} `, 'm'));
  });

  it('every command and subcommand has its own --help, describing each of its options, printed without opening the database', async () => {
    const helps: [string[], RegExp, string[]][] = [
      [['serve'], /^Usage: reso-server serve \[--workers N\]/, ['--workers <N>']],
      [['seed'], /^Usage: reso-server seed --listings N/, ['--listings <N>', '--seed <S>', '--json']],
      [['ingest'], /^Usage: reso-server ingest \[options\] <Resource> <file\.ndjson>/, ['--on-error <mode>', '--conflict-budget <seconds>', '--json']],
      [['usage'], /^Usage: reso-server usage /, ['--client <id>', '--from <date>', '--to <date>', '--by <period>', '--json', '--csv']],
      [['generate'], /^Usage: reso-server generate/, ['--dictionary <csdl.xml>', '--out <folder>']],
      [['init'], /^Usage: reso-server init/, ['--dictionary <csdl.xml>', '--dir <folder>', '--force']],
      [['clients'], /^Usage: reso-server clients /, ['add', 'list', 'show', 'scope', 'revoke', 'rotate']],
      [['clients', 'add'], /^Usage: reso-server clients add/, ['--name <name>', '--id <id>', '--scope <filter>', '--hide <fields>', '--rate <requests/minute>', '--admin', '--static-token']],
      [['clients', 'list'], /^Usage: reso-server clients list/, ['--json']],
      [['clients', 'show'], /^Usage: reso-server clients show \[options\] <id>/, ['--json']],
      [['clients', 'scope'], /^Usage: reso-server clients scope \[options\] <id>/, ['--scope <filter>']],
      [['clients', 'revoke'], /^Usage: reso-server clients revoke \[options\] <id>/, []],
      [['clients', 'rotate'], /^Usage: reso-server clients rotate \[options\] <id>/, []],
      [['webhooks'], /^Usage: reso-server webhooks /, ['add', 'list', 'remove', 'resume']],
      [['webhooks', 'add'], /^Usage: reso-server webhooks add/, ['--client <id>', '--url <url>', '--token <token>', '--source <name>', '--from <sequence>']],
      [['webhooks', 'list'], /^Usage: reso-server webhooks list/, ['--json']],
      [['webhooks', 'remove'], /^Usage: reso-server webhooks remove \[options\] <id>/, []],
      [['webhooks', 'resume'], /^Usage: reso-server webhooks resume \[options\] <id>/, ['--from <sequence>']],
    ];
    const results = await pool(helps.map(([args]) => () => runCli(nowhere, [...args, '--help'])), 4);
    helps.forEach(([args, first, entries], i) => {
      const r = results[i];
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(0);
      expect(r.stdout, args.join(' ')).to.match(first);
      // Each option or subcommand on a line of its own, with words after it that say what it does.
      for (const entry of [...entries, '-h, --help']) expect(r.stdout, `${args.join(' ')} ${entry}`).to.match(new RegExp(`^  ${escape(entry)}( \\S+)*\\s{2,}\\w`, 'm'));
    });
    const viaHelpCommand = await runCli(nowhere, ['help', 'seed']);
    expect(viaHelpCommand.stdout).to.match(/^Usage: reso-server seed --listings N/);
    expect(existsSync(join(dir, 'absent'))).to.equal(false);
  });

  it('no command, or a command without its subcommand: its help on stderr, exit code 2', async () => {
    for (const args of [[], ['clients'], ['webhooks']]) {
      const r = await runCli(nowhere, args);
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stdout, args.join(' ')).to.equal('');
      expect(r.stderr, args.join(' ')).to.match(new RegExp(`^Usage: reso-server ${args.join(' ')}`));
    }
  });

  it('unknown commands and options, missing values and stray arguments: one line, exit code 2', async () => {
    const cases: [string[], RegExp][] = [
      [['usage', '--frm', '2026-11-01'], /usage: unknown option '--frm' \(Did you mean --from\?\) \(see reso-server usage --help\)/],
      [['serve', '--wokers', '2'], /serve: unknown option '--wokers'/],
      [['serve', '--workers', 'many'], /serve: option '--workers <N>' argument 'many' is invalid\. Expected a whole number of at least 1\./],
      [['serve', '--workers', '0'], /argument '0' is invalid\. Expected a whole number of at least 1\./],
      [['seed', '--listings'], /seed: option '--listings <N>' argument missing/],
      [['seed', '--listings', 'ten'], /argument 'ten' is invalid\. Expected a whole number/],
      [['seed', '--listings', '5', '--seed', '-3'], /seed: option '--seed <S>' argument '-3' is invalid/],
      [['seed'], /seed: required option '--listings <N>' not specified/],
      [['seed', '--listings', '5', 'more'], /seed: too many arguments for 'seed'/],
      [['seed', '--listings', '5', '--bogus'], /seed: unknown option '--bogus'/],
      [['ingest', 'Property'], /ingest: missing required argument 'file\.ndjson'/],
      [['ingest', 'Property', 'x.ndjson', '--on-error', 'ignore'], /ingest: option '--on-error <mode>' argument 'ignore' is invalid\. Allowed choices are skip, reject\./],
      [['ingest', 'Property', 'x.ndjson', 'y.ndjson'], /ingest: too many arguments/],
      [['ingest', 'Property', 'x.ndjson', '--bogus'], /ingest: unknown option '--bogus'/],
      [['ingest', 'Property', 'x.ndjson', '--conflict-budget', '0'], /ingest: option '--conflict-budget <seconds>' argument '0' is invalid\. Expected a whole number of at least 1\./],
      [['usage', '--by', 'week'], /usage: option '--by <period>' argument 'week' is invalid\. Allowed choices are hour, day, month\./],
      [['usage', '--json', '--csv'], /usage: option '--json' cannot be used with option '--csv'/],
      [['usage', '--client'], /usage: option '--client <id>' argument missing/],
      [['usage', 'today'], /usage: too many arguments/],
      [['generate', '--bogus'], /generate: unknown option '--bogus'/],
      [['init'], /init: required option '--dictionary <csdl\.xml>' not specified \(see reso-server init --help\)/],
      [['init', '--dictionary', 'x.xml', '--forse'], /init: unknown option '--forse' \(Did you mean --force\?\)/],
      [['init', '--dictionary', 'x.xml', '--dir', dir], new RegExp(`init: ${escape(dir)} is not a reso-server project \\(no package\\.json with the generate and build scripts, or no codegen/\\): give --dir the folder of a reso-server checkout`)],
      [['clients', 'add'], /clients add: required option '--name <name>' not specified/],
      [['clients', 'add', '--name', 'X', '--rate', 'fast'], /clients add: option '--rate <requests\/minute>' argument 'fast' is invalid/],
      [['clients', 'add', '--name', 'X', '--bogus'], /clients add: unknown option '--bogus'/],
      [['clients', 'list', '--all'], /clients list: unknown option '--all' \(see reso-server clients list --help\)/],
      [['clients', 'show'], /clients show: missing required argument 'id'/],
      [['clients', 'show', 'x', '--bogus'], /clients show: unknown option '--bogus'/],
      [['clients', 'scope', 'x', '--scop', 'y'], /clients scope: unknown option '--scop' \(Did you mean --scope\?\)/],
      [['clients', 'revoke'], /clients revoke: missing required argument 'id'/],
      [['clients', 'rotate', 'x', 'y'], /clients rotate: too many arguments/],
      [['clients', 'drop', 'x'], /clients: unknown command 'drop' \(see reso-server clients --help\)/],
      [['webhooks', 'add', '--url', 'https://x.example'], /webhooks add: required option '--client <id>' not specified/],
      [['webhooks', 'list', '--bogus'], /webhooks list: unknown option '--bogus'/],
      [['webhooks', 'remove'], /webhooks remove: missing required argument 'id'/],
      [['webhooks', 'resume', 'wh-1', '--from', 'latest'], /webhooks resume: option '--from <sequence>' argument 'latest' is invalid/],
      [['webhooks', 'drop'], /webhooks: unknown command 'drop'/],
      [['frobnicate'], /^reso-server: unknown command 'frobnicate' \(see reso-server --help\)$/],
      [['--bogus'], /^reso-server: unknown option '--bogus' \(see reso-server --help\)$/],
    ];
    const results = await pool(cases.map(([args]) => () => runCli(nowhere, args)), 4);
    cases.forEach(([, pattern], i) => expectOneLine(results[i], 2, pattern));
    expect(existsSync(join(dir, 'absent'))).to.equal(false);
  });

  it('ingest of a file it cannot read: one line naming the file, no raw ENOENT, exit 2, before the database is opened', async () => {
    const missing = join(dir, 'missing.ndjson');
    const r = await runCli(nowhere, ['ingest', 'Property', missing]);
    expectOneLine(r, 2, new RegExp(`^reso-server: ingest: cannot read ${escape(missing)}: there is no such file$`));
    expect(r.stderr).not.to.match(/ENOENT/);
    expectOneLine(await runCli(nowhere, ['ingest', 'Property', dir]), 2, new RegExp(`ingest: ${escape(dir)} is a folder, not a file of records$`));
  });

  it('usage dates: YYYY-MM-DD or YYYY-MM-DDTHH on the calendar, from before to; anything else refused', async () => {
    const bad = ['yesterday', '2026-13-45', '2026-02-30', '2026-11-01T24', '11/01/2026', '2026-1-1'];
    const results = await pool([
      ...bad.map((b) => () => runCli(nowhere, ['usage', '--from', b])), () => runCli(nowhere, ['usage', '--to', '2026-04-31']),
    ], 4);
    bad.forEach((b, i) => expectOneLine(results[i], 2,
      new RegExp(`usage: option '--from <date>' argument '${b}' is invalid\\. Expected a UTC date YYYY-MM-DD or hour YYYY-MM-DDTHH on the calendar`)));
    expectOneLine(results[bad.length], 2, /option '--to <date>' argument '2026-04-31' is invalid/);
    expectOneLine(await runCli(nowhere, ['usage', '--from', '2026-11-02', '--to', '2026-11-01']), 2, /usage: --from \(2026-11-02T00\) is after --to \(2026-11-01T23\)/);
    expect(hourOf('2026-11-01', 'from')).to.equal('2026-11-01T00');
    expect(hourOf('2026-11-01', 'to')).to.equal('2026-11-01T23');
    expect(hourOf('2024-02-29T07', 'to')).to.equal('2024-02-29T07');
    expect(hourOf('2026-11-01T13:00:00Z', 'from')).to.equal('2026-11-01T13');
    expect(hourOf('2025-02-29', 'from')).to.equal(undefined);
  });

  it('progress is bounded: at most one line per interval, whatever the number of updates, and the last figure at the end', () => {
    let now = 0;
    const lines: string[] = [];
    const progress = new Progress('listings', 100_000, { isTTY: false, write: (t: string) => lines.push(t) }, () => now);
    for (let done = 0; done <= 100_000; done += 100) {
      now += 10; // 10 s in all: 1,000 updates
      progress.update(done);
    }
    progress.finish(100_000);
    expect(lines.length).to.be.within(2, 4);
    expect(lines[lines.length - 1]).to.match(/^listings: 100,000\/100,000 \(100%\), [\d,]+\/s, 0 s left\n$/);
  });
});

describe('Start-up errors: one actionable line, an exit code, no stack trace', () => {
  let dir: string;
  let sqlite: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'reso-startup-'));
    sqlite = `sqlite:${join(dir, 'db.sqlite')}`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const serve = (url: string, env: Record<string, string>, args = ['serve']) => runCli(url, args, 30_000, { PORT: '0', SEED_LISTINGS: '0', WORKERS: '1', ...env });

  it('invalid settings are refused, not served: PAGE_SIZE above MAX_PAGE_SIZE, a non-number, WORKERS 0 (exit 2)', async () => {
    expectOneLine(await serve(sqlite, { PAGE_SIZE: '5000' }), 2, /PAGE_SIZE \(5000\) must not exceed MAX_PAGE_SIZE \(1000\)/);
    expectOneLine(await serve(sqlite, { PAGE_SIZE: '100x' }), 2, /PAGE_SIZE must be an integer from 1 to 10000 \(got "100x"\)/);
    expectOneLine(await serve(sqlite, { WORKERS: '0' }), 2, /WORKERS must be an integer from 1/);
    expectOneLine(await runCli(sqlite, ['usage'], 30_000, { MAX_PAGE_SIZE: '-1' }), 2, /MAX_PAGE_SIZE must be an integer/);
  });

  it('a DEMO_TOKEN too short or too repetitive for an admin token is refused with a way to make one (exit 2)', async () => {
    for (const token of ['abc', 'a'.repeat(64), 'abcabcabcabcabcabcabcabcabcabcabcabc']) {
      expectOneLine(await serve(sqlite, { DEMO_TOKEN: token }), 2, /DEMO_TOKEN is too weak.*openssl rand -base64 32/);
    }
  });

  it('a SQLite path in a folder that does not exist: refused, and the folder is not created (exit 3)', async () => {
    const folder = join(dir, 'typo', 'deeper');
    const r = await serve(`sqlite:${join(folder, 'reso.sqlite')}`, {});
    expectOneLine(r, 3, new RegExp(`the folder ${folder} of the SQLite file .* does not exist: create it \\(mkdir -p ${folder}\\)`));
    expect(existsSync(join(dir, 'typo'))).to.equal(false);
    // The same with several workers: the primary stops with the workers' code instead of restarting them.
    expectOneLine(await serve(`sqlite:${join(folder, 'reso.sqlite')}`, { WORKERS: '2' }), 3, /does not exist/);
  });

  it('a SQLite path that cannot be opened (a folder) names the path (exit 3)', async () => {
    expectOneLine(await serve(`sqlite:${dir}`, {}), 3, new RegExp(`cannot open the SQLite file ${dir} \\(SQLITE_CANTOPEN\\)`));
  });

  it('a port in use names the port and a free one (exit 4)', async () => {
    const taken: Server = createServer();
    await new Promise<void>((done) => taken.listen(0, done));
    const port = (taken.address() as { port: number }).port;
    try {
      const inUse = new RegExp(`port ${port} is already in use.*set PORT to a free port`);
      expectOneLine(await serve(sqlite, { PORT: String(port) }), 4, inUse);
      // Every worker of a cluster meets it; the primary prints it once and exits with it.
      expectOneLine(await serve(sqlite, { PORT: String(port), WORKERS: '2' }), 4, inUse);
    } finally {
      taken.close();
    }
  });

  (MYSQL_URL ? describe : describe.skip)('MariaDB', () => {
    const at = (change: (u: URL) => void) => {
      const u = new URL(MYSQL_URL!);
      change(u);
      return u.toString();
    };

    it('a database that does not exist: say it must, with the CREATE DATABASE command (exit 3)', async () => {
      expectOneLine(await serve(at((u) => { u.pathname = '/reso_absent_db'; }), {}), 3,
        /the database "reso_absent_db" does not exist on .*CREATE DATABASE `reso_absent_db` CHARACTER SET utf8mb4;/);
    });

    it('a wrong password: the login refused, fix DATABASE_URL (exit 3)', async () => {
      expectOneLine(await serve(at((u) => { u.password = 'wrong-password'; }), {}), 3, /refused the login of "root".*correct the user or password in DATABASE_URL/);
    });

    it('an unreachable host: a command stops with the host; serve keeps answering 503 and says why', async () => {
      const away = at((u) => { u.port = '1'; });
      expectOneLine(await runCli(away, ['clients', 'list']), 3, /cannot reach the database server at 127\.0\.0\.1:1 \(ECONNREFUSED\): start it, or correct the host and port/);
      const server = await spawnServer(away, {});
      try {
        await server.waitFor(/the database is not reachable \(ECONNREFUSED\)/);
        expect(server.output()).not.to.match(/\n\s+at /);
      } finally {
        await server.stop();
      }
    });
  });
});
