/**
 * Webhook push put together over a service: the subscriptions (for the operator's commands and the admin
 * endpoint) and the delivery worker (for `serve`), both reading each client's events through one feed that
 * applies the licences as the HTTP layer does (the same feed scope, the same bound visibility).
 */
import { Licences } from '../auth/licence';
import type { ClientRegistry } from '../auth/clients';
import type { Clock } from '../foundation/clock';
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import type { RecordStores } from '../storage/records/record-stores';
import type { SubscriptionStore } from '../storage/tables/webhook-table';
import { DeliveryOptions, DeliveryWorker } from './delivery-worker';
import { ClientEventFeed, MarkGuards } from './event-feed';
import { Subscriptions } from './subscriptions';

export interface WebhookParts {
  readonly model: ServiceModel;
  readonly stores: RecordStores;
  readonly clients: Pick<ClientRegistry, 'get'>;
  readonly webhooks: SubscriptionStore;
  readonly clock: Clock;
}

/** The entity set holding the change log (RCP-027's EntityEvent), as the dictionary declares it. */
export function eventSetOf(model: ServiceModel): EntitySetSpec | undefined {
  return model.entitySets.find((s) => s.changeLog);
}

/** The feed of each client's visible events (with `guards`, refused where its own query would be); undefined without an event set. */
export function eventFeed(parts: WebhookParts, feedScope: string | undefined, guards?: MarkGuards): ClientEventFeed | undefined {
  const set = eventSetOf(parts.model);
  return set && new ClientEventFeed(parts.model, set, parts.stores, new Licences(parts.model, feedScope), guards);
}

export function subscriptions(parts: WebhookParts, feedScope: string | undefined): Subscriptions {
  return new Subscriptions(parts.webhooks, parts.clients, parts.clock, eventFeed(parts, feedScope));
}

/** The worker `serve` starts; undefined when the dictionary has no event set (there is nothing to push). */
export function deliveryWorker(
  parts: WebhookParts, feedScope: string | undefined, guards: MarkGuards | undefined, options: DeliveryOptions,
): DeliveryWorker | undefined {
  const feed = eventFeed(parts, feedScope, guards);
  return feed && new DeliveryWorker({ store: parts.webhooks, clients: parts.clients, feed, clock: parts.clock }, options);
}
