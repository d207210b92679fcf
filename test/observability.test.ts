/**
 * Issue 13, item 1: what an operator watches. One structured log line per request (pino, captured from its
 * destination), the probes /health and /ready, Prometheus metrics at /metrics (admin token on the service's
 * port, or a listener of its own), the start-up banner and the shutdown line. Real HTTP over both databases.
 */
import { expect } from 'chai';
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceModel } from '../generated';
import { createLogger } from '../src/observability/logger';
import { operationConfigFromEnv } from '../src/config/operation';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, odataError, request, startTestServer, TEST_TOKEN } from './support/http';
import { parsePrometheus, sample } from './support/prometheus';
import { proxiedDatabase } from './support/tcp-proxy';
import { subscriptions } from '../src/webhooks/webhooks';

type Line = Record<string, any>;

/** A logger at debug level whose lines a test reads back as objects. */
function capturedLogger(): { logger: ReturnType<typeof createLogger>; lines: Line[] } {
  const lines: Line[] = [];
  const logger = createLogger({ logLevel: 'debug', logFormat: 'json' }, { write: (s: string) => { lines.push(JSON.parse(s)); } });
  return { logger, lines };
}

/** The request line for a request id, once its response has closed (logged on 'close'). */
async function lineFor(lines: Line[], reqId: string | null): Promise<Line> {
  for (let i = 0; i < 100; i++) {
    const found = lines.find((l) => l.reqId === reqId);
    if (found) return found;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`no log line for request ${reqId}: ${JSON.stringify(lines.slice(-5))}`);
}

