/**
 * docs/dictionary.md "Changing the dictionary" the operator's way, on a copy of the project, as real processes: `npm run
 * generate`, `npm run build`, `reso-server serve` (under NODE_ENV=production, so that a start never regenerates or
 * builds by itself: what runs is what the steps made). Every step is bounded and timed.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { copyProject, ProjectCopy, watchedProcess, WatchedProcess } from './project-copy';

/** The demo client's token in every server these tests start (at least 32 characters, 12 distinct). */
export const OPERATOR_TOKEN = 'operator-path-token-0123456789abcdefghij';

export interface StepResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** `npm run <script>` in `root`, to its exit (killed past `timeoutMs`, which fails the step with its signal's code). */
export function npmRun(root: string, script: string, timeoutMs = 300_000): Promise<StepResult> {
  const started = performance.now();
  return new Promise((done) => {
    execFile('npm', ['run', script], { cwd: root, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const code = error ? Number((error as { code?: unknown }).code ?? 1) || 1 : 0;
      done({ code, stdout: String(stdout), stderr: String(stderr), ms: performance.now() - started });
    });
  });
}

export interface WarmProject {
  readonly copy: ProjectCopy;
  /** What it took to make the copy's own incremental state (done once): generate, then build. */
  readonly generate: StepResult;
  readonly build: StepResult;
}

/**
 * A copy of the project that has generated and built once in place, from which each case's copy is made: the
 * compiler's incremental state (dist/.tsbuildinfo, dist/.codegen.tsbuildinfo) names node_modules by its path from
 * dist/, which a copy elsewhere does not share with the repository, so the first build of a copy checks every file;
 * copies of this one take it over, and their builds are incremental.
 */
export async function warmProject(): Promise<WarmProject> {
  const copy = copyProject();
  const generate = await npmRun(copy.root, 'generate');
  if (generate.code !== 0) throw new Error(`npm run generate in the base copy: exit ${generate.code}\n${generate.stderr}`);
  const build = await npmRun(copy.root, 'build');
  if (build.code !== 0) throw new Error(`npm run build in the base copy: exit ${build.code}\n${build.stdout}${build.stderr}`);
  return { copy, generate, build };
}

export interface RunningServe {
  /** The service root. */
  readonly url: string;
  readonly process: WatchedProcess;
  /** SIGTERM, as an operator stops it; resolves with its exit code once it is gone (SIGKILL past 20 s, and throws). */
  stop(): Promise<number | string>;
}

/** Servers started and not yet seen to exit: a test that fails (or times out) midway ends them (`endServers`). */
const running = new Set<WatchedProcess>();

/** Ends (SIGKILL) every server a test started that is still running; resolves once they are gone. */
export async function endServers(): Promise<void> {
  for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all([...running].map((p) => p.exited()));
}

export type StartOutcome =
  | { readonly kind: 'serving'; readonly serve: RunningServe; readonly ms: number }
  | { readonly kind: 'exited'; readonly code: number | string; readonly stderr: string; readonly output: string; readonly ms: number };

/**
 * `reso-server serve` in `root` on `databaseUrl` (one process, a free port, JSON logs), until it says its start-up
 * work is done and it is ready, or until it exits; fails past `ms`.
 */
export async function startServe(root: string, databaseUrl: string, env: Record<string, string> = {}, ms = 120_000): Promise<StartOutcome> {
  const started = performance.now();
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DEMO_TOKEN', 'FEED_SCOPE', 'DATABASE_URL', 'SEED_LISTINGS', 'BASE_URL']) delete inherited[name];
  const child = watchedProcess(process.execPath, [join(root, 'bin/reso-server.js'), 'serve'], {
    cwd: root,
    env: {
      ...inherited, NODE_ENV: 'production', DATABASE_URL: databaseUrl, PORT: '0', WORKERS: '1', SEED_LISTINGS: '0',
      DEMO_TOKEN: OPERATOR_TOKEN, LOG_FORMAT: 'json', SHUTDOWN_TIMEOUT_MS: '2000', ...env,
    },
  });
  running.add(child);
  void child.exited().then(() => running.delete(child));
  const ready = child.waitFor(/start-up done in [\d.]+ s; ready/, ms).then(() => true, () => false);
  if (!(await ready)) {
    if (child.child.exitCode === null && child.child.signalCode === null) {
      child.child.kill('SIGKILL');
      await child.exited();
      throw new Error(`reso-server serve neither became ready nor exited within ${ms} ms:\n${child.output()}`);
    }
    return { kind: 'exited', code: await child.exited(), stderr: child.stderr(), output: child.output(), ms: performance.now() - started };
  }
  const url = (await child.waitFor(/serving (http:\/\/\S+\/odata)/, 10_000))[1];
  const stop = async () => {
    child.child.kill('SIGTERM');
    const timer = setTimeout(() => child.child.kill('SIGKILL'), 20_000);
    const code = await child.exited();
    clearTimeout(timer);
    if (code === 'SIGKILL') throw new Error(`reso-server serve did not stop within 20 s of SIGTERM:\n${child.output()}`);
    return code;
  };
  return { kind: 'serving', serve: { url, process: child, stop }, ms: performance.now() - started };
}

/**
 * What a server's output shows went wrong while it ran: a stack trace, a log line at error level or above, a
 * response with a 5xx status. Empty when nothing did.
 */
export function serverFailures(output: string): string[] {
  const out: string[] = [];
  if (/\n\s+at .+:\d+:\d+\)?\n/.test(output)) out.push('a stack trace');
  for (const line of output.split('\n')) {
    if (/"level":(50|60)\b/.test(line)) out.push(`logged: ${line.slice(0, 400)}`);
    else if (/"status":5\d\d\b/.test(line)) out.push(`answered: ${line.slice(0, 400)}`);
  }
  return out;
}
