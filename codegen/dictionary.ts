/**
 * Reads a CSDL XML (EDMX 4.0) data dictionary into plain definitions.
 * This is the only place the dictionary's XML is understood; everything downstream works on these types.
 */
import { XMLParser } from 'fast-xml-parser';
import { DictionaryError, entityTypeRef, propertyRef } from './dictionary-error';
import { checkDictionaryText } from './dictionary-text';
import type { Dictionary, EntitySetDef, EntityTypeDef, EnumDef } from './dictionary-defs';
import { EnumTypeRef, enumsAsLookups } from './enum-lookups';

export { DictionaryError } from './dictionary-error';

const ARRAY_TAGS = new Set([
  'Reference', 'Include', 'Schema', 'EntityType', 'EnumType', 'Member', 'Property', 'NavigationProperty',
  'PropertyRef', 'ReferentialConstraint', 'Annotation', 'EntitySet', 'Singleton', 'NavigationPropertyBinding',
  'PropertyValue', 'PropertyPath', 'Term', 'ComplexType', 'Action', 'Function',
]);

type Node = Record<string, any>;

const LOOKUP_TERM = 'RESO.OData.Metadata.LookupName';
const STANDARD_NAME_TERM = 'RESO.OData.Metadata.StandardName';

/** Finds annotations by qualified term, whether the dictionary names the term by namespace or by alias. */
class Annotations {
  constructor(private readonly aliases: ReadonlyMap<string, string>) {}

  private term(name: string): string {
    const dot = name.lastIndexOf('.');
    const qualifier = name.slice(0, dot);
    return `${this.aliases.get(qualifier) ?? qualifier}.${name.slice(dot + 1)}`;
  }

  all(n: Node, qualified: string): Node[] {
    return ((n.Annotation ?? []) as Node[]).filter((a) => this.term(a['@Term']) === qualified);
  }

  one(n: Node, qualified: string): Node | undefined {
    return this.all(n, qualified)[0];
  }

  string(n: Node, qualified: string): string | undefined {
    return this.one(n, qualified)?.['@String'];
  }

  /** Core.Tag: on unless it says Bool="false"; undefined when absent. */
  tag(n: Node, qualified: string): boolean | undefined {
    const a = this.one(n, qualified);
    return a === undefined ? undefined : a['@Bool'] !== 'false';
  }
}

const POLICY = 'ResoServer.Policy';

export function readDictionary(xml: string): Dictionary {
  checkDictionaryText(xml);
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

  const aliases = new Map<string, string>();
  for (const ref of (doc.Edmx.Reference ?? []) as Node[]) {
    for (const inc of (ref.Include ?? []) as Node[]) if (inc['@Alias']) aliases.set(inc['@Alias'], inc['@Namespace']);
  }
  for (const s of schemas) if (s['@Alias']) aliases.set(s['@Alias'], s['@Namespace']);
  const notes = new Annotations(aliases);

  const entitySchema = schemas.find((s) => (s.EntityType ?? []).length > 0);
  if (!entitySchema) throw new DictionaryError('no schema declares entity types');
  const enumRefs = new Map<string, EnumTypeRef>();
  for (const schema of schemas) {
    const qualifiers = [schema['@Namespace'], schema['@Alias']].filter(Boolean);
    for (const e of (schema.EnumType ?? []) as Node[]) {
      for (const q of qualifiers) enumRefs.set(`${q}.${e['@Name']}`, { name: e['@Name'], flags: e['@IsFlags'] === 'true' });
    }
  }
  const entityTypes = enumsAsLookups((entitySchema.EntityType as Node[]).map((et) => readEntityType(et, notes)), enumRefs);
  const container: Node | undefined = schemas.map((s) => s.EntityContainer).find(Boolean);
  if (!container) throw new DictionaryError('no <EntityContainer> found');
  return {
    namespace: entitySchema['@Namespace'],
    containerName: container['@Name'],
    entityTypes,
    entitySets: ((container.EntitySet ?? []) as Node[]).map((es) => readEntitySet(es, notes, notes.tag(container, SKIP_SUPPORTED) ?? false)),
    enums: schemas.flatMap((s) => (s.EnumType ?? []) as Node[]).map((e) => readEnum(e, notes)),
  };
}

/** A lookup (EnumType): its members, each once by name and once by standard name, the value clients see. */
function readEnum(e: Node, notes: Annotations): EnumDef {
  const members = ((e.Member ?? []) as Node[]).map((m) => ({
    name: m['@Name'] as string,
    standardName: notes.string(m, STANDARD_NAME_TERM) ?? (m['@Name'] as string),
  }));
  const byName = new Set<string>();
  const byValue = new Map<string, string>();
  for (const m of members) {
    if (byName.has(m.name)) throw new DictionaryError(`lookup ${e['@Name']}: member ${m.name} is declared twice`, { kind: 'EnumType', name: e['@Name'] });
    byName.add(m.name);
    const other = byValue.get(m.standardName);
    if (other !== undefined) {
      throw new DictionaryError(`lookup ${e['@Name']}: members ${other} and ${m.name} have the same standard name "${m.standardName}"`, { kind: 'EnumType', name: e['@Name'] });
    }
    byValue.set(m.standardName, m.name);
  }
  return { name: e['@Name'], members };
}

