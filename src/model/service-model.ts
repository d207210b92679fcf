/**
 * The shape of the tables the generator writes into `generated/` and the runtime reads.
 * Nothing here is parsed at run time: the dictionary is read once, by the generator.
 */

/** The primitive EDM types a field may carry (the element type for collections). */
export type EdmPrimitive =
  | 'Edm.String'
  | 'Edm.Boolean'
  | 'Edm.Int16'
  | 'Edm.Int32'
  | 'Edm.Int64'
  | 'Edm.Decimal'
  | 'Edm.Double'
  | 'Edm.Date'
  | 'Edm.DateTimeOffset'
  | 'Edm.TimeOfDay'
  | 'Edm.Guid';

export interface FieldSpec {
  readonly name: string;
  /** Element type; `collection` says whether the field is `Collection(type)`. */
  readonly type: EdmPrimitive;
  readonly collection: boolean;
  readonly nullable: boolean;
  readonly maxLength?: number;
  readonly precision?: number;
  readonly scale?: number;
  /** RESO.OData.Metadata.LookupName, for string lookups. */
  readonly lookupName?: string;
  /** Storage column holding the value, for fields that are filtered or sorted on; otherwise the value lives only in the stored record. */
  readonly column?: string;
  readonly filterable: boolean;
  readonly sortable: boolean;
  /** Refused with 403 in $filter and $orderby (sensitive fields). */
  readonly restricted: boolean;
}

export interface NavigationSpec {
  readonly name: string;
  /** Entity set the navigation leads to. */
  readonly target: string;
  readonly collection: boolean;
  /**
   * How related records are found, from the partner's referential constraint:
   * `target.foreignKey = source.referencedKey`. Absent when the dictionary does not say.
   */
  readonly join?: { readonly foreignKey: string; readonly referencedKey: string };
  /** Default order of an expansion (then the target's key), e.g. Media by its display Order. */
  readonly order?: readonly string[];
}

/** A navigation property as the dictionary declares it on an entity type; the metadata document states it as is. */
export interface NavigationPropertySpec {
  readonly name: string;
  /** As written: `Collection(<namespace>.<Type>)` or `<namespace>.<Type>`. */
  readonly type: string;
  readonly partner?: string;
  readonly constraint?: { readonly property: string; readonly referencedProperty: string };
}

/** A NavigationPropertyBinding of an entity set: the set a navigation path leads to. */
export interface NavigationBindingSpec {
  readonly path: string;
  readonly target: string;
}

export interface EntitySetSpec {
  /** Entity set name, as advertised in the service document. */
  readonly name: string;
  /** Qualified entity type name, for context URLs and metadata. */
  readonly entityType: string;
  /** Further paths that answer as this set without being advertised (spec: Members, Offices, OpenHouses). */
  readonly pathAliases: readonly string[];
  readonly key: string;
  /** Order of a collection when the request names none: ModificationTimestamp then the key, where the type has a timestamp. */
  readonly defaultOrder: readonly string[];
  /** Storage table. */
  readonly table: string;
  /** Fields in declaration order; this is also the order of fields in a stored record. */
  readonly fields: readonly FieldSpec[];
  readonly fieldsByName: Readonly<Record<string, FieldSpec>>;
  readonly navigations: readonly NavigationSpec[];
  /**
   * The entity type's navigation properties as declared, also those to types this service does not serve
   * (which `navigations` leaves out); with `bindings`, what the metadata document says about navigation.
   */
  readonly navigationProperties: readonly NavigationPropertySpec[];
  readonly bindings: readonly NavigationBindingSpec[];
}

export interface LookupValueSpec {
  /** The human value that appears in data, e.g. "Active Under Contract". */
  readonly value: string;
  /** The legacy OData enumeration name, e.g. "ActiveUnderContract". */
  readonly legacyODataValue: string;
}

export interface LookupSpec {
  readonly name: string;
  readonly values: readonly LookupValueSpec[];
}

/** Logical column types of the storage schema; the storage layer maps them per dialect. */
export type ColumnType = 'string' | 'integer' | 'decimal' | 'double' | 'boolean' | 'date' | 'timestamp' | 'text';

export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
  readonly length?: number;
  readonly precision?: number;
  readonly scale?: number;
}

export interface TableSpec {
  readonly name: string;
  readonly columns: readonly ColumnSpec[];
  readonly primaryKey: string;
  /** Secondary indexes; every one ends with the key so that keyset order is total. */
  readonly indexes: readonly { readonly name: string; readonly columns: readonly string[] }[];
}

/** The column that holds each record whole, as the JSON text a response carries. */
export const RECORD_COLUMN = '_record';

export interface ServiceModel {
  readonly namespace: string;
  readonly containerName: string;
  readonly entitySets: readonly EntitySetSpec[];
  readonly tables: readonly TableSpec[];
  readonly lookups: readonly LookupSpec[];
  /** Capabilities.SkipSupported, as the dictionary states it. */
  readonly skipSupported: boolean;
  /** Names the dictionary the model was generated from: the XML metadata's opening comment, the JSON schema's description. */
  readonly metadataHeader: string;
  /** The metadata documents in full, as generated (src/metadata renders the same from this model). */
  readonly metadataXml: string;
  readonly metadataJson: string;
  /** Mounts the generated routes of every entity set. */
  readonly mountRoutes: (router: import('express').IRouter, handlers: ResourceHandlers) => void;
}

/** What a generated router asks of the runtime: one request handler per kind of path. */
export interface ResourceHandlers {
  collection(set: EntitySetSpec): import('express').RequestHandler;
  /** `<Set>/$count`: the number of matching records as text/plain. */
  count(set: EntitySetSpec): import('express').RequestHandler;
  byKey(set: EntitySetSpec): import('express').RequestHandler;
  /** `<Set>('<key>')/<Navigation>`: the related records of one record, as a collection. */
  navigation(set: EntitySetSpec): import('express').RequestHandler;
}
