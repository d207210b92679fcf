/**
 * The metadata document, XML and CSDL JSON, rendered from the service model. The generator writes the full
 * documents with it; the runtime renders a client's view with it, leaving that client's hidden fields out.
 * It states what the runtime enforces, in the Capabilities vocabulary: filterable and sortable fields, $skip
 * support, navigations that can be expanded and followed, no batch, and no insert, update or delete (the
 * service is read-only), so generated clients offer only what works. The dictionary's own policy terms are
 * not part of the model and so never published, but for the one a client must know to query well: the fields
 * filtered and ordered without an index (Policy.UnindexedProperties), stated with the term declared in the
 * document, and only where a set has such fields.
 */
import type { EntitySetSpec, FieldSpec, ServiceModel } from '../model/service-model';
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

/** The OData version an XML document declares: the one the response speaks (CSDL JSON exists only since 4.01). */
export type CsdlVersion = '4.0' | '4.01';

/** One entity set and its type as the documents state them, hidden fields already left out. */
export interface SetView extends MetadataSet {
  /** The entity type's name without the namespace. */
  readonly typeName: string;
  readonly nonFilterable: readonly string[];
  readonly nonSortable: readonly string[];
  /** Filterable or sortable fields answered without an index (by a bounded scan). */
  readonly unindexed: readonly string[];
  /** Declared navigation properties the service neither expands nor follows as a path. */
  readonly closedNavigations: readonly string[];
}

export interface MetadataView extends Omit<MetadataModel, 'entitySets'> {
  readonly entitySets: readonly SetView[];
}

const NO_MASK: FieldMask = new Map();

/** The RESO term naming a field's lookup; the documents declare it, as RESO publishes no vocabulary file for it. */
export const LOOKUP_NAME_TERM = termOf('RESO.OData.Metadata.LookupName');

/**
 * The term stating a set's fields filtered and ordered without an index. No standard term says what a query
 * on them costs (Capabilities says only whether a field may be filtered), so the service declares its own.
 */
export const UNINDEXED_TERM = {
  ...termOf('ResoServer.Policy.UnindexedProperties'),
  description: 'Properties this service filters and orders by without an index, by scanning the entity set: a '
    + 'request whose scan takes longer than the service allows one statement answers 501 ScanLimitExceeded. '
    + 'A condition on an indexed property beside them narrows the scan.',
};

function termOf(qualified: string): { readonly qualified: string; readonly namespace: string; readonly name: string } {
  const dot = qualified.lastIndexOf('.');
  return { qualified, namespace: qualified.slice(0, dot), name: qualified.slice(dot + 1) };
}

/** Whether any set of the view has fields answered without an index: only then is the term declared. */
export function declaresUnindexed(view: MetadataView): boolean {
  return view.entitySets.some((s) => s.unindexed.length > 0);
}

/** The documents as published (4.01), or as a client sees them with `hidden` left out. */
export function renderMetadata(model: MetadataModel, hidden: FieldMask = NO_MASK): MetadataDocuments {
  const view = viewOf(model, hidden);
  return { xml: metadataXml(view, '4.01'), json: metadataJson(view) };
}

/**
 * One client's documents, each rendered when first asked for and then kept: a licence holds one, so a
 * client's view is rendered once, never per request. `published` are documents already rendered (4.01).
 */
export class MetadataViews {
  private view?: MetadataView;
  private readonly xmlByVersion = new Map<CsdlVersion, string>();
  private jsonText?: string;

  constructor(private readonly model: MetadataModel, private readonly hidden: FieldMask = NO_MASK, published?: MetadataDocuments) {
    if (published) {
      this.xmlByVersion.set('4.01', published.xml);
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
        unindexed: fields.filter((f) => f.unindexed).map((f) => f.name),
        closedNavigations: set.navigationProperties.map((n) => n.name).filter((name) => !set.navigations.some((n) => n.name === name && n.followable)),
      };
    }),
  };
}
