/**
 * What the container's sets must be, whatever their fields: names this server can store, each path claimed by one
 * set, navigation bindings that lead somewhere, one listing root at most.
 */
import type { BuiltEntitySet } from './built-entity-set';
import type { EntitySetDef, EntityTypeDef } from './dictionary-defs';
import { DictionaryError } from './dictionary-error';

/** Identifiers become SQL identifiers; only this shape is allowed anywhere near SQL. */
const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * Each NavigationPropertyBinding names a navigation of the set's type and binds it to a set of the container whose
 * type is the navigation's: a binding to a set that is not there would leave the navigation's records nowhere.
 */
export function checkBindings(setDef: EntitySetDef, typeDef: EntityTypeDef, setsByName: ReadonlyMap<string, EntitySetDef>): void {
  for (const b of setDef.bindings) {
    const where = `entity set ${setDef.name}: NavigationPropertyBinding Path="${b.path}" Target="${b.target}"`;
    const at = { kind: 'NavigationPropertyBinding', set: setDef.name, path: b.path } as const;
    const nav = typeDef.navigations.find((n) => n.name === b.path);
    if (!nav) throw new DictionaryError(`${where}: entity type ${typeDef.name} has no navigation property ${b.path}: correct the Path, or remove the binding`, at);
    const target = setsByName.get(b.target);
    if (!target) {
      throw new DictionaryError(`${where}: the container has no entity set ${b.target}: add that set, or bind ${b.path} to one of the container's sets`, at);
    }
    const type = nav.type.startsWith('Collection(') ? nav.type.slice('Collection('.length, -1) : nav.type;
    if (target.entityType !== type) throw new DictionaryError(`${where}: ${b.target} holds ${target.entityType}, but ${b.path} leads to ${type}`, at);
  }
}

export function checkSingleListingRoot(sets: readonly BuiltEntitySet[]): void {
  const roots = sets.filter((s) => s.listingRoot).map((s) => s.name);
  if (roots.length > 1) throw new DictionaryError(`only one entity set can be the ListingRoot (${roots.join(', ')})`);
}

export function checkPathsAreUnique(sets: readonly BuiltEntitySet[]): void {
  const seen = new Map<string, string>();
  for (const s of sets) {
    for (const p of [s.name, ...s.pathAliases]) {
      checkIdentifier(p, `path of ${s.name}`);
      const other = seen.get(p);
      if (other) throw new DictionaryError(`path ${p} is claimed by both ${other} and ${s.name}`);
      seen.set(p, s.name);
    }
  }
}

export function checkIdentifier(name: string, where: string): void {
  if (!IDENTIFIER.test(name)) throw new DictionaryError(`${where}: "${name}" is not a simple identifier this server can store`);
}
