/**
 * Which change-log events (RESO EntityEvent) a licence shows. An event names a record; the client sees it when
 * it may see that record now, or when it could see the record just before the change the event records (the
 * event's prior image, storage/change-log.ts: its listing's scope columns and its own named-field columns,
 * stored under the same column names, so the licence's own conditions apply to it unchanged). So a record
 * that leaves a client's view (its listing leaves the scope, it is removed) still shows that client an event,
 * whose fetch then answers 404 and tells the consumer to drop it; a record the client never could see never
 * shows it an event, nor its key. A licence without conditions sees every event, at no cost.
 */
import type { EntitySetSpec, FieldSpec, ServiceModel } from '../model/service-model';
import type { BoundChoice, BoundPredicate } from './bound';
import { allOf, fieldEquals, fieldOf } from './predicates';

export interface LicenceConditions {
  /** The condition on each set's records (scope through the listing, named fields), if any. */
  readonly of: (set: EntitySetSpec) => BoundPredicate | undefined;
  /** The listing scope alone, on the listing root's columns. */
  readonly scope?: BoundPredicate;
  /** The named-field condition on a set's own columns. */
  readonly named: (set: EntitySetSpec) => BoundPredicate | undefined;
}

/** The condition on the change log's records for a licence; undefined when every event is visible. */
export function changeLogCondition(model: ServiceModel, log: EntitySetSpec, licence: LicenceConditions): BoundPredicate | undefined {
  const spec = log.changeLog!;
  const resource = log.fieldsByName[spec.resourceName];
  const sequence = fieldOf(log.fieldsByName[log.key]);
  // The prior images' table: the same column names as the records' (and their listings'), keyed by sequence.
  const priorImages = { ...log, table: spec.priorImage.table } as EntitySetSpec;
  const flag: FieldSpec = { name: spec.priorImage.existed, type: 'Edm.Boolean', collection: false, nullable: false, column: spec.priorImage.existed, filterable: false, sortable: false, restricted: false };
  const existed: BoundPredicate = { kind: 'truth', operand: fieldOf(flag) };
  const cases: BoundChoice['cases'][number][] = [];
  const open: BoundPredicate[] = [];
  for (const logged of spec.sets) {
    const set = model.entitySets.find((s) => s.name === logged.name)!;
    const now = licence.of(set);
    if (!now) {
      open.push(fieldEquals(resource, set.name));
      continue;
    }
    const visibleNow: BoundPredicate = { kind: 'inQuery', left: fieldOf(log.fieldsByName[spec.recordKey]), set, column: fieldOf(set.fieldsByName[set.key]), where: now };
    const before = allOf(existed, allOf(listingPart(model, set, logged.listing !== undefined, licence.scope), licence.named(set)))!;
    const visibleBefore: BoundPredicate = { kind: 'inQuery', left: sequence, set: priorImages, column: sequence, where: before };
    cases.push({ value: { kind: 'value', type: 'string', value: set.name }, then: { kind: 'logical', op: 'or', operands: [visibleNow, visibleBefore] } });
  }
  if (!cases.length) return undefined;
  // One case per conditioned set, not an `or` of `ResourceName eq …` terms, which the planners answer by reading
  // every later event of each set through the (ResourceName, sequence) index and sorting them, on every page.
  const otherwise: BoundPredicate = open.length ? { kind: 'logical', op: 'or', operands: open } : { kind: 'constant', value: false };
  return { kind: 'choice', on: fieldOf(resource), cases, otherwise };
}

/**
 * On a prior image: its listing was in the scope. The listing root's own record needs it; a related record
 * needs it only when it belonged to a listing then (a null listing key: it had none, and no scope hid it).
 */
function listingPart(model: ServiceModel, set: EntitySetSpec, listed: boolean, scope: BoundPredicate | undefined): BoundPredicate | undefined {
  if (!scope || !listed) return undefined;
  if (set.listingRoot) return scope;
  const root = model.entitySets.find((s) => s.listingRoot)!;
  const listing: BoundPredicate = { kind: 'isNull', operand: fieldOf(root.fieldsByName[root.key]), negated: true };
  return { kind: 'not', operand: allOf(listing, { kind: 'not', operand: scope })! };
}
