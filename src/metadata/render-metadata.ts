/**
 * The metadata document, XML and CSDL JSON, rendered from the service model. The generator writes the full
 * documents with it; the runtime renders a client's view with it, leaving that client's hidden fields out.
 * It states what the runtime enforces, in the Capabilities vocabulary: filterable and sortable fields, $skip
 * support, navigations that can be expanded or followed, no batch, and no insert, update or delete (the
 * service is read-only), so generated clients offer only what works. The dictionary's own policy terms are
 * not part of the model and so never published.
 */
import type { EntitySetSpec, FieldSpec, NavigationSpec, ServiceModel } from '../model/service-model';
import { metadataJson } from './metadata-json';
import { metadataXml } from './metadata-xml';

/** What rendering reads of an entity set; an EntitySetSpec is one. */
export type MetadataSet = Pick<
  EntitySetSpec, 'name' | 'entityType' | 'key' | 'fields' | 'navigations' | 'navigationProperties' | 'bindings' | 'skipSupported'
>;

/** What rendering reads of the model; a ServiceModel is one. */
export interface MetadataModel extends Pick<ServiceModel, 'namespace' | 'containerName' | 'metadataHeader'> {
  readonly entitySets: readonly MetadataSet[];
}

/** Fields left out of the documents, by entity set name. */
export type FieldMask = ReadonlyMap<string, ReadonlySet<string>>;

export interface MetadataDocuments {
  readonly xml: string;
  readonly json: string;
}

/** The OData version an XML document declares (CSDL JSON exists only since 4.01). */
export type CsdlVersion = '4.0' | '4.01';

/**
 * The version of the XML document a client gets unless it asks for 4.01 (http/service-root.ts says why), and so
 * the one published in generated/metadata.xml: a service whose clients hide nothing serves it as written.
 */
export const DEFAULT_CSDL_VERSION: CsdlVersion = '4.0';

/** One entity set and its type as the documents state them, hidden fields already left out. */
export interface SetView extends MetadataSet {
  /** The entity type's name without the namespace. */
  readonly typeName: string;
  readonly nonFilterable: readonly string[];
  readonly nonSortable: readonly string[];
  /** Declared navigation properties the service does not expand. */
  readonly nonExpandable: readonly string[];
  /** Declared navigation properties the service does not follow as a path either. */
  readonly nonNavigable: readonly string[];
}

export interface MetadataView extends Omit<MetadataModel, 'entitySets'> {
  readonly entitySets: readonly SetView[];
}

const NO_MASK: FieldMask = new Map();

/** The RESO term naming a field's lookup; the documents declare it, as RESO publishes no vocabulary file for it. */
export const LOOKUP_NAME_TERM = termOf('RESO.OData.Metadata.LookupName');

function termOf(qualified: string): { readonly qualified: string; readonly namespace: string; readonly name: string } {
  const dot = qualified.lastIndexOf('.');
  return { qualified, namespace: qualified.slice(0, dot), name: qualified.slice(dot + 1) };
}

/** The documents as published (the XML in the default version), or as a client sees them with `hidden` left out. */
export function renderMetadata(model: MetadataModel, hidden: FieldMask = NO_MASK): MetadataDocuments {
  const view = viewOf(model, hidden);
  return { xml: metadataXml(view, DEFAULT_CSDL_VERSION), json: metadataJson(view) };
}

/**
 * One client's documents, each rendered when first asked for and then kept: a licence holds one, so a
 * client's view is rendered once, never per request. `published` are documents already rendered (renderMetadata's).
 */
export class MetadataViews {
  private view?: MetadataView;
  private readonly xmlByVersion = new Map<CsdlVersion, string>();
  private jsonText?: string;

  constructor(private readonly model: MetadataModel, private readonly hidden: FieldMask = NO_MASK, published?: MetadataDocuments) {
    if (published) {
      this.xmlByVersion.set(DEFAULT_CSDL_VERSION, published.xml);
      this.jsonText = published.json;
    }
  }

  xml(version: CsdlVersion): string {
    let xml = this.xmlByVersion.get(version);
    if (xml === undefined) this.xmlByVersion.set(version, (xml = metadataXml(this.viewed(), version)));
    return xml;
  }

  json(): string {
    return (this.jsonText ??= metadataJson(this.viewed()));
  }

  private viewed(): MetadataView {
    return (this.view ??= viewOf(this.model, this.hidden));
  }
}

/** The declared navigation properties the service does not serve as `serves` says. */
function declaredExcept(set: MetadataSet, serves: (n: NavigationSpec) => boolean | undefined): string[] {
  return set.navigationProperties.map((p) => p.name).filter((name) => !set.navigations.some((n) => n.name === name && serves(n)));
}

function viewOf(model: MetadataModel, hidden: FieldMask): MetadataView {
  const prefix = `${model.namespace}.`;
  return {
    ...model,
    entitySets: model.entitySets.map((set) => {
      const masked = hidden.get(set.name);
      const fields: readonly FieldSpec[] = masked ? set.fields.filter((f) => !masked.has(f.name)) : set.fields;
      return {
        ...set,
        typeName: set.entityType.startsWith(prefix) ? set.entityType.slice(prefix.length) : set.entityType,
        fields,
        nonFilterable: fields.filter((f) => !f.filterable).map((f) => f.name),
        nonSortable: fields.filter((f) => !f.sortable).map((f) => f.name),
        nonExpandable: declaredExcept(set, (n) => n.followable),
        nonNavigable: declaredExcept(set, (n) => n.followable || n.navigable),
      };
    }),
  };
}
