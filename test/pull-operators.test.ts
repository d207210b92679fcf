/**
 * Issue 41 §1 "Seen by operators": `/ready` can require a maximum lag behind the upstreams pulled here
 * (PULL_MAX_LAG_SECONDS), and the admin API the console reads shows each upstream's state (GET /admin/upstreams).
 * A real upstream reso-server, a real `reso-server pull` run, and the pulling server's clock moved by hand.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { configFromEnv } from '../src/config/config';
import { seedDemoData } from '../src/demo/demo-data';
import type { RunningServer } from '../src/process/server';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, HttpResult, odataError, startTestServer } from './support/http';
import { runCli } from './support/licence-http';
import { addUpstream, upstreamToken } from './support/pull-setup';
import { parsePrometheus, sample } from './support/prometheus';

const MAX_LAG = 60;

describe('PULL_MAX_LAG_SECONDS (issue 41 §1)', () => {
  it('is unset by default (no requirement); a whole number of seconds from 1 when set', () => {
    expect(configFromEnv({}).pullMaxLagSeconds).to.equal(undefined);
    expect(configFromEnv({ PULL_MAX_LAG_SECONDS: '600' }).pullMaxLagSeconds).to.equal(600);
    for (const bad of ['0', '-5', '1.5', 'ten']) {
      expect(() => configFromEnv({ PULL_MAX_LAG_SECONDS: bad }), bad).to.throw(/^PULL_MAX_LAG_SECONDS must be an integer from 1 to/);
    }
  });
});

describeEachDatabase('/ready with PULL_MAX_LAG_SECONDS: 503 while an upstream not paused lags more (issue 41 §1)', (target) => {
  let upDb: TestDatabase;
  let downDb: TestDatabase;
  let upstream: RunningServer;
  let downstream: RunningServer;
  let unrequired: RunningServer;
  let now = Date.now();
  const clock = { now: () => now };
  const ready = (server: RunningServer) => get(`${server.url.replace(/\/odata$/, '')}/ready`, { Authorization: '' });
  const expectLagging = (r: HttpResult, message: RegExp) => {
    expect(r.status).to.equal(503);
    expect(r.headers.get('retry-after')).to.equal('5');
    expect(odataError(r)).to.include({ code: 'UpstreamLagging', target: 'up' });
    expect(odataError(r).message).to.match(message);
  };

  before(async function () {
    this.timeout(120_000);
    [upDb, downDb] = [await target.create(), await target.create()];
    upstream = await startTestServer(serviceModel, upDb.url);
    await seedDemoData(upstream.service, { listings: 10 });
    const token = await upstreamToken(upDb.url);
    downstream = await startTestServer(serviceModel, downDb.url, { pullMaxLagSeconds: MAX_LAG }, { clock });
    unrequired = await startTestServer(serviceModel, downDb.url);
    await addUpstream(downDb.url, 'up', upstream, token, ['--set', 'Property']);
  });
  after(async () => {
    await unrequired?.close();
    await downstream?.close();
    await upstream?.close();
    await upDb?.drop();
    await downDb?.drop();
  });

  it('before any pull of an upstream has reached its end, the copy is incomplete: 503 UpstreamLagging naming it, with Retry-After', async () => {
    expectLagging(await ready(downstream), /upstream up is not complete yet/);
    expect((await ready(unrequired)).status, 'without the setting, no requirement').to.equal(200);
  });

  it('once a pull has caught up: 200 while the lag (as reso_pull_lag_seconds) is within the setting, 503 past it', async function () {
    this.timeout(120_000);
    const run = await runCli(downDb.url, ['pull', 'run', 'up'], 120_000);
    expect(run.code, run.stderr).to.equal(0);
    now = Date.now();
    expect((await ready(downstream)).status).to.equal(200);
    now += MAX_LAG * 1000;
    expect((await ready(downstream)).status, 'exactly at the maximum').to.equal(200);
    now += 5_000;
    expectLagging(await ready(downstream), new RegExp(`upstream up is ${MAX_LAG + 5} s behind it, more than PULL_MAX_LAG_SECONDS \\(${MAX_LAG}\\)`));
  });

  it('GET /admin/upstreams (admin token): each upstream\'s state, last success, lag as the metric reports it, records written; no credential', async () => {
    const r = await get(`${downstream.url.replace(/\/odata$/, '')}/admin/upstreams`);
    expect(r.status).to.equal(200);
    const [row] = r.json.value;
    const metrics = parsePrometheus((await get(`${downstream.url.replace(/\/odata$/, '')}/metrics`)).text);
    expect(row).to.include({ name: 'up', url: upstream.url, strategy: 'timestamp', state: 'active', lastError: null, puller: null });
    expect(row.lagSeconds).to.equal(sample(metrics, 'reso_pull_lag_seconds', { upstream: 'up', state: 'active' })).and.to.be.above(MAX_LAG);
    expect(row.recordsPulled).to.equal(sample(metrics, 'reso_pull_records_written', { upstream: 'up' })).and.to.be.above(0);
    expect(Math.abs(now - Date.parse(row.lastSuccess) - row.lagSeconds * 1000)).to.be.at.most(500);
    expect(row.sets).to.deep.equal([{ upstream: 'Property', local: 'Property' }]);
    expect(Object.keys(row)).not.to.include('auth');
  });

  it('a paused upstream is not required; resumed, it is again', async () => {
    expect((await runCli(downDb.url, ['pull', 'pause', 'up'])).code).to.equal(0);
    expect((await ready(downstream)).status).to.equal(200);
    expect((await runCli(downDb.url, ['pull', 'resume', 'up'])).code).to.equal(0);
    expectLagging(await ready(downstream), /behind it/);
  });

  it('the body names the upstream and its lag, never its URL or credentials', async () => {
    const r = await ready(downstream);
    expect(r.text).not.to.include(upstream.url.replace(/\/odata$/, ''));
    expect(r.text.toLowerCase()).not.to.match(/token|secret|bearer/);
  });
});
