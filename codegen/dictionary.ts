/**
 * Reads a CSDL XML (EDMX 4.0) data dictionary into plain definitions.
 * This is the only place the dictionary's XML is understood; everything downstream works on these types.
 */
import { XMLParser } from 'fast-xml-parser';

export interface PropertyDef {
  name: string;
  /** As written: `Edm.String`, `Collection(Edm.String)`, ... */
  type: string;
  nullable: boolean;
  maxLength?: number;
  precision?: number;
  scale?: number;
  lookupName?: string;
  restricted: boolean;
}

export interface NavigationDef {
  name: string;
  type: string;
  partner?: string;
  /** Policy.ExpandOrder: fields (comma separated) that order an expansion by default. */
  expandOrder?: string;
  constraint?: { property: string; referencedProperty: string };
}

export interface EntityTypeDef {
  name: string;
  key: string;
  properties: PropertyDef[];
  navigations: NavigationDef[];
}

export interface EntitySetDef {
  name: string;
  entityType: string;
  bindings: { path: string; target: string }[];
  pathAliases: string[];
  /** Undefined when the dictionary states no FilterRestrictions for the set. */
  nonFilterable?: string[];
  nonSortable?: string[];
}

export interface EnumDef {
  name: string;
  members: { name: string; standardName: string }[];
}

export interface Dictionary {
  namespace: string;
  containerName: string;
  entityTypes: EntityTypeDef[];
  entitySets: EntitySetDef[];
  enums: EnumDef[];
  skipSupported: boolean;
}

const ARRAY_TAGS = new Set([
  'Reference', 'Include', 'Schema', 'EntityType', 'EnumType', 'Member', 'Property', 'NavigationProperty',
  'PropertyRef', 'ReferentialConstraint', 'Annotation', 'EntitySet', 'Singleton', 'NavigationPropertyBinding',
  'PropertyValue', 'PropertyPath', 'Term', 'ComplexType', 'Action', 'Function',
]);

type Node = Record<string, any>;

const LOOKUP_TERM = 'RESO.OData.Metadata.LookupName';
const STANDARD_NAME_TERM = 'RESO.OData.Metadata.StandardName';

export class DictionaryError extends Error {}

