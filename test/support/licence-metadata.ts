/**
 * What a metadata document (CSDL XML or CSDL JSON) declares, per entity type and entity set: the structural
 * properties, the properties named by referential constraints, and the property paths of the set's
 * annotations (filter and sort restrictions). Used to check a client's view of the metadata.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export interface MetadataView {
  /** Structural properties by entity type name. */
  properties: Map<string, Set<string>>;
  /** Properties (of the type itself) named by referential constraints of its navigation properties. */
  constrained: Map<string, Set<string>>;
  /** Entity type name of each entity set. */
  setType: Map<string, string>;
  /** Property paths named anywhere in an entity set's annotations. */
  setPaths: Map<string, Set<string>>;
}

function arr(v: unknown): any[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function collect(node: unknown, tag: string, out: Set<string>): void {
  if (!node || typeof node !== 'object') return;
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === tag) {
      for (const item of arr(v)) out.add(typeof item === 'string' ? item : String((item as Record<string, unknown>)['#text'] ?? ''));
    } else {
      for (const item of arr(v)) collect(item, tag, out);
    }
  }
}

export function xmlView(xml: string): MetadataView {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new Error(`metadata XML is not well-formed: ${JSON.stringify(valid)}`);
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false }).parse(xml);
  const view: MetadataView = { properties: new Map(), constrained: new Map(), setType: new Map(), setPaths: new Map() };
  for (const schema of arr(doc['edmx:Edmx']?.['edmx:DataServices']?.Schema)) {
    const ns = schema['@_Namespace'] as string;
    for (const type of arr(schema.EntityType)) {
      const name = type['@_Name'] as string;
      view.properties.set(name, new Set(arr(type.Property).map((p) => p['@_Name'] as string)));
      const constrained = new Set<string>();
      for (const nav of arr(type.NavigationProperty)) for (const rc of arr(nav.ReferentialConstraint)) constrained.add(rc['@_Property']);
      view.constrained.set(name, constrained);
    }
    for (const container of arr(schema.EntityContainer)) {
      for (const set of arr(container.EntitySet)) {
        const name = set['@_Name'] as string;
        const type = String(set['@_EntityType']);
        view.setType.set(name, type.startsWith(`${ns}.`) ? type.slice(ns.length + 1) : type);
        const paths = new Set<string>();
        collect(set.Annotation, 'PropertyPath', paths);
        view.setPaths.set(name, paths);
      }
    }
  }
  return view;
}

export function jsonView(text: string): MetadataView {
  const doc = JSON.parse(text) as Record<string, any>;
  const view: MetadataView = { properties: new Map(), constrained: new Map(), setType: new Map(), setPaths: new Map() };
  for (const [ns, schema] of Object.entries(doc)) {
    if (ns.startsWith('$') || !schema || typeof schema !== 'object') continue;
    for (const [name, el] of Object.entries(schema as Record<string, any>)) {
      if (!el || typeof el !== 'object' || name.startsWith('@') || name.startsWith('$')) continue;
      if (el.$Kind === 'EntityType') {
        const props = new Set<string>();
        const constrained = new Set<string>();
        for (const [p, def] of Object.entries(el as Record<string, any>)) {
          if (p.startsWith('$') || p.startsWith('@') || !def || typeof def !== 'object') continue;
          if (def.$Kind === 'NavigationProperty') {
            for (const k of Object.keys(def.$ReferentialConstraint ?? {})) if (!k.startsWith('@')) constrained.add(k);
          } else if (def.$Kind === undefined || def.$Kind === 'Property') {
            props.add(p);
          }
        }
        view.properties.set(name, props);
        view.constrained.set(name, constrained);
      } else if (el.$Kind === 'EntityContainer') {
        for (const [setName, set] of Object.entries(el as Record<string, any>)) {
          if (setName.startsWith('$') || setName.startsWith('@') || !set?.$Collection) continue;
          const type = String(set.$Type);
          view.setType.set(setName, type.startsWith(`${ns}.`) ? type.slice(ns.length + 1) : type);
          const paths = new Set<string>();
          for (const [k, v] of Object.entries(set as Record<string, any>)) {
            if (!k.startsWith('@') || !v || typeof v !== 'object') continue;
            for (const list of Object.values(v as Record<string, unknown>)) for (const item of arr(list)) if (typeof item === 'string') paths.add(item);
          }
          view.setPaths.set(setName, paths);
        }
      }
    }
  }
  return view;
}
