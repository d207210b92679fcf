/**
 * The metadata document, XML and CSDL JSON, rendered from the service model. The generator writes the full
 * documents with it; the runtime renders a client's view with it, leaving that client's hidden fields out.
 * It states what the runtime enforces, in the Capabilities vocabulary: filterable and sortable fields, $skip
 * support, navigations that can be expanded or followed, no batch, and no insert, update or delete (the
 * service is read-only), so generated clients offer only what works. The dictionary's own policy terms are
 * not part of the model and so never published, but for the one a client must know to query well: the fields
 * filtered and ordered without an index (Policy.UnindexedProperties), stated with the term declared in the
 * document, and only where a set has such fields.
 */
import { EntitySetSpec, expandable, FieldSpec, NavigationSpec, ServiceModel } from '../model/service-model';
import { metadataJson } from './metadata-json';
import { metadataXml } from './metadata-xml';
import { ALL_ANNOTATIONS, type AnnotationChoice } from './annotation-choice';

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
  /** Filterable or sortable fields answered without an index (by a bounded scan). */
  readonly unindexed: readonly string[];
  /** Declared navigation properties the service does not expand. */
  readonly nonExpandable: readonly string[];
  /** Declared navigation properties the service does not follow as a path either. */
  readonly nonNavigable: readonly string[];
}

export interface MetadataView extends Omit<MetadataModel, 'entitySets'> {
  readonly entitySets: readonly SetView[];
  /** Which vocabularies' annotations the documents carry (annotation-choice.ts). */
  readonly annotations: AnnotationChoice;
}

const NO_MASK: FieldMask = new Map();

export { LOOKUP_NAME_TERM } from './terms';


/** Whether any set of the view has fields answered without an index: only then is the term declared. */
export function declaresUnindexed(view: MetadataView): boolean {
  return view.entitySets.some((s) => s.unindexed.length > 0);
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
  private readonly views = new Map<string, MetadataView>();
  private readonly documents = new Map<string, string>();

  constructor(private readonly model: MetadataModel, private readonly hidden: FieldMask = NO_MASK, published?: MetadataDocuments) {
    if (published) {
      this.documents.set(documentKey(DEFAULT_CSDL_VERSION, ALL_ANNOTATIONS), published.xml);
      this.documents.set(documentKey('json', ALL_ANNOTATIONS), published.json);
    }
  }

  xml(version: CsdlVersion, annotations: AnnotationChoice = ALL_ANNOTATIONS): string {
    return this.document(version, annotations, (view) => metadataXml(view, version));
  }

  json(annotations: AnnotationChoice = ALL_ANNOTATIONS): string {
    return this.document('json', annotations, metadataJson);
  }

  /** A handful of variants at most: two versions and JSON, by the few choices of annotations clients make. */
  private document(kind: CsdlVersion | 'json', annotations: AnnotationChoice, render: (view: MetadataView) => string): string {
    const key = documentKey(kind, annotations);
    let text = this.documents.get(key);
    if (text === undefined) this.documents.set(key, (text = render(this.viewed(annotations))));
    return text;
  }

  private viewed(annotations: AnnotationChoice): MetadataView {
    const key = documentKey('view', annotations);
    let view = this.views.get(key);
    if (!view) this.views.set(key, (view = viewOf(this.model, this.hidden, annotations)));
    return view;
  }
}

function documentKey(kind: string, a: AnnotationChoice): string {
  return `${kind} ${Number(a.capabilities)}${Number(a.core)}${Number(a.lookupNames)}`;
}

/** The declared navigation properties the service does not serve as `serves` says. */
function declaredExcept(set: MetadataSet, serves: (n: NavigationSpec) => boolean | undefined): string[] {
  return set.navigationProperties.map((p) => p.name).filter((name) => !set.navigations.some((n) => n.name === name && serves(n)));
}

function viewOf(model: MetadataModel, hidden: FieldMask, annotations: AnnotationChoice = ALL_ANNOTATIONS): MetadataView {
  const prefix = `${model.namespace}.`;
  return {
    ...model,
    annotations,
    entitySets: model.entitySets.map((set) => {
      const masked = hidden.get(set.name);
      const visible: readonly FieldSpec[] = masked ? set.fields.filter((f) => !masked.has(f.name)) : set.fields;
      const fields = annotations.lookupNames ? visible : visible.map((f) => (f.lookupName ? { ...f, lookupName: undefined } : f));
      return {
        ...set,
        typeName: set.entityType.startsWith(prefix) ? set.entityType.slice(prefix.length) : set.entityType,
        fields,
        nonFilterable: fields.filter((f) => !f.filterable).map((f) => f.name),
        nonSortable: fields.filter((f) => !f.sortable).map((f) => f.name),
        nonExpandable: declaredExcept(set, expandable),
        nonNavigable: declaredExcept(set, expandable),
        unindexed: fields.filter((f) => f.unindexed).map((f) => f.name),
      };
    }),
  };
}
