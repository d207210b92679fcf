/**
 * `reso-server serve` as a child process (bench/product-server.ts) for the scripts that measure it from
 * outside: started on a database with demo data and a known token, resolved once it says where it serves.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/**
 * `workers` above 1 runs a cluster (bench/workers.ts): resolved once every worker says it serves. `env`: more
 * settings (MAX_CONCURRENT_REQUESTS, …). `root`: the checkout whose build runs (another revision, to compare).
 */
export function startProduct(
  databaseUrl: string, listings: number, token: string, workers = 1, env: Record<string, string> = {}, root = ROOT,
): Promise<{ base: string; child: ChildProcess }> {
  const childEnv = {
    ...process.env, DATABASE_URL: databaseUrl, PORT: '0', WORKERS: String(workers), SEED_LISTINGS: String(listings), DEMO_TOKEN: token,
    BENCH_PARENT_PID: String(process.pid), ...env,
  };
  const child = spawn(process.execPath, [join(root, 'dist/bench/product-server.js')], { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'inherit'] });
  return servingAt(child, 'the product', workers).then((base) => ({ base, child }));
}

/**
 * The service root a `reso-server serve` child says it serves (`workers`: once each worker has said so); rejects if
 * it exits first, with what it printed. From then on its output (a line per request) is read and dropped, so the
 * pipe never fills.
 */
export function servingAt(child: ChildProcess, name: string, workers = 1): Promise<string> {
  let out = '';
  return new Promise((resolveStart, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before serving:\n${out}`)));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /serving (http:\/\/\S+\/odata)/.exec(out);
      if (!m || (out.match(/serving http:\/\/\S+\/odata/g) ?? []).length < workers) return;
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      resolveStart(m[1]);
    });
  });
}
