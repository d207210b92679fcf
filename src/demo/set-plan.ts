/**
 * Which entity sets the demo writes and how their records hang together, from the model alone: the set the listing
 * story is told in (the model's listing root, else RESO's Property), the sets that hang off it through a followable
 * collection navigation (records per listing, pointing at it by the navigation's join), and every other set, written
 * on its own, its records pointing at records of other demo sets wherever a navigation's join says so.
 * Sets whose rows are the dictionary itself and the change log are the service's, never the demo's.
 */
import { EntitySetSpec, FieldCondition, listingRootOf, ServiceModel } from '../model/service-model';
import { EVENT_FIELDS } from './listing-timeline';
import { CHILD_ROLES, ChildRole, NOT_DEMO_SETS, STORY_SETS } from './standard-names';

/** A set hanging off the listings: `set.foreignKey` holds the listing's `referencedKey`, `discriminator` names the listings. */
export interface ChildLink {
  readonly set: EntitySetSpec;
  readonly foreignKey: string;
  readonly referencedKey: string;
  readonly discriminator?: FieldCondition;
}

/** A field of a set written on its own that holds a value of `parentField` of a record of `parent`. */
export interface ParentLink {
  readonly parent: string;
  readonly parentField: string;
  readonly field: string;
  /** A field of this set that names the parent's set, when the join has one. */
  readonly discriminator?: FieldCondition;
}

export interface StandaloneSet {
  readonly set: EntitySetSpec;
  readonly links: readonly ParentLink[];
}

export interface DemoSetPlan {
  /** The set the listing story is told in; absent, every set is written on its own. */
  readonly listings?: EntitySetSpec;
  /** The roster (with a listing story only: its size follows the listings). */
  readonly members?: EntitySetSpec;
  readonly offices?: EntitySetSpec;
  /** The sets of the story's child records, by their part in it. */
  readonly children: Readonly<Partial<Record<ChildRole, ChildLink>>>;
  /** Other sets hanging off the listings: a few records of each per listing. */
  readonly otherChildren: readonly ChildLink[];
  /** Every other demo set, a set before those pointing at it (where no cycle forbids). */
  readonly standalone: readonly StandaloneSet[];
}

/** The sets the demo may write: not the dictionary's own rows, not the change log. */
export function demoSets(model: Pick<ServiceModel, 'entitySets'>): EntitySetSpec[] {
  return model.entitySets.filter((s) => !s.dictionaryRows && !s.changeLog && !NOT_DEMO_SETS.has(s.name));
}

/**
 * The set whose emptiness says a database has no demo data yet: the listings, else the first set the demo writes.
 * (A start seeds only an empty database.)
 */
export function demoAnchor(model: Pick<ServiceModel, 'entitySets'>): EntitySetSpec | undefined {
  return storySetOf(model, demoSets(model)) ?? demoSets(model)[0];
}

function storySetOf(model: Pick<ServiceModel, 'entitySets'>, sets: readonly EntitySetSpec[]): EntitySetSpec | undefined {
  const declared = listingRootOf(model);
  const name = declared ? declared.name : STORY_SETS.listings;
  return sets.find((s) => s.name === name);
}

export function planDemoSets(model: Pick<ServiceModel, 'entitySets'>): DemoSetPlan {
  const sets = demoSets(model);
  const byName = new Map(sets.map((s) => [s.name, s]));
  const listings = storySetOf(model, sets);
  if (!listings) return { children: {}, otherChildren: [], standalone: orderByLinks(sets.map((s) => ({ set: s, links: linksOf(s, byName) }))) };

  const roster = (name: string) => (name === listings.name ? undefined : byName.get(name));
  const members = roster(STORY_SETS.members);
  const offices = roster(STORY_SETS.offices);
  const children: Partial<Record<ChildRole, ChildLink>> = {};
  const otherChildren: ChildLink[] = [];
  const placed = new Set([listings.name, members?.name, offices?.name]);
  for (const n of listings.navigations) {
    const set = byName.get(n.target);
    if (!set || placed.has(set.name) || !n.collection || !n.followable || !n.join) continue;
    if (!set.fieldsByName[n.join.foreignKey] || n.join.foreignKey === set.key) continue;
    placed.add(set.name);
    const d = n.join.discriminator;
    const link: ChildLink = {
      set, foreignKey: n.join.foreignKey, referencedKey: n.join.referencedKey,
      ...(d?.on === 'target' && set.fieldsByName[d.field] ? { discriminator: { field: d.field, value: d.value } } : {}),
    };
    const role = CHILD_ROLES.find((r) => STORY_SETS[r] === set.name);
    // History names the listing fields its events change: without them, the set is one the story does not tell.
    const told = role !== 'history' || EVENT_FIELDS.some((f) => listings.fieldsByName[f]);
    if (role && told) children[role] = link;
    else otherChildren.push(link);
  }
  const standalone = sets.filter((s) => !placed.has(s.name)).map((s) => ({ set: s, links: linksOf(s, byName) }));
  return { listings, members, offices, children, otherChildren, standalone: orderByLinks(standalone) };
}

/**
 * Where `set`'s records point at other demo sets' records: a collection navigation of a parent whose join names a
 * field of `set` (parent.referencedKey = set.foreignKey), and a single-valued navigation of `set` whose join names one
 * of its own fields (target.foreignKey = set.referencedKey). Never the key, which stays unique.
 */
function linksOf(set: EntitySetSpec, byName: ReadonlyMap<string, EntitySetSpec>): ParentLink[] {
  const links: ParentLink[] = [];
  const add = (parent: EntitySetSpec, parentField: string, field: string, discriminator?: FieldCondition) => {
    if (field === set.key || !set.fieldsByName[field] || !parent.fieldsByName[parentField]) return;
    if (discriminator && !set.fieldsByName[discriminator.field]) discriminator = undefined;
    if (links.some((l) => l.parent === parent.name && l.field === field)) return;
    links.push({ parent: parent.name, parentField, field, ...(discriminator ? { discriminator } : {}) });
  };
  for (const parent of byName.values()) {
    for (const n of parent.navigations) {
      if (n.target !== set.name || !n.collection || !n.join) continue;
      const d = n.join.discriminator;
      add(parent, n.join.referencedKey, n.join.foreignKey, d?.on === 'target' ? { field: d.field, value: d.value } : undefined);
    }
  }
  for (const n of set.navigations) {
    const parent = byName.get(n.target);
    if (!parent || n.collection || !n.join) continue;
    const d = n.join.discriminator;
    add(parent, n.join.foreignKey, n.join.referencedKey, d?.on === 'source' ? { field: d.field, value: d.value } : undefined);
  }
  return links;
}

/** Sets whose records others point at first (model order otherwise; a cycle is broken where it stands). */
function orderByLinks(sets: readonly StandaloneSet[]): StandaloneSet[] {
  const names = new Set(sets.map((s) => s.set.name));
  const done = new Set<string>();
  const ordered: StandaloneSet[] = [];
  while (ordered.length < sets.length) {
    const ready = sets.find((s) => !done.has(s.set.name)
      && s.links.every((l) => l.parent === s.set.name || !names.has(l.parent) || done.has(l.parent)))
      ?? sets.find((s) => !done.has(s.set.name))!;
    done.add(ready.set.name);
    ordered.push(ready);
  }
  return ordered;
}
