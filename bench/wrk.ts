/**
 * The load generator of the benchmarks: `wrk` (Debian's package `wrk`), a C program that counts the bytes of a
 * response without parsing its body, so the rates it gives are the server's and the wire's, not its own (autocannon
 * parses every body and capped the figures near 2,500 req/s of a 607 KB page and ~90 req/s of a gzip one: issue 42).
 * One thread (`-t1`), pinned to a CPU with taskset when asked, `--latency` for the percentiles. Several paths are
 * asked for in turn by a Lua script written to a temporary file; the same script's `done` prints wrk's exact
 * summary (requests, bytes, errors), which the text output rounds. A run with a response other than 2xx or 3xx
 * (wrk counts the two together; no benchmarked server redirects), a socket error or a timeout fails.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endedChildrenCpuSeconds } from './process-cpu';

/** How to get wrk, said wherever a benchmark stops for want of it. */
export const INSTALL_WRK = 'the benchmarks measure load with wrk, which is not installed: apt-get install -y wrk (Debian/Ubuntu)';

export interface WrkLoad {
  /** `http://host:port`. */
  origin: string;
  /** Asked for in turn, one request each; with one path, every request asks for it. */
  paths: readonly string[];
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
  /** The CPU wrk runs on (taskset); none: wherever the kernel puts it. */
  cpu?: number;
}

export interface WrkResult {
  requestsPerSecond: number;
  /** Responses received in the run. */
  requests: number;
  /** The run's length as wrk timed it. */
  seconds: number;
  /** Bytes read, headers included. */
  bytes: number;
  transferPerSecond: number;
  /** Latency in ms: mean, and the percentiles of `--latency`. */
  latency: { mean: number; p50: number; p90: number; p99: number };
  /** CPU seconds wrk itself used: near `seconds` means the load generator was the limit. */
  cpuSeconds: number;
}

/** Why wrk cannot run here (INSTALL_WRK when it is missing), or undefined when it can. */
export function wrkMissing(): string | undefined {
  try {
    // `wrk --version` prints its usage and exits 1: that it ran at all is the answer.
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return INSTALL_WRK;
  }
  return undefined;
}

/** A benchmark's first step: without wrk, one line saying how to install it, and exit. */
export function exitUnlessWrk(name: string): void {
  const missing = wrkMissing();
  if (!missing) return;
  console.error(`[${name}] ${missing}`);
  process.exit(1);
}

/** One run of wrk; rejects with its output when a response or a socket failed. */
export async function wrk(load: WrkLoad): Promise<WrkResult> {
  if (!load.paths.length) throw new Error('wrk: no path to ask for');
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  try {
    const script = join(dir, 'load.lua');
    writeFileSync(script, luaScript(load.paths));
    const args = ['-t1', `-c${load.connections}`, `-d${load.seconds}s`, '--timeout', '30s', '--latency', '-s', script,
      ...Object.entries(load.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), `${load.origin}${load.paths[0]}`];
    const [command, argv] = load.cpu === undefined ? ['wrk', args] : ['taskset', ['-c', String(load.cpu), 'wrk', ...args]];
    const before = endedChildrenCpuSeconds();
    const { code, out } = await run(command, argv);
    const what = `wrk ${load.origin}${load.paths[0]}${load.paths.length > 1 ? ` (+${load.paths.length - 1} paths)` : ''}`;
    if (code !== 0) throw new Error(`${what} exited with ${code}:\n${out}`);
    return { ...parseOutput(what, out), cpuSeconds: endedChildrenCpuSeconds() - before };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A `request` cycling through the paths (only for several: a script without one lets wrk send one request
 * prepared once, its fastest way), and a `done` printing the exact summary.
 */
function luaScript(paths: readonly string[]): string {
  const bad = paths.find((p) => !/^\/[\x21-\x7e]*$/.test(p));
  if (bad !== undefined) throw new Error(`wrk: a path must be printable ASCII starting with / (URL-encoded): ${JSON.stringify(bad)}`);
  const cycle = paths.length < 2 ? [] : [
    `local paths = {${paths.map((p) => JSON.stringify(p)).join(', ')}}`,
    'local i = 0',
    'request = function()',
    '  i = i % #paths + 1',
    '  return wrk.format(nil, paths[i])',
    'end',
  ];
  return [...cycle,
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format("wrk-summary requests=%d bytes=%d duration_us=%d connect=%d read=%d write=%d status=%d timeout=%d\\n",',
    '    summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write, e.status, e.timeout))',
    'end', ''].join('\n');
}

function run(command: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    child.once('error', (e: NodeJS.ErrnoException) => fail(e.code === 'ENOENT' ? new Error(INSTALL_WRK) : e));
    child.once('close', (code) => done({ code, out }));
  });
}

const TIME_MS: Record<string, number> = { us: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };
const BYTES: Record<string, number> = { B: 1, KB: 2 ** 10, MB: 2 ** 20, GB: 2 ** 30, TB: 2 ** 40 };

function parseOutput(what: string, out: string): Omit<WrkResult, 'cpuSeconds'> {
  const fail = (why: string): never => { throw new Error(`${what}: ${why}\n${out}`); };
  const summary = /wrk-summary (.*)/.exec(out)?.[1] ?? fail('no summary from the script\'s done()');
  const n = Object.fromEntries(summary.split(' ').map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)]));
  if (n.status > 0) fail(`${n.status} responses were not 2xx or 3xx`);
  const errors = n.connect + n.read + n.write + n.timeout;
  if (errors > 0) fail(`socket errors: connect ${n.connect}, read ${n.read}, write ${n.write}, timeout ${n.timeout}`);
  if (!(n.requests > 0)) fail('no response in the run');
  const time = (re: RegExp) => {
    const m = re.exec(out) ?? fail(`no ${re.source} in its output`);
    return Number(m[1]) * (TIME_MS[m[2]] ?? fail(`unknown time unit ${m[2]}`));
  };
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(out) ?? fail('no Requests/sec');
  const transfer = /Transfer\/sec:\s+([\d.]+)(\w+)/.exec(out) ?? fail('no Transfer/sec');
  return {
    requestsPerSecond: Number(rate[1]),
    requests: n.requests,
    seconds: n.duration_us / 1e6,
    bytes: n.bytes,
    transferPerSecond: Number(transfer[1]) * (BYTES[transfer[2]] ?? fail(`unknown size unit ${transfer[2]}`)),
    latency: {
      mean: time(/^\s+Latency\s+([\d.]+)(\w+)/m),
      p50: time(/^\s+50%\s+([\d.]+)(\w+)/m),
      p90: time(/^\s+90%\s+([\d.]+)(\w+)/m),
      p99: time(/^\s+99%\s+([\d.]+)(\w+)/m),
    },
  };
}
