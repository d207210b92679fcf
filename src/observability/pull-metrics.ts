/**
 * `reso-server pull`'s upstreams as gauges, read at each scrape from their rows (src/pull/upstreams.ts), whichever
 * process pulls them: records written, the lag behind each upstream, and upstream faults by kind. Labels are the
 * operator's own upstreams, so the series stay as few as they are. Every worker of a cluster reads the same figures
 * from the database: a cluster's scrape takes the largest rather than their sum.
 */
import { Gauge } from 'prom-client';
import type { UpstreamStatus } from '../pull/upstreams';
import type { ServiceMetrics } from './metrics';

export function observePulls(metrics: ServiceMetrics, statuses: () => Promise<UpstreamStatus[]>): void {
  const registers = [metrics.registry];
  // One read serves every gauge of a scrape.
  let reading: Promise<UpstreamStatus[]> | undefined;
  const read = () => (reading ??= statuses().catch(() => [] as UpstreamStatus[]).finally(() => { setImmediate(() => { reading = undefined; }); }));
  const gauge = (name: string, help: string, labelNames: readonly string[], values: (u: UpstreamStatus) => [Record<string, string>, number][]) => new Gauge({
    name, help, labelNames, registers, aggregator: 'max',
    async collect() {
      this.reset();
      for (const u of await read()) for (const [labels, value] of values(u)) this.set(labels, value);
    },
  });
  gauge('reso_pull_records_written', 'Records an upstream\'s pulls have written (created, changed or removed)', ['upstream'],
    (u) => [[{ upstream: u.name }, u.recordsPulled]]);
  gauge('reso_pull_lag_seconds', 'Seconds since a pull of the upstream last reached its end (absent before the first)', ['upstream', 'state'],
    (u) => (u.lagSeconds === null ? [] : [[{ upstream: u.name, state: u.state }, u.lagSeconds]]));
  gauge('reso_pull_upstream_errors', 'Upstream faults met by pulls, by kind (retried ones included)', ['upstream', 'kind'],
    (u) => Object.entries(u.faults).map(([kind, n]) => [{ upstream: u.name, kind }, n]));
}