describeEachDatabase('Issue 13 §1 Request logs, probes and metrics', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let root: string;
  let lines: Line[];
  let plainToken: string;

  before(async () => {
    db = await target.create();
    const captured = capturedLogger();
    lines = captured.lines;
    server = await startTestServer(serviceModel, db.url, { pageSize: 5 }, { logger: captured.logger });
    root = server.url.replace(/\/odata$/, '');
    await seedDemoData(server.service, { listings: 12 });
    const { client } = await server.service.clients.add({ name: 'Plain Realty' });
    plainToken = (await server.service.clients.issueToken(client.id, 3600));
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  describe('log lines', () => {
    it('says where it serves, from which database (no password), with its page sizes, through the logger', () => {
      const banner = lines.find((l) => /^serving http:\/\/127\.0\.0\.1:\d+\/odata from /.test(l.msg));
      expect(banner, JSON.stringify(lines.slice(0, 5))).to.not.equal(undefined);
      expect(banner).to.include({ url: server.url, pageSize: 5, maxPageSize: 1000, host: '127.0.0.1', workers: 1 });
      expect(banner!.database).to.not.match(/:[^/@:]*@/);
    });

    it('one line per request: method, path with query, status, duration, bytes, client, class, request id', async () => {
      const r = await get(`${server.url}/Property?$top=2&$select=ListingKey`);
      expect(r.status).to.equal(200);
      const line = await lineFor(lines, r.headers.get('x-request-id'));
      expect(line).to.include({ level: 30, method: 'GET', path: '/odata/Property?$top=2&$select=ListingKey', status: 200, client: 'demo', class: 'B' });
      expect(line.bytes).to.equal(Buffer.byteLength(r.text));
      expect(line.ms).to.be.a('number').and.to.be.at.least(0);
      const key = await get(`${server.url}/Property('${r.json.value[0].ListingKey}')?$expand=Media`);
      expect(await lineFor(lines, key.headers.get('x-request-id'))).to.deep.include({ class: 'A', charged: { A: 1, B: 1 } });
    });

    it('keeps a sane X-Request-Id the client sent and makes one otherwise', async () => {
      const kept = await get(`${server.url}/`, { 'X-Request-Id': 'trace-42.a' });
      expect(kept.headers.get('x-request-id')).to.equal('trace-42.a');
      const replaced = await get(`${server.url}/`, { 'X-Request-Id': 'no spaces allowed' });
      expect(replaced.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    });

    it('never logs a token: not the Authorization header, not a token or secret in the query or the form', async () => {
      const r = await get(`${server.url}/Property?$top=1&access_token=${TEST_TOKEN}`);
      expect((await lineFor(lines, r.headers.get('x-request-id'))).path).to.equal('/odata/Property?$top=1&access_token=[redacted]');
      const form = await request(`${root}/oauth2/token`, {
        method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&client_id=nobody&client_secret=hunter2-secret',
      });
      expect(form.status).to.equal(401);
      await lineFor(lines, form.headers.get('x-request-id'));
      const all = JSON.stringify(lines);
      expect(all).to.not.include(TEST_TOKEN);
      expect(all).to.not.include('hunter2-secret');
      expect(all).to.not.include(plainToken);
    });

    it('client errors at info with their code; no 5xx here', async () => {
      const r = await get(`${server.url}/Property('nope')`);
      expect(r.status).to.equal(404);
      expect(await lineFor(lines, r.headers.get('x-request-id'))).to.include({ level: 30, status: 404, code: 'RecordNotFound', class: 'none' });
      const anonymous = await get(`${server.url}/Property`, { Authorization: '' });
      expect(await lineFor(lines, anonymous.headers.get('x-request-id'))).to.include({ status: 401, code: 'Unauthorized' });
      expect(anonymous.json).to.have.property('error');
    });
  });

  it('server errors at error level with the error (MariaDB, through a proxy that drops the database)', async function () {
    if (target.label !== 'MariaDB') this.skip();
    const { proxy, url } = await proxiedDatabase(db.url);
    const captured = capturedLogger();
    const other = await startTestServer(serviceModel, url, {}, { logger: captured.logger });
    try {
      expect((await get(`${other.url}/Office`)).status).to.equal(200);
      await proxy.stop();
      const r = await get(`${other.url}/Office`);
      expect(r.status).to.equal(503);
      const line = await lineFor(captured.lines, r.headers.get('x-request-id'));
      expect(line).to.include({ level: 50, status: 503 });
      expect(line.err.message).to.match(/database unavailable/);
      expect(line.err.stack).to.be.a('string');
    } finally {
      await other.close();
      await proxy.stop();
    }
  });

  describe('/health and /ready', () => {
    it('/health: 200 without a token, not metered, logged at debug', async () => {
      const r = await get(`${root}/health`, { Authorization: '' });
      expect(r.status).to.equal(200);
      expect(r.json).to.deep.equal({ status: 'up' });
      expect(r.headers.get('cache-control')).to.equal('no-store');
      expect(await lineFor(lines, r.headers.get('x-request-id'))).to.include({ level: 20, class: 'none' });
    });

    it('/ready: 200 once the start-up work is done and the database answers', async () => {
      const r = await get(`${root}/ready`, { Authorization: '' });
      expect(r.status, r.text).to.equal(200);
      expect(r.json).to.deep.equal({ status: 'ready' });
    });

    it('answer with a trailing slash or a query too; other paths and methods are not probes', async () => {
      expect((await get(`${root}/health/`, { Authorization: '' })).json).to.deep.equal({ status: 'up' });
      expect((await get(`${root}/ready?from=balancer`, { Authorization: '' })).json).to.deep.equal({ status: 'ready' });
      for (const path of ['/healthz', '/Health', '/health/x', '/odata/health']) {
        const r = await get(`${root}${path}`, { Authorization: '' });
        expect(r.status, path).to.be.oneOf([401, 404]);
        expect(r.json, path).to.have.property('error');
      }
      const posted = await fetch(`${root}/health`, { method: 'POST' });
      expect(posted.status).to.equal(404);
      expect(((await posted.json()) as { error: { code: string } }).error.code).to.equal('ResourceNotFound');
    });
  });

  describe('/metrics', () => {
    it('admin clients scrape Prometheus text: requests by set, status and class, latency, in progress, process, usage journal', async () => {
      await get(`${server.url}/Property?$top=1`);
      await get(`${server.url}/Member`);
      const r = await get(`${root}/metrics`);
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
      const samples = parsePrometheus(r.text);
      expect(sample(samples, 'reso_http_requests_total', { endpoint: 'Property', status: '200', class: 'B' })).to.be.at.least(2);
      expect(sample(samples, 'reso_http_requests_total', { endpoint: 'Property', status: '200', class: 'A' })).to.be.at.least(1);
      expect(sample(samples, 'reso_http_requests_total', { endpoint: 'Member', status: '200', class: 'B' })).to.equal(1);
      expect(sample(samples, 'reso_http_request_duration_seconds_count', { endpoint: 'Member', class: 'B' })).to.equal(1);
      expect(sample(samples, 'reso_http_request_duration_seconds_bucket', { endpoint: 'Member', class: 'B', le: '+Inf' })).to.equal(1);
      // The scrape itself is in progress while it is taken.
      expect(sample(samples, 'reso_http_requests_in_progress', {})).to.be.at.least(1);
      expect(sample(samples, 'reso_usage_journal_unapplied_bytes', {})).to.be.at.least(0);
      expect(sample(samples, 'reso_usage_journal_lag_seconds', {})).to.be.at.least(0);
      // The records read above are kept in memory by revision, and counted as they are looked for.
      expect(sample(samples, 'reso_record_cache_misses_total', {})).to.be.at.least(1);
      expect(sample(samples, 'reso_record_cache_hits_total', {})).to.be.at.least(0);
      expect(sample(samples, 'reso_record_cache_bytes', {})).to.be.greaterThan(0);
      expect(sample(samples, 'process_cpu_user_seconds_total', {})).to.be.greaterThan(0);
      expect(sample(samples, 'nodejs_eventloop_lag_seconds', {})).to.be.at.least(0);
      if (target.label === 'MariaDB') {
        expect(sample(samples, 'reso_db_pool_connections', {})).to.be.at.least(1);
        expect(sample(samples, 'reso_db_pool_max_connections', {})).to.be.at.least(1);
        expect(sample(samples, 'reso_db_pool_waiting_requests', {})).to.equal(0);
        // One server, one writer at a time here: no transaction lost a conflict, none gave up.
        expect(sample(samples, 'reso_db_write_conflicts_total', {})).to.be.at.least(0);
        expect(sample(samples, 'reso_db_write_conflicts_exhausted_total', {})).to.equal(0);
        // Only a Galera node rolls a transaction back without an error.
        expect(sample(samples, 'reso_db_write_conflicts_unannounced_total', {})).to.equal(0);
      }
      // Paths that name no entity set share one label, so a crawler cannot grow the series.
      await get(`${server.url}/NoSuchSet${Date.now()}`);
      const after = parsePrometheus((await get(`${root}/metrics`)).text);
      expect(sample(after, 'reso_http_requests_total', { endpoint: 'other', status: '404', class: 'none' })).to.be.at.least(1);
      expect(after.some((s) => /NoSuchSet/.test(JSON.stringify(s.labels)))).to.equal(false);
    });

    it('webhook lag per subscription: events the client has not been sent yet, and how long the oldest has waited', async () => {
      const { id } = await subscriptions(server.service, undefined).add({ client: 'demo', url: 'http://127.0.0.1:9/hook', token: 'consumer-token-0123456789' });
      const samples = parsePrometheus((await get(`${root}/metrics`)).text);
      const pending = samples.filter((s) => s.name === 'reso_webhook_pending_events' && s.labels.subscription === id);
      expect(pending, 'one series for the subscription').to.have.length(1);
      expect(pending[0].labels.client).to.equal('demo');
      expect(pending[0].value, 'the seeded listings are events the subscription has not delivered').to.be.greaterThan(0);
      expect(samples.filter((s) => s.name === 'reso_webhook_oldest_waiting_seconds' && s.labels.subscription === id)).to.have.length(1);
    });

    it('needs an admin token on the service port: 401 without one, 403 for other clients', async () => {
      expect((await get(`${root}/metrics`, { Authorization: '' })).status).to.equal(401);
      const other = await get(`${root}/metrics`, { Authorization: `Bearer ${plainToken}` });
      expect(other.status).to.equal(403);
      expect(odataError(other).code).to.equal('AdminRequired');
    });
  });

  it('METRICS_PORT: /metrics on a loopback listener of its own without a token, and not on the service port', async () => {
    const captured = capturedLogger();
    const other = await startTestServer(serviceModel, db.url, { metricsPort: 0 }, { logger: captured.logger });
    try {
      const banner = captured.lines.find((l) => typeof l.metrics === 'string');
      expect(banner!.metrics).to.match(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      await get(`${other.url}/Office`);
      const r = await request(banner!.metrics);
      expect(r.status).to.equal(200);
      expect(sample(parsePrometheus(r.text), 'reso_http_requests_total', { endpoint: 'Office', status: '200', class: 'B' })).to.equal(1);
      expect((await get(`${other.url.replace(/\/odata$/, '')}/metrics`)).status).to.equal(404);
    } finally {
      await other.close();
    }
    expect(captured.lines.filter((l) => /^shutting down/.test(l.msg))).to.have.length(1);
  });
});

describe('Issue 13 §1 /ready while the database cannot be used (SQLite)', () => {
  let dir: string;
  let server: RunningServer;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'reso-ready-')); });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a file that is not a SQLite database: /health 200, /ready 503 ServiceUnavailable with Retry-After', async () => {
    const file = join(dir, 'damaged.sqlite');
    writeFileSync(file, 'this is not a database, and much longer than a header would need to be'.repeat(100));
    server = await startTestServer(serviceModel, `sqlite:${file}`);
    const root = server.url.replace(/\/odata$/, '');
    expect((await get(`${root}/health`, { Authorization: '' })).status).to.equal(200);
    const r = await get(`${root}/ready`, { Authorization: '' });
    expect(r.status).to.equal(503);
    expect(r.headers.get('retry-after')).to.match(/^\d+$/);
    expect(odataError(r).code).to.equal('ServiceUnavailable');
  });
});

