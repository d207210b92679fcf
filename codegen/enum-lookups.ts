/**
 * RESO publishes DD 2.0 in two lookup flavours: string lookups (Edm.String fields naming their lookup with
 * RESO.OData.Metadata.LookupName, values in the Lookup resource) and EnumType lookups (fields typed with an
 * EnumType, values as its members). This server serves the first; a dictionary in the second is read as the
 * first, so both generate and serve alike: a field of an enum type becomes an Edm.String field whose lookup
 * is that enum (a collection of them, or a flags enum, a Collection(Edm.String)), and the enum's members, by
 * their RESO standard names, become the lookup's values.
 */
import type { EntityTypeDef } from './dictionary-defs';

export interface EnumTypeRef {
  /** The lookup name: the enum type's own name. */
  readonly name: string;
  /** Flags enums hold several members at once: a multi-valued lookup. */
  readonly flags: boolean;
}

/**
 * The entity types with every enum-typed property rewritten as a string lookup; other properties unchanged.
 * A type named in a namespace of enum types but not declared there is an open lookup (RESO's CountyOrParish,
 * whose values each MLS sets): a lookup with no standard values.
 */
export function enumsAsLookups(types: EntityTypeDef[], enumsByQualifiedName: ReadonlyMap<string, EnumTypeRef>): EntityTypeDef[] {
  if (enumsByQualifiedName.size === 0) return types;
  const namespaces = new Set([...enumsByQualifiedName.keys()].map((q) => q.slice(0, q.lastIndexOf('.'))));
  const refOf = (type: string): EnumTypeRef | undefined => {
    const declared = enumsByQualifiedName.get(type);
    if (declared) return declared;
    const dot = type.lastIndexOf('.');
    return dot > 0 && namespaces.has(type.slice(0, dot)) ? { name: type.slice(dot + 1), flags: false } : undefined;
  };
  return types.map((t) => ({
    ...t,
    properties: t.properties.map((p) => {
      const collection = p.type.startsWith('Collection(');
      const element = collection ? p.type.slice('Collection('.length, -1) : p.type;
      const ref = refOf(element);
      if (!ref) return p;
      return { ...p, type: collection || ref.flags ? 'Collection(Edm.String)' : 'Edm.String', lookupName: p.lookupName ?? ref.name, enumType: element };
    }),
  }));
}
