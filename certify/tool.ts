/**
 * RESO's certification tool, reso-cert (npm @reso-standards/reso-certification), as `npm run certify` uses it:
 * built by the recipe in ../shared/reso-cert (two of its packages are not on npm, so it is never a dependency of
 * the project), run as a process of its own against a running server, and read back from the reports it writes.
 * Every request it makes is logged (the recipe's fetch-log.mjs), so a failure can be shown with its answer.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Tool {
  /** The reso-cert executable. */
  readonly bin: string;
  /** The preloaded module that logs each request (fetch-log.mjs), when the recipe has it. */
  readonly fetchLog?: string;
}

/** What a process printed and how it ended. */
export interface Finished {
  readonly code: number;
  readonly output: string;
}

/** Runs `command` with `args`, its output kept (and echoed when `echo`); never throws for a non-zero exit. */
export function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env, echo = false): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      if (echo) process.stderr.write(chunk);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output }));
  });
}

/**
 * Builds the tool with the recipe in `recipe` (its build.sh: idempotent, about 30 s the first time, cached under
 * ~/.cache/reso-cert) and says where it is; undefined when the recipe is not there.
 */
export async function buildTool(recipe: string): Promise<Tool | undefined> {
  const script = join(recipe, 'build.sh');
  if (!existsSync(script)) return undefined;
  const built = await run('bash', [script], process.env, true);
  const bin = built.output.trim().split('\n').pop()!.trim();
  if (built.code !== 0 || !existsSync(bin)) throw new Error(`building reso-cert failed (exit ${built.code}):\n${built.output.slice(-2000)}`);
  const fetchLog = join(recipe, 'fetch-log.mjs');
  return { bin, fetchLog: existsSync(fetchLog) ? fetchLog : undefined };
}

/** One reso-cert command's result: its exit code and output, the folder of its reports, and its request log. */
export interface ToolRun extends Finished {
  readonly reports: string;
  readonly requests: string;
}

/** `reso-cert <args> --url <url> --auth-token <token> --output-dir <out>`, each request logged in `<out>/requests.jsonl`. */
export async function runTool(tool: Tool, args: readonly string[], url: string, token: string, out: string): Promise<ToolRun> {
  const requests = join(out, 'requests.jsonl');
  const env: NodeJS.ProcessEnv = { ...process.env, RESO_CERT_FETCH_LOG: requests };
  if (tool.fetchLog) env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import=file://${tool.fetchLog}`.trim();
  const finished = await run(tool.bin, [...args, '--url', url, '--auth-token', token, '--output-dir', out], env);
  return { ...finished, reports: out, requests };
}

/** The one file of this name under `dir` (reso-cert nests its reports by version, system and recipient). */
export function reportFile(dir: string, name: string): string | undefined {
  for (const entry of existsSync(dir) ? readdirSync(dir) : []) {
    const path = join(dir, entry);
    if (entry === name) return path;
    if (statSync(path).isDirectory()) {
      const found = reportFile(path, name);
      if (found) return found;
    }
  }
  return undefined;
}

export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** A request reso-cert made, as fetch-log.mjs wrote it. */
export interface LoggedRequest {
  readonly url: string;
  readonly status?: number;
  readonly body?: string;
}

export function loggedRequests(path: string): LoggedRequest[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as LoggedRequest);
}
