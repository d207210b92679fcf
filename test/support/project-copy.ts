/**
 * A copy of the project in a temporary folder (its node_modules linked, its files' times kept), for tests that
 * regenerate, build, start or watch a project whose dictionary they edit; and a process whose output a test
 * waits on, with a bound.
 */
import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './shared';

/** What a start, a generate and a build read: the sources, the scripts, and the build they were compiled to. */
const COPIED = ['bin', 'scripts', 'src', 'codegen', 'generated', 'csdl', 'dist', 'package.json', 'tsconfig.json'];

const freshness = require(join(REPO_ROOT, 'scripts/freshness.js')) as { writeStamp(root: string): void };

export interface ProjectCopy {
  readonly root: string;
  remove(): void;
}

/**
 * Copies the project (or another copy of it, `from`); its dist/ (the build these tests run) is stamped as built from
 * the copy's sources. A copy of a copy sits at the same depth under the temporary folder, so the compiler's
 * incremental state (dist/.tsbuildinfo, which names node_modules' files by their path from dist/) still applies.
 */
export function copyProject(from = REPO_ROOT): ProjectCopy {
  const root = mkdtempSync(join(tmpdir(), 'reso-project-'));
  for (const name of COPIED) {
    if (existsSync(join(from, name))) cpSync(join(from, name), join(root, name), { recursive: true, preserveTimestamps: true });
  }
  symlinkSync(realpathSync(join(from, 'node_modules')), join(root, 'node_modules'), 'dir');
  freshness.writeStamp(root);
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

export interface WatchedProcess {
  readonly child: ChildProcess;
  /** Standard output and error so far, interleaved as they arrived. */
  output(): string;
  /** Standard error so far, alone. */
  stderr(): string;
  /** Resolves with the match once the output from `from` on matches `pattern`; rejects after `ms`, or if the process exits first. */
  waitFor(pattern: RegExp, ms: number, from?: number): Promise<RegExpExecArray>;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited(): Promise<number | string>;
}

export function watchedProcess(command: string, args: readonly string[], options: SpawnOptions): WatchedProcess {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  const heard = (chunk: Buffer) => { out += chunk.toString(); for (const l of listeners) l(); };
  child.stdout!.on('data', heard);
  child.stderr!.on('data', (chunk: Buffer) => { err += chunk.toString(); heard(chunk); });
  const exit = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? '')));
  const waitFor = (pattern: RegExp, ms: number, from = 0) => new Promise<RegExpExecArray>((resolve, reject) => {
    const done = () => { clearTimeout(timer); listeners.delete(check); };
    const check = () => {
      const m = pattern.exec(out.slice(from));
      if (m) { done(); resolve(m); }
    };
    const timer = setTimeout(() => { done(); reject(new Error(`no ${pattern} in the output within ${ms} ms:\n${out}`)); }, ms);
    listeners.add(check);
    void exit.then((code) => { if (listeners.has(check)) { done(); reject(new Error(`exited (${code}) before its output matched ${pattern}:\n${out}`)); } });
    check();
  });
  return { child, output: () => out, stderr: () => err, waitFor, exited: () => exit };
}
