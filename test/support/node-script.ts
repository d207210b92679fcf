/** A compiled script of the project run as a process of its own, to its exit: its code, stdout and stderr. */
import { execFile } from 'node:child_process';

export interface ScriptResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runScript(script: string, args: readonly string[], options: { cwd: string; timeoutMs?: number }): Promise<ScriptResult> {
  return new Promise((done) => {
    execFile(process.execPath, [script, ...args], { cwd: options.cwd, timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      done({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Line and column (1-based) of the `nth` occurrence of `needle` in `text`, as `line:column`. */
export function positionOf(text: string, needle: string, nth = 1): string {
  let at = -1;
  for (let i = 0; i < nth; i++) at = text.indexOf(needle, at + 1);
  if (at < 0) throw new Error(`no ${needle} in the text`);
  const before = text.slice(0, at).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}`;
}
