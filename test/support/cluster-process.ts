/** Helpers for tests of `serve --workers N` as real processes (test/cluster.test.ts, test/cluster-metrics.test.ts). */
import { HttpResult, request } from './http';
import type { ServerProcess } from './server-process';

/** The tests' one bounded poll (support/poll.ts), re-exported for the files that import it from here. */
export { until } from './poll';

/** GET over a connection of its own (no keep-alive), so that connections spread over the workers. */
export function fetchAlone(url: string, token?: string): Promise<HttpResult> {
  return request(url, { token, wire: true });
}

/** Workers that said they serve (each logs it once, ready: the primary did the start-up work, or a replacement waits for it). */
export const serving = (server: ServerProcess) => (server.output().match(/serving http:\/\/\S+ from /g) ?? []).length;

/** SIGTERM to the primary; resolves with its exit code. */
export async function stopCluster(server: ServerProcess): Promise<number | null> {
  const exited = new Promise<number | null>((done) => (server.child.exitCode === null ? server.child.once('exit', (code) => done(code)) : done(server.child.exitCode)));
  server.child.kill('SIGTERM');
  return exited;
}