function readEntityType(et: Node, notes: Annotations): EntityTypeDef {
  const keys = ((et.Key?.PropertyRef ?? []) as Node[]).map((r) => r['@Name'] as string);
  const name: string = et['@Name'];
  if (keys.length === 0) {
    throw new DictionaryError(`entity type ${name} declares no key: add <Key><PropertyRef Name="…"/></Key> naming the property that identifies its records`, entityTypeRef(name));
  }
  if (keys.length !== 1) throw new DictionaryError(`entity type ${name}: exactly one key property is supported, found ${keys.length}`, entityTypeRef(name));
  return {
    name,
    key: keys[0],
    properties: ((et.Property ?? []) as Node[]).map((p) => ({
      name: p['@Name'],
      type: p['@Type'],
      nullable: p['@Nullable'] !== 'false',
      maxLength: optionalInt(p['@MaxLength'], name, p['@Name']),
      precision: optionalInt(p['@Precision'], name, p['@Name']),
      scale: optionalInt(p['@Scale'], name, p['@Name']),
      lookupName: notes.string(p, LOOKUP_TERM),
      restricted: notes.tag(p, `${POLICY}.Restricted`) ?? false,
      changeTimestamp: notes.tag(p, `${POLICY}.ChangeTimestamp`) ?? false,
      movedByRelated: notes.string(p, `${POLICY}.MovedByRelated`),
      ordersWhenFiltered: notes.tag(p, `${POLICY}.OrdersWhenFiltered`) ?? false,
      namesFieldOf: notes.string(p, `${POLICY}.NamesFieldOf`),
      namedFieldValue: notes.tag(p, `${POLICY}.NamedFieldValue`) ?? false,
      namesLookup: notes.tag(p, `${POLICY}.NamesLookup`) ?? false,
    })),
    navigations: ((et.NavigationProperty ?? []) as Node[]).map((n) => {
      const rc = (n.ReferentialConstraint ?? [])[0] as Node | undefined;
      return {
        name: n['@Name'],
        type: n['@Type'],
        partner: n['@Partner'],
        expandOrder: notes.string(n, `${POLICY}.ExpandOrder`),
        constraint: rc ? { property: rc['@Property'], referencedProperty: rc['@ReferencedProperty'] } : undefined,
        charged: notes.tag(n, `${POLICY}.ChargedExpansion`) ?? false,
        followable: notes.tag(n, `${POLICY}.Followable`),
        discriminator: notes.string(n, `${POLICY}.ResourceDiscriminator`),
      };
    }),
  };
}

const SKIP_SUPPORTED = 'Org.OData.Capabilities.V1.SkipSupported';

function readEntitySet(es: Node, notes: Annotations, containerSkip: boolean): EntitySetDef {
  return {
    name: es['@Name'],
    entityType: es['@EntityType'],
    bindings: ((es.NavigationPropertyBinding ?? []) as Node[]).map((b) => ({ path: b['@Path'], target: b['@Target'] })),
    pathAliases: notes.all(es, `${POLICY}.PathAlias`).map((a) => a['@String']),
    nonFilterable: propertyPaths(notes.one(es, 'Org.OData.Capabilities.V1.FilterRestrictions'), 'NonFilterableProperties'),
    nonSortable: propertyPaths(notes.one(es, 'Org.OData.Capabilities.V1.SortRestrictions'), 'NonSortableProperties'),
    listingRoot: notes.tag(es, `${POLICY}.ListingRoot`) ?? false,
    deletedWhen: notes.string(es, `${POLICY}.DeletedWhen`),
    describesDictionary: notes.string(es, `${POLICY}.DescribesDictionary`),
    changeLogOf: notes.string(es, `${POLICY}.ChangeLogOf`),
    skipSupported: notes.tag(es, SKIP_SUPPORTED) ?? containerSkip,
    pagedByTop: notes.tag(es, `${POLICY}.PagedByTop`) ?? false,
    unindexed: pathCollection(notes.one(es, `${POLICY}.UnindexedProperties`)),
  };
}

function optionalInt(v: string | undefined, type: string, property: string): number | undefined {
  if (v === undefined || v === 'max' || v === 'variable' || v === 'floating') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new DictionaryError(`expected an integer facet, got "${v}"`, propertyRef(type, property));
  return n;
}

function propertyPaths(a: Node | undefined, property: string): string[] | undefined {
  if (!a) return undefined;
  const pv = ((a.Record?.PropertyValue ?? []) as Node[]).find((p) => p['@Property'] === property);
  return pv ? pathCollection(pv) : [];
}

/** The paths of a `<Collection>` of `<PropertyPath>`s under `n` (an annotation or a property value). */
function pathCollection(n: Node | undefined): string[] | undefined {
  if (!n) return undefined;
  const paths = (n.Collection?.PropertyPath ?? []) as (string | Node)[];
  return paths.map((p) => (typeof p === 'string' ? p : p['#text']).trim());
}
