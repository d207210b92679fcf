/**
 * A seeding's parts, made once from the model: the plan of its sets (set-plan.ts), a record maker per demo set, the
 * listing story's makers and the listing fields its children are joined on, and which fields of which sets other sets
 * point at (their makers keep samples of those values).
 */
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import type { ListingStory } from './listing-story';
import { LookupRows } from './lookup-rows';
import { LookupValues } from './lookup-values';
import { RecordBuilder } from './record-builder';
import { RecordMaker } from './record-maker';
import { ChildLink, DemoSetPlan, planDemoSets } from './set-plan';
import { CHILD_ROLES, ChildRole } from './standard-names';

export interface DemoSetup {
  readonly plan: DemoSetPlan;
  /** Absent when the model has no set to tell the listing story in. */
  readonly story?: ListingStory;
  readonly otherChildren: readonly RecordMaker[];
  readonly offices?: RecordMaker;
  readonly members?: RecordMaker;
  /** Makers of the sets written on their own, in the plan's order. */
  readonly standalone: readonly RecordMaker[];
  /** Every demo set's maker, by set name. */
  readonly makers: ReadonlyMap<string, RecordMaker>;
  /** RESO's Lookup resource, where its rows are data: a row per lookup value the records hold. */
  readonly lookupRows?: LookupRows;
}

export function setUpDemo(model: Pick<ServiceModel, 'entitySets' | 'lookups' | 'tables'>): DemoSetup {
  const plan = planDemoSets(model);
  const lookups = new LookupValues(model.lookups);
  const tables = new Map(model.tables.map((t) => [t.name, t]));
  const makers = new Map<string, RecordMaker>();
  const builder = (set: EntitySetSpec) => new RecordBuilder(set, lookups, tables.get(set.table));
  const maker = (link: Pick<ChildLink, 'set'> & Partial<ChildLink>): RecordMaker => {
    const made = new RecordMaker(builder(link.set), link.foreignKey ? link as ChildLink : undefined);
    makers.set(link.set.name, made);
    return made;
  };

  let story: ListingStory | undefined;
  if (plan.listings) {
    const listings = maker({ set: plan.listings });
    const children: Partial<Record<ChildRole, RecordMaker>> = {};
    for (const role of CHILD_ROLES) {
      const link = plan.children[role];
      if (link) children[role] = maker(link);
    }
    const joined = [...Object.values(plan.children), ...plan.otherChildren].map((l) => l.referencedKey);
    story = { listings, children, identityFields: [...new Set([plan.listings.key, ...joined])] };
  }
  const setup: DemoSetup = {
    plan,
    story,
    otherChildren: plan.otherChildren.map(maker),
    offices: plan.offices && maker({ set: plan.offices }),
    members: plan.members && maker({ set: plan.members }),
    standalone: plan.standalone.map((s) => maker({ set: s.set })),
    makers,
    lookupRows: LookupRows.of(model, builder),
  };
  for (const s of plan.standalone) for (const l of s.links) makers.get(l.parent)?.watch(l.parentField);
  return setup;
}
