/**
 * Request plans (query/request-plan.ts) with their statements attached (storage/prepared-reads.ts), kept by shape
 * in a bounded cache: the second request of a shape (every key fetch after the first of its set and licence, every
 * first page of a walk) finds its plan ready and only binds its values. A plan whose filter names `now()` is made
 * for its request alone.
 */
import { LRUCache } from 'lru-cache';
import type { Licence } from '../../auth/licence';
import { without } from '../../foundation/bench-without';
import type { EntitySetSpec } from '../../model/service-model';
import type { BoundPredicate } from '../../query/bound';
import { allOf } from '../../query/predicates';
import { ExpansionPlan, PlanContext, PlanFormat, PlanKind, planKey, planRequest, RequestPlan } from '../../query/request-plan';
import type { PreparedRead, PreparedRelated } from '../../storage/records/record-store';
import type { RecordStores } from '../../storage/records/record-stores';
import type { RequestContext } from '../request-context';

/** The format a service's own read is planned in: values as JSON has them, no annotations. */
const PLAIN_FORMAT: PlanFormat = { metadata: 'minimal', ieee754: false, omitNulls: false, version: '4.01' };

/** Plans kept (each also holds its prepared statements' texts; the least recently used goes first). */
const PLANS_KEPT = 2048;

export interface Expansion {
  readonly plan: ExpansionPlan;
  readonly read: PreparedRelated;
}

/** A plan ready to run: its read and its expansions' reads prepared. */
export interface ExecutablePlan {
  readonly set: EntitySetSpec;
  readonly plan: RequestPlan;
  readonly read: PreparedRead;
  readonly expansions: readonly Expansion[];
  /** What it is kept at (its shape and the client's licence); none for a plan made for one request (`now()`). */
  readonly key?: string;
}

export class RequestPlans {
  private readonly plans = new LRUCache<string, ExecutablePlan>({ max: PLANS_KEPT });
  /** Licences by identity, numbered for the plans' keys (a licence is bound once per client: auth/licence.ts). */
  private readonly licenceIds = new WeakMap<Licence, number>();
  private licences = 0;

  constructor(private readonly stores: RecordStores, private readonly context: PlanContext) {}

  /** The plan of a request for `set` (`defaultOrder`: a navigation path's). */
  of(ctx: RequestContext, set: EntitySetSpec, kind: PlanKind, defaultOrder?: readonly string[]): ExecutablePlan {
    const request = { set, kind, format: ctx.format, options: ctx.query, defaultOrder };
    const licence = ctx.licence;
    const key = planKey(request, this.idOf(licence));
    const known = this.plans.get(key);
    if (known) return known;
    const plan = planRequest({ ...request, licence }, this.context);
    const made = { ...this.prepare(set, plan), ...(plan.volatile ? {} : { key }) };
    if (made.key !== undefined && !without('plan-cache')) this.plans.set(key, made);
    return made;
  }

  /**
   * The read of a query the service makes for a request (a digest's key range), in the plain format: planned for
   * this request alone, as its literals differ from every other's.
   */
  unkept(ctx: RequestContext, set: EntitySetSpec, options: Readonly<Record<string, string>>): PreparedRead {
    const plan = planRequest({ set, kind: 'collection', format: PLAIN_FORMAT, options, licence: ctx.licence }, this.context);
    return this.stores.store(set).prepare(plan.read);
  }

  /** A navigation path's read: the plan's, within the parent's related records (prepared for this request alone). */
  within(p: ExecutablePlan, parent: BoundPredicate): PreparedRead {
    const read = p.plan.read;
    return this.stores.store(p.set).prepare({ ...read, where: allOf(parent, read.where) });
  }

  private prepare(set: EntitySetSpec, plan: RequestPlan): ExecutablePlan {
    return {
      set,
      plan,
      read: this.stores.store(set).prepare(plan.read),
      // A volatile plan's statements (now() bound to this request) are never read again: their runs are not kept.
      expansions: plan.expansions.map((e) => ({ plan: e, read: this.stores.store(e.set).prepareRelated(e, !plan.volatile) })),
    };
  }

  private idOf(licence: Licence): number {
    let id = this.licenceIds.get(licence);
    if (id === undefined) this.licenceIds.set(licence, (id = ++this.licences));
    return id;
  }
}
