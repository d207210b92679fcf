/**
 * What the metadata documents state, as the XML and JSON renderers read it: the model's sets with a client's
 * hidden fields left out and each set's capabilities worked out once. Its own module so that the renderers and
 * render-metadata.ts (which chooses and keeps documents) import it, never each other.
 */
import { digestFieldsOf, digestRangeType, EntitySetSpec, expandable, FieldSpec, NavigationSpec, ServiceModel } from '../model/service-model';
import { DIGEST_FUNCTION, DIGEST_PARTS } from '../query/digest-call';
import { ALL_ANNOTATIONS, type AnnotationChoice } from './annotation-choice';

/** What rendering reads of an entity set; an EntitySetSpec is one. */
export type MetadataSet = Pick<
  EntitySetSpec, 'name' | 'entityType' | 'key' | 'fields' | 'navigations' | 'navigationProperties' | 'bindings' | 'skipSupported'
  | 'changeTimestamp'
>;

/** What rendering reads of the model; a ServiceModel is one. */
export interface MetadataModel extends Pick<ServiceModel, 'namespace' | 'containerName' | 'metadataHeader'> {
  readonly entitySets: readonly MetadataSet[];
}

/** Fields left out of the documents, by entity set name. */
export type FieldMask = ReadonlyMap<string, ReadonlySet<string>>;

/** The OData version an XML document declares (CSDL JSON exists only since 4.01). */
export type CsdlVersion = '4.0' | '4.01';

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
  /** The replica digest bound to the set (http/odata/digest.ts), unless the set has no timestamp the client sees. */
  readonly digest: DigestView | false;
}

/** A digest function's types: its key's (From, To) and its ranges' complex type (without the namespace). */
export interface DigestView {
  readonly keyType: string;
  readonly rangeType: string;
}

export interface MetadataView extends Omit<MetadataModel, 'entitySets'> {
  readonly entitySets: readonly SetView[];
  /** Which vocabularies' annotations the documents carry (annotation-choice.ts). */
  readonly annotations: AnnotationChoice;
  /** The complex types the sets' digests return, one per key type. */
  readonly digestRanges: readonly { readonly name: string; readonly keyType: string }[];
  readonly digestFunction: { readonly name: string; readonly defaultParts: number };
  /**
   * The schema is a default namespace (Core.DefaultNamespace; OData 4.01 Protocol, "Default Namespaces"): its functions may be called without
   * the namespace (`Property/Digest(…)`). Stated with the Core annotations, where a set has a digest.
   */
  readonly defaultNamespace: boolean;
}

/** Whether any set of the view has fields answered without an index: only then is the term declared. */
export function declaresUnindexed(view: MetadataView): boolean {
  return view.entitySets.some((s) => s.unindexed.length > 0);
}

/** The declared navigation properties the service does not serve as `serves` says. */
function declaredExcept(set: MetadataSet, serves: (n: NavigationSpec) => boolean | undefined): string[] {
  return set.navigationProperties.map((p) => p.name).filter((name) => !set.navigations.some((n) => n.name === name && serves(n)));
}

/** The documents' content as a client sees it: its `hidden` fields left out, with the annotations it chose. */
export function viewOf(model: MetadataModel, hidden: FieldMask, annotations: AnnotationChoice = ALL_ANNOTATIONS): MetadataView {
  const prefix = `${model.namespace}.`;
  const entitySets = model.entitySets.map((set): SetView => {
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
      digest: digestOf(set, masked),
    };
  });
  const ranges = new Map(entitySets.flatMap((s) => (s.digest ? [[s.digest.rangeType, s.digest.keyType] as const] : [])));
  return {
    ...model,
    annotations,
    entitySets,
    digestRanges: [...ranges].map(([name, keyType]) => ({ name, keyType })),
    digestFunction: { name: DIGEST_FUNCTION, defaultParts: DIGEST_PARTS.default },
    defaultNamespace: annotations.core && ranges.size > 0,
  };
}

/** The set's digest as the client may call it: none where its licence hides the timestamp the digest hashes. */
function digestOf(set: MetadataSet, hidden: ReadonlySet<string> | undefined): DigestView | false {
  const fields = digestFieldsOf(set);
  if (!fields || hidden?.has(fields.timestamp.name)) return false;
  return { keyType: fields.key.type, rangeType: digestRangeType(fields.key) };
}
