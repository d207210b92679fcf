/**
 * docs/scaling-out.md "Every core", metrics: with `serve --workers 2` as real processes, a scrape answers the cluster's figures
 * (every worker's summed) on the service port and on the primary's METRICS_PORT listener; a worker that does not
 * answer fails the scrape with 503 MetricsUnavailable within the bound instead of hanging it; scrapes during a
 * SIGHUP reload are answered, and a scrape waiting at SIGTERM holds up neither itself nor the shutdown.
 */
import { expect } from 'chai';
import { fetchAlone, serving, stopCluster } from './support/cluster-process';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { HttpResult, request, TEST_TOKEN } from './support/http';
import { runCli } from './support/licence-http';
import { parsePrometheus, sample } from './support/prometheus';
import { until } from './support/poll';
import { childPids, readByServer, ServerProcess, spawnServer } from './support/server-process';

const WORKERS = 2;
/** The primary's collection bound (src/cluster/cluster-metrics.ts) and a margin for a loaded test machine. */
const SCRAPE_BOUND_MS = 2000 + 3000;

interface Cluster { readonly server: ServerProcess; readonly metricsUrl: string; readonly keys: string[] }

/** Class A requests answered for Property, as a scrape sums them. */
const keyFetches = (text: string) => sample(parsePrometheus(text), 'reso_http_requests_total', { endpoint: 'Property', status: '200', class: 'A' });

/** A scrape and how long it took to be answered. */
async function timed(url: string, token?: string): Promise<HttpResult & { ms: number }> {
  const began = Date.now();
  const answer = await fetchAlone(url, token);
  return { ...answer, ms: Date.now() - began };
}

