/**
 * What a client learns from a service's CSDL JSON metadata document, and nothing else: its entity sets, each with
 * its type's key (name and type), properties, and navigations (the set each leads to), which of them the service
 * says it cannot expand (Capabilities.ExpandRestrictions) and which fields it says cannot be filtered. For tests
 * that check a service generated from any dictionary without knowing the dictionary.
 */
import { XMLParser } from 'fast-xml-parser';

export interface ServedNavigation {
  readonly name: string;
  readonly collection: boolean;
  /** The entity set its records are in (its binding, or the one set of its type). */
  readonly target: string | undefined;
}

export interface ServedSet {
  readonly name: string;
  readonly key: string;
  readonly keyType: string;
  /** Structural properties by name, with their type (`Collection(…)` for collections). */
  readonly properties: ReadonlyMap<string, string>;
  readonly navigations: readonly ServedNavigation[];
  /** Navigations the metadata says the service cannot expand, and those it cannot follow as a path. */
  readonly nonExpandable: readonly string[];
  readonly nonNavigable: readonly string[];
  readonly nonFilterable: ReadonlySet<string>;
}

type Json = Record<string, any>;

const typeOf = (member: Json): string => {
  const type = member.$Type ?? 'Edm.String';
  return member.$Collection ? `Collection(${type})` : type;
};

/** The sets a CSDL JSON document declares, in its container's order. */
export function servedSets(csdl: Json): ServedSet[] {
  const qualified = String(csdl.$EntityContainer);
  const at = qualified.lastIndexOf('.');
  const container: Json = csdl[qualified.slice(0, at)][qualified.slice(at + 1)];
  const types = new Map<string, Json>();
  for (const [namespace, schema] of Object.entries(csdl)) {
    if (namespace.startsWith('$') || typeof schema !== 'object') continue;
    for (const [name, element] of Object.entries(schema as Json)) if (element?.$Kind === 'EntityType') types.set(`${namespace}.${name}`, element);
  }
  const setEntries = Object.entries(container).filter(([name, s]) => !name.startsWith('@') && !name.startsWith('$') && s?.$Collection === true);
  const setsOfType = (type: string) => setEntries.filter(([, s]) => s.$Type === type).map(([n]) => n);
  return setEntries.map(([name, set]) => {
    const type = types.get(set.$Type);
    if (!type) throw new Error(`set ${name}: no entity type ${set.$Type} in the metadata`);
    const members = Object.entries(type).filter(([n]) => !n.startsWith('$') && !n.startsWith('@'));
    const properties = new Map(members.filter(([, m]) => m.$Kind !== 'NavigationProperty').map(([n, m]) => [n, typeOf(m)]));
    const navigations = members.filter(([, m]) => m.$Kind === 'NavigationProperty').map(([n, m]) => {
      const bound: string | undefined = set.$NavigationPropertyBinding?.[n];
      const candidates = setsOfType(m.$Type);
      return { name: n, collection: m.$Collection === true, target: bound ?? (candidates.length === 1 ? candidates[0] : undefined) };
    });
    const key: string = type.$Key[0];
    return {
      name,
      key,
      keyType: properties.get(key)!,
      properties,
      navigations,
      nonExpandable: set['@Capabilities.ExpandRestrictions']?.NonExpandableProperties ?? [],
      nonNavigable: (set['@Capabilities.NavigationRestrictions']?.RestrictedProperties ?? [])
        .filter((r: Json) => r.Navigability === 'None').map((r: Json) => r.NavigationProperty as string),
      nonFilterable: new Set<string>(set['@Capabilities.FilterRestrictions']?.NonFilterableProperties ?? []),
    };
  });
}

const INTEGERS = new Set(['Edm.Int16', 'Edm.Int32', 'Edm.Int64', 'Edm.Byte', 'Edm.SByte']);

/** The key's literal in a URL's key segment: `'L''1'` for a string, `5` for an integer. */
export function keyLiteral(set: ServedSet, value: unknown): string {
  if (INTEGERS.has(set.keyType)) return String(value);
  return encodeURIComponent(`'${String(value).replace(/'/g, "''")}'`);
}

/** The entity sets a CSDL XML document's containers declare (a dictionary, or a service's $metadata), by name. */
export function declaredSets(xml: string): string[] {
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', removeNSPrefix: true, isArray: (name) => ['Schema', 'EntitySet', 'EntityContainer'].includes(name) }).parse(xml);
  return (parsed.Edmx.DataServices.Schema as Json[]).flatMap((s) => (s.EntityContainer ?? []).flatMap((c: Json) => (c.EntitySet ?? []).map((e: Json) => e.Name as string)));
}
