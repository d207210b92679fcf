/**
 * The OData generators and clients of test/clients/package-lock.json, installed outside the repository by
 * scripts/install-client-tools.sh (they are large, and only test/clients.test.ts runs them). Absent, their tests
 * skip saying how to install them; in CI (`CI` set) absent tools fail the run, as .ci/run installs them.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const CLIENTS_HOME = process.env.RESO_CLIENTS_HOME ?? join(homedir(), '.cache', 'reso-clients');
const MODULES = join(CLIENTS_HOME, 'node_modules');
const TOOLS = ['generate-odata-client', 'cds', 'odata2ts', 'odata-openapi3', 'tsc'];
const HOW = 'run scripts/install-client-tools.sh (it installs test/clients/package-lock.json there)';

/** Call from a suite's `before`: skips it when the tools are not installed, or fails in CI. */
export function requireClientTools(ctx: Mocha.Context): void {
  const missing = TOOLS.filter((t) => !existsSync(bin(t)));
  if (missing.length === 0) return;
  if (process.env.CI) throw new Error(`the client tools are not installed at ${CLIENTS_HOME} (no ${missing.join(', ')}): ${HOW}`);
  console.log(`      (skipped: the client tools are not installed at ${CLIENTS_HOME}; ${HOW})`);
  ctx.skip();
}

export function bin(name: string): string {
  return join(MODULES, '.bin', name);
}

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A command run to its end, without blocking this process (whose server the command may be calling). */
export function run(command: string, args: readonly string[], options: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...options.env },
      timeout: options.timeoutMs ?? 240_000,
      maxBuffer: 64 * 1024 * 1024,
    }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** A folder for one client's project, whose node_modules are the installed tools'. */
export class ClientProject {
  readonly dir: string;

  constructor(name: string) {
    this.dir = mkdtempSync(join(tmpdir(), `reso-client-${name}-`));
    symlinkSync(MODULES, join(this.dir, 'node_modules'), 'dir');
  }

  path(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  write(file: string, text: string): string {
    const path = this.path(file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A TypeScript project's compiler settings for code a generator wrote and a small program using it. */
export function tsconfig(include: readonly string[]): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2021', module: 'commonjs', moduleResolution: 'node', strict: true, esModuleInterop: true, skipLibCheck: true,
      outDir: 'dist', rootDir: '.',
    },
    include,
  }, null, 2);
}

/** The last line of a program's output, read as the JSON it prints. */
export function lastJson(r: Run): any {
  const line = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`expected a JSON line, got (exit ${r.code}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
  }
}
