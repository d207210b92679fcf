/**
 * What the metadata documents state, as the XML and JSON renderers read it: the model's sets with a client's
 * hidden fields left out and each set's capabilities worked out once. Its own module so that the renderers and
 * render-metadata.ts (which chooses and keeps documents) import it, never each other.
 */
import { EntitySetSpec, expandable, FieldSpec, NavigationSpec, ServiceModel } from '../model/service-model';
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
}

export interface MetadataView extends Omit<MetadataModel, 'entitySets'> {
  readonly entitySets: readonly SetView[];
  /** Which vocabularies' annotations the documents carry (annotation-choice.ts). */
  readonly annotations: AnnotationChoice;
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
