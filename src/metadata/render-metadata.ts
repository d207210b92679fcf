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
import { metadataJson } from './metadata-json';
import { metadataXml } from './metadata-xml';
import { ALL_ANNOTATIONS, type AnnotationChoice } from './annotation-choice';
import { viewOf, type CsdlVersion, type FieldMask, type MetadataModel, type MetadataView } from './metadata-view';

export type { CsdlVersion, FieldMask, MetadataModel } from './metadata-view';

export interface MetadataDocuments {
  readonly xml: string;
  readonly json: string;
}

/**
 * The version of the XML document a client gets unless it asks for 4.01 (http/service-root.ts says why), and so
 * the one published in generated/metadata.xml: a service whose clients hide nothing serves it as written.
 */
export const DEFAULT_CSDL_VERSION: CsdlVersion = '4.0';

const NO_MASK: FieldMask = new Map();

export { LOOKUP_NAME_TERM } from './terms';

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
