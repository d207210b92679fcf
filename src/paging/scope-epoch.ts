/**
 * Scope epochs. What a client may see changes without any record changing when an operator changes the
 * client's scope (`clients scope`) or the feed scope (FEED_SCOPE, at a restart). Records that enter the
 * client's view then keep their old timestamps, so a replication mark or a page position from before the
 * change would silently miss them. Each such change is stamped from the one modification clock (its epoch);
 * a `ModificationTimestamp gt|ge '<T>'` mark with T before the client's epoch, and a $skiptoken issued
 * before it, are answered with ScopeChanged, which tells the client to walk the set again.
 */
import type { Client } from '../auth/clients';
import type { EntitySetSpec } from '../model/service-model';
import type { BoundPredicate } from '../query/bound';
import { Errors } from '../errors/catalogue';

/** The epoch of a request's client: the later of the feed scope's and the client's own. */
export class ScopeEpochs {
  private feed?: Promise<string | undefined>;

  /** `recordFeedScope` stores the feed scope this process serves and answers its epoch (storage/settings.ts). */
  constructor(private readonly recordFeedScope: () => Promise<string | undefined>) {}

  async of(client: Client | undefined): Promise<string | undefined> {
    this.feed ??= this.recordFeedScope().catch((e) => {
      this.feed = undefined;
      throw e;
    });
    const feed = await this.feed;
    const own = client?.scopeEpoch;
    return own === undefined || (feed !== undefined && feed > own) ? feed : own;
  }
}

/** Refuses a filter whose replication mark (a top-level `<change timestamp> gt|ge '<T>'`) is before the epoch. */
export function refuseMarkBefore(epoch: string | undefined, set: EntitySetSpec, filter: BoundPredicate | undefined): void {
  if (epoch === undefined || filter === undefined || set.changeTimestamp === undefined) return;
  for (const c of conjuncts(filter)) {
    if (c.kind !== 'compare' || (c.op !== 'gt' && c.op !== 'ge')) continue;
    if (c.left.kind !== 'field' || c.left.field.name !== set.changeTimestamp || c.right.kind !== 'value') continue;
    if (typeof c.right.value === 'string' && c.right.value < epoch) throw Errors.ScopeChanged('$filter', epoch, set.changeTimestamp, false);
  }
}

/** Refuses a page position taken under an earlier epoch. */
export function refusePositionBefore(epoch: string | undefined, set: EntitySetSpec, positionEpoch: string | undefined): void {
  if (epoch !== undefined && positionEpoch !== epoch) throw Errors.ScopeChanged('$skiptoken', epoch, set.changeTimestamp ?? set.key, !!set.changeLog);
}

export function conjuncts(p: BoundPredicate): BoundPredicate[] {
  return p.kind === 'logical' && p.op === 'and' ? p.operands.flatMap(conjuncts) : [p];
}