export function readDictionary(xml: string): Dictionary {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    removeNSPrefix: true,
    parseAttributeValue: false,
    parseTagValue: false,
    isArray: (tag) => ARRAY_TAGS.has(tag),
  });
  const doc = parser.parse(xml) as Node;
  const schemas: Node[] = doc?.Edmx?.DataServices?.Schema ?? [];
  if (schemas.length === 0) throw new DictionaryError('no <Schema> found under edmx:Edmx/edmx:DataServices');

  // Aliases let annotations name terms either by namespace or by alias.
  const aliases = new Map<string, string>();
  for (const ref of (doc.Edmx.Reference ?? []) as Node[]) {
    for (const inc of (ref.Include ?? []) as Node[]) if (inc['@Alias']) aliases.set(inc['@Alias'], inc['@Namespace']);
  }
  for (const s of schemas) if (s['@Alias']) aliases.set(s['@Alias'], s['@Namespace']);
  const term = (name: string): string => {
    const dot = name.lastIndexOf('.');
    const qualifier = name.slice(0, dot);
    return `${aliases.get(qualifier) ?? qualifier}.${name.slice(dot + 1)}`;
  };
  const isTerm = (a: Node, qualified: string) => term(a['@Term']) === qualified;
  const annotation = (n: Node, qualified: string): Node | undefined =>
    ((n.Annotation ?? []) as Node[]).find((a) => isTerm(a, qualified));

  const entitySchema = schemas.find((s) => (s.EntityType ?? []).length > 0);
  if (!entitySchema) throw new DictionaryError('no schema declares entity types');
  const namespace: string = entitySchema['@Namespace'];

  const entityTypes: EntityTypeDef[] = (entitySchema.EntityType as Node[]).map((et) => {
    const keys = ((et.Key?.PropertyRef ?? []) as Node[]).map((r) => r['@Name'] as string);
    if (keys.length !== 1) throw new DictionaryError(`entity type ${et['@Name']}: exactly one key property is supported, found ${keys.length}`);
    return {
      name: et['@Name'],
      key: keys[0],
      properties: ((et.Property ?? []) as Node[]).map((p) => ({
        name: p['@Name'],
        type: p['@Type'],
        nullable: p['@Nullable'] !== 'false',
        maxLength: optionalInt(p['@MaxLength']),
        precision: optionalInt(p['@Precision']),
        scale: optionalInt(p['@Scale']),
        lookupName: annotation(p, LOOKUP_TERM)?.['@String'],
        restricted: isTagSet(annotation(p, 'ResoServer.Policy.Restricted')),
      })),
      navigations: ((et.NavigationProperty ?? []) as Node[]).map((n) => {
        const rc = (n.ReferentialConstraint ?? [])[0] as Node | undefined;
        return {
          name: n['@Name'],
          type: n['@Type'],
          partner: n['@Partner'],
          expandOrder: annotation(n, 'ResoServer.Policy.ExpandOrder')?.['@String'],
          constraint: rc ? { property: rc['@Property'], referencedProperty: rc['@ReferencedProperty'] } : undefined,
        };
      }),
    };
  });

  const container: Node | undefined = schemas.map((s) => s.EntityContainer).find(Boolean);
  if (!container) throw new DictionaryError('no <EntityContainer> found');
  const entitySets: EntitySetDef[] = ((container.EntitySet ?? []) as Node[]).map((es) => ({
    name: es['@Name'],
    entityType: es['@EntityType'],
    bindings: ((es.NavigationPropertyBinding ?? []) as Node[]).map((b) => ({ path: b['@Path'], target: b['@Target'] })),
    pathAliases: ((es.Annotation ?? []) as Node[]).filter((a) => isTerm(a, 'ResoServer.Policy.PathAlias')).map((a) => a['@String']),
    nonFilterable: propertyPaths(annotation(es, 'Org.OData.Capabilities.V1.FilterRestrictions'), 'NonFilterableProperties'),
    nonSortable: propertyPaths(annotation(es, 'Org.OData.Capabilities.V1.SortRestrictions'), 'NonSortableProperties'),
  }));
  const skip = annotation(container, 'Org.OData.Capabilities.V1.SkipSupported');

  const enums: EnumDef[] = schemas.flatMap((s) => (s.EnumType ?? []) as Node[]).map((e) => ({
    name: e['@Name'],
    members: ((e.Member ?? []) as Node[]).map((m) => ({
      name: m['@Name'],
      standardName: annotation(m, STANDARD_NAME_TERM)?.['@String'] ?? m['@Name'],
    })),
  }));

  return {
    namespace,
    containerName: container['@Name'],
    entityTypes,
    entitySets,
    enums,
    skipSupported: skip ? skip['@Bool'] !== 'false' : true,
  };
}

function optionalInt(v: string | undefined): number | undefined {
  if (v === undefined || v === 'max' || v === 'variable' || v === 'floating') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new DictionaryError(`expected an integer facet, got "${v}"`);
  return n;
}

/** A Core.Tag annotation is on unless it says Bool="false". */
function isTagSet(a: Node | undefined): boolean {
  return a !== undefined && a['@Bool'] !== 'false';
}

function propertyPaths(a: Node | undefined, property: string): string[] | undefined {
  if (!a) return undefined;
  const pv = ((a.Record?.PropertyValue ?? []) as Node[]).find((p) => p['@Property'] === property);
  if (!pv) return [];
  const paths = (pv.Collection?.PropertyPath ?? []) as (string | Node)[];
  return paths.map((p) => (typeof p === 'string' ? p : p['#text']).trim());
}