describeEachDatabase('Every core: metrics summed over serve --workers 2', (target) => {
  let db: TestDatabase;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    const seeded = await runCli(db.url, ['seed', '--listings', '20'], 110_000);
    expect(seeded.code, seeded.stderr).to.equal(0);
  });
  after(async () => { await db?.drop(); });

  async function startCluster(env: Record<string, string> = {}): Promise<Cluster> {
    const server = await spawnServer(db.url, { DEMO_TOKEN: TEST_TOKEN, WORKERS: String(WORKERS), MAX_CONCURRENT_REQUESTS: '64', SHUTDOWN_TIMEOUT_MS: '3000', LOG_LEVEL: 'debug', ...env });
    await until('both workers serving', () => serving(server) >= WORKERS);
    const metricsUrl = /metrics of every worker, summed, at (http:\/\/\S+\/metrics)/.exec(server.output())?.[1] ?? `${server.url.replace(/\/odata$/, '')}/metrics`;
    const keys = (await request(`${server.url}/Property?$select=ListingKey&$top=20`, { token: TEST_TOKEN })).json.value.map((r: { ListingKey: string }) => r.ListingKey);
    return { server, metricsUrl, keys };
  }

  /** `n` fetches by key on connections of their own; resolves with the pids of the workers that answered them. */
  async function fetchKeys({ server, keys }: Cluster, n: number): Promise<Set<number>> {
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => fetchAlone(`${server.url}/Property('${keys[i % keys.length]}')`, TEST_TOKEN)));
    expect(answers.map((a) => a.status).filter((s) => s !== 200), 'statuses other than 200').to.deep.equal([]);
    // Each request's log line names the process that answered it. Lines are written asynchronously (pino), so a
    // worker's may arrive after its answers: wait for all n, bounded.
    const lines = () => server.output().split('\n').filter((l) => l.includes('"path":"/odata/Property(\''));
    await until(`the log lines of ${n} fetches`, () => lines().length >= n, 10_000);
    return new Set(lines().map((l) => (JSON.parse(l) as { pid: number }).pid));
  }

  it('on the service port: N fetches spread over both workers count N in every scrape, whichever worker takes it', async function () {
    this.timeout(60_000);
    const cluster = await startCluster();
    try {
      const n = 40;
      const answeredBy = await fetchKeys(cluster, n);
      expect([...answeredBy].sort(), 'workers that answered the fetches').to.deep.equal(childPids(cluster.server.child.pid!).sort());
      for (let i = 0; i < 4; i++) {
        const scrape = await fetchAlone(cluster.metricsUrl, TEST_TOKEN);
        expect(scrape.status, scrape.text).to.equal(200);
        expect(keyFetches(scrape.text), 'reso_http_requests_total of Property, 200, class A').to.equal(n);
        const samples = parsePrometheus(scrape.text);
        expect(sample(samples, 'reso_http_request_duration_seconds_count', { endpoint: 'Property', class: 'A' })).to.equal(n);
        expect(sample(samples, 'reso_http_request_duration_seconds_bucket', { endpoint: 'Property', class: 'A', le: '+Inf' })).to.equal(n);
      }
    } finally {
      expect(await stopCluster(cluster.server), cluster.server.output()).to.equal(0);
    }
  });

  it('on METRICS_PORT, the primary\'s: the same sum without a token; a worker that does not answer gives 503 MetricsUnavailable within the bound', async function () {
    this.timeout(60_000);
    const cluster = await startCluster({ METRICS_PORT: '0' });
    const [stopped] = childPids(cluster.server.child.pid!);
    try {
      expect(cluster.metricsUrl).to.match(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const n = 30;
      await fetchKeys(cluster, n);
      expect(keyFetches((await fetchAlone(cluster.metricsUrl)).text)).to.equal(n);
      expect((await fetchAlone(`${cluster.server.url.replace(/\/odata$/, '')}/metrics`, TEST_TOKEN)).status, 'the service port, with METRICS_PORT set').to.equal(404);
      process.kill(stopped, 'SIGSTOP');
      const refused = await timed(cluster.metricsUrl);
      expect(refused.status, refused.text).to.equal(503);
      expect(JSON.parse(refused.text).error).to.include({ code: 'MetricsUnavailable' }).and.have.property('message').that.matches(/1 of 2 workers did not answer within 2000 ms/);
      expect(refused.ms).to.be.below(SCRAPE_BOUND_MS);
      process.kill(stopped, 'SIGCONT');
      expect(keyFetches((await fetchAlone(cluster.metricsUrl)).text), 'once the worker answers again').to.equal(n);
    } finally {
      try { process.kill(stopped, 'SIGCONT'); } catch { /* gone */ }
      expect(await stopCluster(cluster.server), cluster.server.output()).to.equal(0);
    }
  });

  it('scrapes of the service port during a SIGHUP reload are each answered within the bound, as Prometheus text or 503 MetricsUnavailable', async function () {
    this.timeout(90_000);
    const cluster = await startCluster();
    try {
      await fetchKeys(cluster, 10);
      const answers: (HttpResult & { ms: number })[] = [];
      let reloading = true;
      const scraping = (async () => {
        while (reloading) answers.push(await timed(cluster.metricsUrl, TEST_TOKEN));
      })();
      cluster.server.child.kill('SIGHUP');
      await cluster.server.waitFor(/reload done in/, 60_000);
      reloading = false;
      await scraping;
      expect(answers.length).to.be.above(0);
      for (const a of answers) {
        expect(a.ms, 'a scrape took longer than the bound').to.be.below(SCRAPE_BOUND_MS);
        if (a.status === 200) parsePrometheus(a.text);
        else expect(JSON.parse(a.text).error.code, `${a.status} ${a.text}`).to.equal('MetricsUnavailable');
      }
      expect(answers.filter((a) => a.status === 200), 'scrapes answered with figures during the reload').to.not.be.empty;
      const after = await fetchAlone(cluster.metricsUrl, TEST_TOKEN);
      expect(after.status).to.equal(200);
      // The workers that counted the fetches are gone: their counts went with them, as in any restart.
      expect(keyFetches(after.text)).to.equal(-1);
    } finally {
      expect(await stopCluster(cluster.server), cluster.server.output()).to.equal(0);
    }
  });

  it('a scrape waiting on a worker at SIGTERM is answered 503 at once, and the cluster stops with exit 0', async function () {
    this.timeout(60_000);
    const cluster = await startCluster({ METRICS_PORT: '0' });
    const [stopped] = childPids(cluster.server.child.pid!);
    try {
      process.kill(stopped, 'SIGSTOP');
      let sentFrom: number | undefined;
      const waiting = request(cluster.metricsUrl, { wire: true, onSent: (port) => { sentFrom = port; } });
      await until('the primary has read the scrape', () => sentFrom !== undefined && readByServer(sentFrom), 10_000, 10);
      const exited = stopCluster(cluster.server);
      const answer = await waiting;
      expect(answer.status, answer.text).to.equal(503);
      // Not the collection's bound (which says how many workers did not answer): the shutdown ended the wait.
      expect(JSON.parse(answer.text).error.message).to.match(/the server is stopping/);
      process.kill(stopped, 'SIGCONT');
      expect(await exited, cluster.server.output()).to.equal(0);
    } finally {
      try { process.kill(stopped, 'SIGCONT'); } catch { /* gone */ }
      if (cluster.server.child.exitCode === null) await cluster.server.kill();
    }
  });
});
