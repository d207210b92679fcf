/** `reso-server serve` as a process of its own, for tests that kill it the hard way, signal it, or run it as a cluster. */
import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLI } from './licence-http';

export interface ServerProcess {
  /** The service root, `http://localhost:<port>/odata`. */
  readonly url: string;
  readonly child: ChildProcess;
  /** Output so far, for failure messages. */
  output(): string;
  /** Resolves once the output matches `pattern`; rejects after `ms`, or when the process exits first. */
  waitFor(pattern: RegExp, ms?: number): Promise<void>;
  /** SIGKILL: no shutdown code runs, as in a crash. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM: the server closes as an operator stops it. Resolves once the process is gone. */
  stop(): Promise<void>;
}

/**
 * Resolves once the server says it is serving (ready, or answering 503 until its start-up work is done), or once
 * its output matches `until` (then `url` is empty unless the output has it already).
 */
export function spawnServer(
  databaseUrl: string, env: Record<string, string> = {}, until?: RegExp, args: readonly string[] = ['serve'],
): Promise<ServerProcess> {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  delete inherited.DEMO_TOKEN;
  delete inherited.FEED_SCOPE;
  const childEnv: NodeJS.ProcessEnv = { ...inherited, DATABASE_URL: databaseUrl, PORT: '0', SEED_LISTINGS: '0', WORKERS: '1', ...env };
  const child = spawn(process.execPath, [CLI, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals) => async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  const kill = signal('SIGKILL');
  const waitFor = (pattern: RegExp, ms = 30_000) => new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!pattern.test(out)) return;
      done();
      resolve();
    };
    const gone = () => { done(); reject(new Error(`server exited before its output matched ${pattern}:\n${out}`)); };
    const timer = setTimeout(() => { done(); reject(new Error(`no ${pattern} in the output within ${ms} ms:\n${out}`)); }, ms);
    const done = () => {
      clearTimeout(timer);
      child.stdout!.off('data', check);
      child.stderr!.off('data', check);
      child.off('exit', gone);
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', gone);
    check();
    if (child.exitCode !== null || child.signalCode !== null) gone();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { void kill(); reject(new Error(`server did not start in 30 s:\n${out}`)); }, 30_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /serving (http:\/\/\S+\/odata)/.exec(out);
      if (m || until?.test(out)) {
        clearTimeout(timer);
        resolve({ url: m?.[1] ?? '', child, output: () => out, waitFor, kill, stop: signal('SIGTERM') });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`server exited (${code ?? signal}) before serving:\n${out}`)); });
  });
}

/** The processes `pid` started that are still running (a cluster's workers), from /proc. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Whether a process exists (and is not a zombie). */
export function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Whether all a client sent from loopback port `clientPort` has been read by the server process it went to,
 * from /proc/net/tcp{,6}: the client's side has nothing left unacknowledged and the server's side nothing left
 * unread. For a test that must know a request has reached the server before it acts.
 */
export function readByServer(clientPort: number): boolean {
  const rows = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) => {
    try {
      return readFileSync(file, 'utf8').trim().split('\n').slice(1).map((line) => line.trim().split(/\s+/));
    } catch {
      return [];
    }
  });
  const port = (address: string) => parseInt(address.split(':')[1], 16);
  const queue = (row: string[], side: 0 | 1) => parseInt(row[4].split(':')[side], 16);
  const ESTABLISHED = '01';
  const client = rows.find((r) => r[3] === ESTABLISHED && port(r[1]) === clientPort);
  const server = rows.find((r) => r[3] === ESTABLISHED && port(r[2]) === clientPort);
  return client !== undefined && server !== undefined && queue(client, 0) === 0 && queue(server, 1) === 0;
}
