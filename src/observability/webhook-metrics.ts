/**
 * The webhook deliveries' lag as gauges, read at each scrape from the subscriptions (src/webhooks/): per
 * subscription, the client's visible events not yet delivered and how long the oldest has waited. Labels are
 * the operator's own subscriptions and clients, so the series stay as few as they are. Every worker of a cluster
 * reads the same figures from the database: a cluster's scrape takes the largest rather than their sum.
 */
import { Gauge } from 'prom-client';
import type { SubscriptionLag } from '../webhooks/subscriptions';
import type { ServiceMetrics } from './metrics';

export function observeWebhooks(metrics: ServiceMetrics, lags: () => Promise<SubscriptionLag[]>): void {
  const registers = [metrics.registry];
  const labelNames = ['subscription', 'client', 'state'] as const;
  // One read serves both gauges of a scrape.
  let reading: Promise<SubscriptionLag[]> | undefined;
  const read = () => (reading ??= lags().catch(() => [] as SubscriptionLag[]).finally(() => { setImmediate(() => { reading = undefined; }); }));
  new Gauge({
    name: 'reso_webhook_pending_events', help: 'Events visible to a subscription\'s client and not yet delivered', labelNames, registers,
    aggregator: 'max',
    async collect() {
      this.reset();
      for (const l of await read()) if (l.events !== undefined) this.set({ subscription: l.id, client: l.client, state: l.state }, l.events);
    },
  });
  new Gauge({
    name: 'reso_webhook_oldest_waiting_seconds', help: 'How long the oldest undelivered event of a subscription has waited', labelNames, registers,
    aggregator: 'max',
    async collect() {
      this.reset();
      for (const l of await read()) {
        this.set({ subscription: l.id, client: l.client, state: l.state }, (l.oldestWaitingMs ?? 0) / 1000);
      }
    },
  });
}
