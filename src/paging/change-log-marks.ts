/**
 * Marks into the change log (`EntityEventSequence gt N`, RESO EntityEvent): a consumer continuing from event N
 * must be told when it cannot continue exactly. Two things can make it so: retention removed events after N
 * (EventSequenceExpired), or what the client may see changed after event N was committed (a scope epoch,
 * scope-epoch.ts): events of records that came into its view are then older than N (ScopeChanged). Either
 * way the consumer walks every resource again and continues from the latest sequence.
 */
import type { EntitySetSpec } from '../model/service-model';
import type { BoundOrder, BoundPredicate } from '../query/bound';
import { Errors } from '../errors/catalogue';
import { conjuncts } from './scope-epoch';

/** What marks are checked against (storage/change-log-retention.ts). */
export interface ChangeLogMarks {
  oldest(): Promise<number | undefined>;
  /** When the latest kept event at or below the sequence was committed. */
  committedBy(sequence: number): Promise<string | undefined>;
}

/** The sequence a query continues after: its `gt N` (`ge N`: N - 1), or a page position further on. */
export function markOf(set: EntitySetSpec, filter: BoundPredicate | undefined, orderBy: readonly BoundOrder[], last?: readonly unknown[]): number | undefined {
  let mark: number | undefined;
  for (const c of filter ? conjuncts(filter) : []) {
    if (c.kind !== 'compare' || (c.op !== 'gt' && c.op !== 'ge')) continue;
    if (c.left.kind !== 'field' || c.left.field.name !== set.key || c.right.kind !== 'value' || typeof c.right.value !== 'number') continue;
    const n = c.op === 'gt' ? c.right.value : c.right.value - 1;
    mark = mark === undefined ? n : Math.max(mark, n);
  }
  const position = orderBy[0]?.field.name === set.key && orderBy[0].direction === 'asc' ? Number(last?.[0]) : NaN;
  return Number.isFinite(position) && (mark === undefined || position > mark) ? position : mark;
}

/** Refuses a mark older than the log keeps. */
export async function refuseExpiredMark(set: EntitySetSpec, mark: number | undefined, marks: ChangeLogMarks): Promise<void> {
  if (mark === undefined) return;
  const oldest = await marks.oldest();
  if (oldest !== undefined && mark < oldest - 1) throw Errors.EventSequenceExpired(set.key, mark, oldest);
}

/** Refuses a `$filter` mark at an event committed before the client's scope epoch. */
export async function refuseEventMarkBefore(epoch: string | undefined, set: EntitySetSpec, mark: number | undefined, marks: ChangeLogMarks): Promise<void> {
  if (epoch === undefined || mark === undefined || mark < 1) return;
  const committed = await marks.committedBy(mark);
  if (committed !== undefined && committed < epoch) throw Errors.ScopeChanged('$filter', epoch, set.key, true);
}
