/** Helpers for tests of `serve --workers N` as real processes (test/cluster.test.ts, test/cluster-metrics.test.ts). */
import { get as httpGet } from 'node:http';
import type { ServerProcess } from './server-process';

export interface PlainAnswer { readonly status: number; readonly body: string }

/** GET over a connection of its own (no keep-alive), so that connections spread over the workers. */
export function fetchAlone(url: string, token?: string): Promise<PlainAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Connection: 'close', ...(token ? { Authorization: `Bearer ${token}` } : {}) };
    httpGet(url, { agent: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.once('error', reject);
    }).once('error', reject);
  });
}

export const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Polls `check` every 50 ms; rejects after `ms`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  for (const began = Date.now(); !(await check());) {
    if (Date.now() - began > ms) throw new Error(`${what}: not within ${ms} ms`);
    await pause(50);
  }
}

/** Workers that said they serve (each logs it once, ready: the primary did the start-up work, or a replacement waits for it). */
export const serving = (server: ServerProcess) => (server.output().match(/serving http:\/\/\S+ from /g) ?? []).length;

/** SIGTERM to the primary; resolves with its exit code. */
export async function stopCluster(server: ServerProcess): Promise<number | null> {
  const exited = new Promise<number | null>((done) => (server.child.exitCode === null ? server.child.once('exit', (code) => done(code)) : done(server.child.exitCode)));
  server.child.kill('SIGTERM');
  return exited;
}