describe('Issue 13 §1 Log format by where the lines go', () => {
  it('plain lines for a person at a terminal, JSON for a collector (a pipe, a file, a service manager); LOG_FORMAT decides when set', () => {
    expect(operationConfigFromEnv({}, true).logFormat).to.equal('pretty');
    expect(operationConfigFromEnv({}, false).logFormat).to.equal('json');
    expect(operationConfigFromEnv({ LOG_FORMAT: 'json' }, true).logFormat).to.equal('json');
    expect(operationConfigFromEnv({ LOG_FORMAT: 'pretty' }, false).logFormat).to.equal('pretty');
    expect(() => operationConfigFromEnv({ LOG_FORMAT: 'xml' }, true)).to.throw(/LOG_FORMAT/);
  });
});

describe('Issue 13 §1 JSON lines on standard output', () => {
  const LOGGER = join(__dirname, '../src/observability/logger.js');
  /**
   * A process that logs `n` lines through the product's logger to its standard output (a pipe): request lines
   * (batched), with every 1000th an operational line instead (written at once); then it does `then`. With
   * `pauseAt`, line `pauseAt` and those after it are logged only when the test writes a line to the process's
   * standard input: once the held request lines have gone out on their own (at most 100 ms after they were
   * logged) and reached the test.
   */
  function logging(n: number, then: string, pauseAt = n, prelude = ''): ChildProcessWithoutNullStreams {
    const script = `${prelude}
      const { createLogger, requestLineLogger } = require(${JSON.stringify(LOGGER)});
      const log = createLogger({ logLevel: 'info', logFormat: 'json' });
      const requests = requestLineLogger(log);
      const lines = (from, to) => { for (let i = from; i < to; i++) (i % 1000 === 999 ? log : requests).info({ i }, 'line ' + i); };
      lines(0, ${pauseAt});
      const rest = () => { lines(${pauseAt}, ${n}); ${then} };
      ${pauseAt < n ? `process.stdin.once('data', rest);` : 'setTimeout(rest, 0);'}`;
    return spawn(process.execPath, ['-e', script]);
  }
  function numbers(text: string): number[] {
    return text.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { i: number }).i);
  }
  async function firstChunk(child: ChildProcessWithoutNullStreams): Promise<string> {
    return new Promise<string>((resolve) => child.stdout.once('data', (c: Buffer) => resolve(c.toString())));
  }

  it('a request line reaches the collector while the process goes on (held a tenth of a second at most, not until a batch fills)', async () => {
    const before = Date.now();
    const child = logging(1, `process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`);
    const chunk = await firstChunk(child);
    expect(numbers(chunk)).to.deep.equal([0]);
    const { time } = JSON.parse(chunk) as { time: string };
    expect(time, 'ISO 8601, UTC, to the millisecond').to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(time)).to.be.within(before - 1000, Date.now());
    expect(child.exitCode, 'still running').to.equal(null);
    child.stdin.end();
    await once(child, 'exit');
  });

  it('any other line is written at once, after the request lines before it, even when the process then stays busy', async () => {
    // 999 request lines; once they have come, the operational line 999, then work that never lets a timer run
    // (until killed).
    const child = logging(1000, 'for (;;);', 999);
    try {
      let out = '';
      let toldAt: number | undefined;
      const arrived = new Promise<boolean>((resolve) => {
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          if (!out.endsWith('\n')) return;
          if (toldAt === undefined && numbers(out).includes(998)) {
            toldAt = Date.now();
            child.stdin.write('go on\n');
          }
          if (numbers(out).includes(999)) resolve(true);
        });
        setTimeout(() => resolve(false), 5_000);
      });
      expect(await arrived, `the operational line, while the process is busy: ${out.length} characters came`).to.equal(true);
      expect(numbers(out)).to.deep.equal(Array.from({ length: 1000 }, (_, i) => i));
      const times = out.split('\n').filter(Boolean).map((l) => Date.parse((JSON.parse(l) as { time: string }).time));
      expect(times[998], 'each line has the time it was logged at: 998 before the test said go on').to.be.at.most(toldAt!);
      expect(times[999], 'and 999 after').to.be.at.least(toldAt!);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it('every line logged before the process exits is written, in order: when it has nothing left to do, at process.exit, on an uncaught error; also while the collector reads slowly', async () => {
    // Node's thread pool kept busy (by other work's file or crypto calls) while the lines are logged and the
    // process exits: a write waiting there must not be overtaken by those after it, nor lost.
    const busyPool = `for (let t = 0; t < 4; t++) require('node:crypto').pbkdf2('x', 'y', 400000, 32, 'sha512', () => {});`;
    for (const [then, exitCode, prelude] of [['', 0, ''], ['process.exit(3)', 3, ''], [`throw new Error('boom')`, 1, ''], ['process.exit(3)', 3, busyPool]] as const) {
      const child = logging(20_500, then, 20_500, prelude);
      let out = '';
      child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
      // A collector that falls behind: the pipe fills, and the process exits with lines still being written.
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), 300);
      const [code] = await once(child, 'exit') as [number];
      expect(code, then + prelude).to.equal(exitCode);
      if (!child.stdout.readableEnded) await once(child.stdout, 'end');
      expect(numbers(out), then + prelude).to.deep.equal(Array.from({ length: 20_500 }, (_, i) => i));
    }
  });
});
