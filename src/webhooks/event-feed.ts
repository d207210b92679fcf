/**
 * A client's EntityEvents as its own query would return them: `$filter=<sequence> gt N&$orderby=<sequence>`
 * parsed and bound against the event set with the client's licence (hidden fields, and the visibility its
 * scope and the feed scope give each event), then read through the record store. Pushed events are the
 * pulled ones: a webhook can never show what `GET EntityEvent?$filter=… gt N` would not.
 */
import type { Client } from '../auth/clients';
import type { LicenceSource } from '../auth/licence';
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import { ChangeLogMarks, refuseEventMarkBefore, refuseExpiredMark } from '../paging/change-log-marks';
import type { ScopeEpochs } from '../paging/scope-epoch';
import { bindQuery } from '../query/bind-query';
import { parseQueryOptions } from '../query/parse-options';
import { allOf } from '../query/predicates';
import { projection } from '../query/projection';
import type { RecordStores } from '../storage/records/record-stores';

/** A batch of a client's events: their JSON texts in sequence order, and the last one's sequence. */
export interface EventBatch {
  readonly records: readonly string[];
  readonly last?: number;
}

/** How far a subscription is behind its client's feed: the client's visible events after the cursor. */
export interface EventLag {
  readonly events: number;
}

/**
 * What a client's own query is refused by when it cannot continue exactly from its mark: retention passed it
 * (EventSequenceExpired), or the client's view changed after it (ScopeChanged).
 */
export interface MarkGuards {
  readonly marks: ChangeLogMarks;
  readonly epochs: ScopeEpochs;
}

export class ClientEventFeed {
  private readonly sets: ReadonlyMap<string, EntitySetSpec>;

  constructor(
    model: ServiceModel, private readonly set: EntitySetSpec, private readonly stores: RecordStores, private readonly licences: LicenceSource,
    private readonly guards?: MarkGuards,
  ) {
    this.sets = new Map(model.entitySets.map((s) => [s.name, s]));
  }

  /** The feed's name in messages. */
  get name(): string {
    return this.set.name;
  }

  /**
   * Up to `limit` of the client's events after sequence `cursor`, in sequence order; refused as the client's own
   * query would be (EventSequenceExpired, ScopeChanged) when they cannot continue exactly from the cursor.
   */
  async after(client: Client, cursor: number, limit: number): Promise<EventBatch> {
    if (this.guards) {
      await refuseExpiredMark(this.set, cursor, this.guards.marks);
      await refuseEventMarkBefore(await this.guards.epochs.of(client), this.set, cursor, this.guards.marks);
    }
    const { where, orderBy, shown } = this.bound(client, cursor);
    const page = await this.stores.store(this.set).query({ where, orderBy, limit, projection: shown });
    const last = page.sortValues.length ? Number(page.sortValues[page.sortValues.length - 1][0]) : undefined;
    return { records: page.records, last };
  }

  /** How many of the client's events follow `cursor`. */
  async lag(client: Client, cursor: number): Promise<EventLag> {
    return { events: await this.stores.store(this.set).count(this.bound(client, cursor).where) };
  }

  private bound(client: Client, cursor: number) {
    const licence = this.licences.of(client);
    const sequence = this.set.key;
    const tree = parseQueryOptions({ $filter: `${sequence} gt ${Math.trunc(cursor)}`, $orderby: sequence });
    const q = bindQuery(this.set, tree, { sets: this.sets, hidden: (s) => licence.hiddenIn(s) });
    return { where: allOf(licence.visibility.of(this.set), q.filter), orderBy: q.orderBy, shown: projection(this.set, q.select, licence.hiddenIn(this.set)) };
  }
}
