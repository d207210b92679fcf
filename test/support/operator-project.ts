/**
 * What an operator does with a dictionary of their own, as real processes in a copy of the project: the dictionary
 * put in place of csdl/reso-dictionary.xml, `npm run generate`, `npm run build`, then `reso-server serve` (the
 * copy's own bin) on a database, with demo data and a known token.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyProject, ProjectCopy, watchedProcess } from './project-copy';

export interface OperatorProject extends ProjectCopy {
  /** Seconds each step took, as measured here (for the report); `init` runs both, measured as one. */
  readonly seconds: { readonly generate: number; readonly build: number } | { readonly init: number };
  /** What the generator (or init) printed. */
  readonly said: string;
}

export interface ServedProject {
  /** The service root, `http://…/odata`. */
  readonly url: string;
  /** Seconds from spawning to serving (migrations and seeding included). */
  readonly seconds: number;
  output(): string;
  stop(): Promise<void>;
}

/** `command args` in `root`; resolves with the seconds it took and what it printed, rejects with that when it fails. */
function run(root: string, command: string, args: readonly string[], timeoutMs: number): Promise<{ seconds: number; said: string }> {
  const began = Date.now();
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: root, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed in ${root} (${error.code ?? error.signal}):\n${stdout}${stderr}`.slice(0, 8000)));
      else resolve({ seconds: (Date.now() - began) / 1000, said: `${stdout}${stderr}` });
    });
  });
}

/**
 * A copy of the project serving `dictionary` (the file's text): put in place of csdl/reso-dictionary.xml, then
 * `npm run generate` and `npm run build`; or, with `init`, given to `reso-server init --dictionary` (which adds the
 * policy the dictionary does not state, then generates and builds).
 */
export async function projectWithDictionary(dictionary: string, options: { init?: boolean } = {}): Promise<OperatorProject> {
  const copy = copyProject();
  try {
    if (options.init) {
      const file = join(copy.root, 'operator-dictionary.xml');
      writeFileSync(file, dictionary);
      const init = await run(copy.root, process.execPath, ['bin/reso-server.js', 'init', '--dictionary', file], 480_000);
      return { ...copy, seconds: { init: init.seconds }, said: init.said };
    }
    writeFileSync(join(copy.root, 'csdl/reso-dictionary.xml'), dictionary);
    const generate = await run(copy.root, 'npm', ['run', '--silent', 'generate'], 180_000);
    const build = await run(copy.root, 'npm', ['run', '--silent', 'build'], 180_000);
    return { ...copy, seconds: { generate: generate.seconds, build: build.seconds }, said: generate.said };
  } catch (e) {
    copy.remove();
    throw e;
  }
}

/**
 * `reso-server serve` from the copy, in production mode (so a stale model or build is refused, not rebuilt), on
 * `databaseUrl`, seeding `listings` demo listings into it when it is empty, with `token` as the demo client's.
 */
export async function serveProject(project: ProjectCopy, databaseUrl: string, token: string, listings: number): Promise<ServedProject> {
  const began = Date.now();
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', DATABASE_URL: databaseUrl, PORT: '0', WORKERS: '1', SEED_LISTINGS: String(listings), DEMO_TOKEN: token, LOG_FORMAT: 'json' };
  delete env.FEED_SCOPE;
  const server = watchedProcess(process.execPath, [join(project.root, 'bin/reso-server.js'), 'serve'], { cwd: project.root, env });
  const stop = async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
    await server.exited();
  };
  try {
    const url = (await server.waitFor(/serving (http:\/\/\S+\/odata)/, 90_000))[1];
    return { url, seconds: (Date.now() - began) / 1000, output: server.output, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
