/**
 * The shape of the tables the generator writes into `generated/` and the runtime reads.
 * Nothing here is parsed at run time: the dictionary is read once, by the generator.
 */

import type { DictionaryMigration } from './migration';

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
  /**
   * The EnumType a dictionary in RESO's EnumType flavour types the field with (qualified), read as the string
   * lookup `lookupName`: filters may name its values by member (`'ActiveUnderContract'`) as well as by value.
   */
  readonly enumType?: string;
  /** Storage column holding the value, for fields that are filtered or sorted on; otherwise the value lives only in the stored record. */
  readonly column?: string;
  /**
   * For a filterable collection: the side table holding its elements, one row per record and value
   * (ValueTableSpec), which lambdas (`any`/`all`) and `has` are answered from. The stored record stays the
   * served value.
   */
  readonly valueTable?: string;
  readonly filterable: boolean;
  readonly sortable: boolean;
  /**
   * Filterable or sortable with a column but no index (the set's Policy.UnindexedProperties): a filter or order on
   * it is answered by scanning the set's table, which storage bounds by the statement timeout (ScanLimitExceeded).
   */
  readonly unindexed?: true;
  /** Refused with 403 in $filter and $orderby (sensitive fields). */
  readonly restricted: boolean;
  /** A filter on this field orders the result by it (spec sorting rules 2 and 3). */
  readonly ordersWhenFiltered?: true;
}

/** `field eq value` on one record, a condition the dictionary states (e.g. MlsStatus eq 'Delete'). */
export interface FieldCondition {
  readonly field: string;
  readonly value: string;
}

/** A timestamp of this set that the service moves when a related record (through `navigation`) changes. */
export interface RelatedTimestampSpec {
  readonly field: string;
  readonly navigation: string;
  /** Only related records meeting this condition move it (e.g. photos move PhotosChangeTimestamp). */
  readonly when?: FieldCondition;
}

/** A set whose rows are the dictionary itself, and which of its fields carry each part of a row. */
export type DictionaryRowsSpec =
  | { readonly kind: 'lookups'; readonly fields: { readonly [part in 'key' | 'lookupName' | 'value' | 'standardValue' | 'legacyValue']?: string } }
  | { readonly kind: 'fields'; readonly fields: { readonly [part in 'key' | 'resourceName' | 'fieldName']?: string } };

/**
 * Fields of a set's records that name a field of another set (HistoryTransactional.FieldName, with the set
 * in ResourceName) and hold that field's values: a licence withholds every record naming a hidden field.
 */
export interface FieldNamesSpec {
  /** Holds the field's name. */
  readonly field: string;
  /** Holds the name of the entity set the field belongs to. */
  readonly resource: string;
  /** Hold values of the named field. */
  readonly values: readonly string[];
}

/**
 * A set whose changes the change log records, and where the state a licence judges a record by is found
 * (the listing it belongs to, the columns it names fields or lookups in), to keep as the record's prior image.
 */
export interface LoggedSetSpec {
  readonly name: string;
  /**
   * The listing a record belongs to: this field holds the listing root's key (the root's own key, for the
   * root), when the discriminator (if any) names the root or nothing. Absent: no listing scopes the record.
   */
  readonly listing?: { readonly foreignKey: string; readonly discriminator?: FieldCondition };
  /** Columns of this set that licences read on its own records (records naming fields or lookups). */
  readonly columns: readonly string[];
}

/**
 * The change log (RESO EntityEvent, Policy.ChangeLogOf): every committed change of a record of a logged set
 * appends one record here, in the change's transaction, numbered in commit order.
 */
export interface ChangeLogSpec {
  /** The key field: the event's sequence number (Edm.Int64). */
  readonly sequence: string;
  readonly resourceName: string;
  readonly recordKey: string;
  /** The field for the record's URL, when the type declares it (computed when read, never stored). */
  readonly recordUrl?: string;
  /** The logged sets; events of one transaction are appended in this order (the listing root last). */
  readonly sets: readonly LoggedSetSpec[];
  /**
   * The table keeping, for each event, when it was committed and its prior image: how the record stood for
   * licences just before the change (its listing's scope columns, under the listing root's column names, and
   * its own `columns`), when it existed. A licence's conditions apply to it as they are.
   */
  readonly priorImage: {
    readonly table: string;
    readonly sequence: string;
    /** When the event's transaction took its ModificationTimestamp (retention and scope epochs read it). */
    readonly committed: string;
    /** Whether the record existed before the change (Boolean); the other columns are empty when not. */
    readonly existed: string;
    readonly listingColumns: readonly string[];
    readonly columns: readonly string[];
  };
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
  readonly join?: {
    readonly foreignKey: string;
    readonly referencedKey: string;
    /**
     * The related record belongs to the source only when this field of the record holding the foreign key
     * (`on`) names the other side's set, or is empty (Media.ResourceName: a Member's media is not a listing's).
     */
    readonly discriminator?: FieldCondition & { readonly on: 'source' | 'target' };
  };
  /** Default order of an expansion (then the target's key), e.g. Media by its display Order. */
  readonly order?: readonly string[];
  /** Each expanded record is charged one more class B transaction. */
  readonly charged?: true;
  /** May be followed as a path and expanded: a collection joined on this set's key. */
  readonly followable?: true;
  /**
   * May be followed as a path to the one related record (`Media('<key>')/Listing`) and expanded as that record or
   * null: a single-valued navigation whose join names the target's key (`join.referencedKey` is this set's field
   * holding it).
   */
  readonly navigable?: true;
}

/** Whether `$expand` may name the navigation: a followable collection, or a navigable single record. */
export function expandable(n: Pick<NavigationSpec, 'followable' | 'navigable'>): boolean {
  return n.followable === true || n.navigable === true;
}

/** A navigation with the join it is followed by. */
export type JoinedNavigation = NavigationSpec & { readonly join: NonNullable<NavigationSpec['join']> };

/**
 * The navigations whose target's records belong to a record of this set (a collection joined on its key: a
 * listing's media and rooms), which its scope hides and its changes move; not the records it names (its agent).
 */
export function ownedNavigations(set: Pick<EntitySetSpec, 'navigations'>): JoinedNavigation[] {
  return set.navigations.filter((n): n is JoinedNavigation => n.collection && n.join !== undefined);
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
  /** Order of a collection when the request names none: the change timestamp then the key, where the type has one. */
  readonly defaultOrder: readonly string[];
  /** The field the service moves on every change of a record (the replication mark). */
  readonly changeTimestamp?: string;
  /** The set client and feed scopes select (the listings); related sets are scoped through it. */
  readonly listingRoot?: true;
  /** A removed record is kept and marked with this value instead of being deleted. */
  readonly deletedWhen?: FieldCondition;
  /** Timestamps of this set moved by changes of related records. */
  readonly relatedTimestamps?: readonly RelatedTimestampSpec[];
  /** The rows of this set are the dictionary itself, kept equal to it by the service. */
  readonly dictionaryRows?: DictionaryRowsSpec;
  /** The records of this set name fields of other sets (and may hold their values). */
  readonly namesFields?: FieldNamesSpec;
  /** The field of this set's records naming a lookup (RESO.OData.Metadata.LookupName). */
  readonly namesLookups?: string;
  /**
   * Capabilities.SkipSupported on the set: `$skip` is offered (up to a page's worth of records). Absent, the
   * spec's default: `$skip` is refused with 501.
   */
  readonly skipSupported?: true;
  /** This set is the change log of other sets (EntityEvent). */
  readonly changeLog?: ChangeLogSpec;
  /**
   * Policy.PagedByTop: on this set `$top` bounds each page, not the walk (at most `$top` records a response,
   * nextLinks to the end), for readers that take it as a page size (RESO's Lookup reader).
   */
  readonly pagedByTop?: true;
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
  /**
   * Secondary indexes; every one has the key after its column, so that keyset order is total, and a record table's
   * ends with the revision (REVISION_COLUMN), so that positions and revisions are read from the index alone.
   */
  readonly indexes: readonly { readonly name: string; readonly columns: readonly string[] }[];
}

/** The column that holds each record whole, as the JSON text a response carries. */
export const RECORD_COLUMN = '_record';

/**
 * The column that names the version of a row's record: every write of the record column writes a new value here
 * (storage/record-codec.ts, newRevision), so a record's bytes known by key and revision are its bytes for as long
 * as the row holds that revision (storage/record-cache.ts). Null in a row no write has given one yet.
 */
export const REVISION_COLUMN = '_revision';

/** Columns of every value table: the record's key, and one element of its collection. */
export const VALUE_TABLE_KEY = '_key';
export const VALUE_TABLE_VALUE = '_value';
/** Longest text element a filterable collection may hold (its value table indexes it with the record key). */
export const VALUE_TABLE_TEXT_LENGTH = 255;

/**
 * The elements of one filterable collection field, kept beside the set's table by the record writer in the
 * same transaction: primary key (record key, value), and an index on (value, record key), so a lambda is a
 * seek from either side.
 */
export interface ValueTableSpec {
  readonly name: string;
  /** The entity set's table and the collection field whose elements it holds. */
  readonly table: string;
  readonly field: string;
  /** VALUE_TABLE_KEY then VALUE_TABLE_VALUE. */
  readonly columns: readonly ColumnSpec[];
  readonly indexes: readonly { readonly name: string; readonly columns: readonly string[] }[];
}

export interface ServiceModel {
  readonly namespace: string;
  readonly containerName: string;
  readonly entitySets: readonly EntitySetSpec[];
  readonly tables: readonly TableSpec[];
  /** Side tables of the filterable collection fields. */
  readonly valueTables: readonly ValueTableSpec[];
  /** The schema's history, oldest first: one migration per dictionary change (generated/migrations/). */
  readonly migrations: readonly DictionaryMigration[];
  readonly lookups: readonly LookupSpec[];
  /** Names the dictionary the model was generated from: the XML metadata's opening comment, the JSON schema's description. */
  readonly metadataHeader: string;
  /** The metadata documents in full, as generated (src/metadata renders the same from this model). */
  readonly metadataXml: string;
  readonly metadataJson: string;
  /**
   * The JSON Schema of each entity set's records, by set name, as generated (`schemas/<Type>.json` beside the
   * model): what ingest validates every line against.
   */
  readonly recordSchemas: Readonly<Record<string, RecordSchema>>;
}

/** A generated record schema (JSON Schema draft-07): an object of the set's fields, nothing else but annotations. */
export interface RecordSchema {
  readonly $schema: string;
  readonly title: string;
  readonly type: 'object';
  /** One schema per field, by field name. */
  readonly properties: Readonly<Record<string, unknown>>;
  readonly required: readonly string[];
  readonly additionalProperties: false;
  readonly [keyword: string]: unknown;
}

/** The set scopes apply to, if the dictionary names one. */
export function listingRootOf(model: Pick<ServiceModel, 'entitySets'>): EntitySetSpec | undefined {
  return model.entitySets.find((s) => s.listingRoot);
}

/** Fields whose values the service sets (the change timestamp, timestamps related records move): ingest ignores input values for them. */
export function serviceKeptFields(set: Pick<EntitySetSpec, 'changeTimestamp' | 'relatedTimestamps'>): string[] {
  return [...new Set([...(set.changeTimestamp ? [set.changeTimestamp] : []), ...(set.relatedTimestamps ?? []).map((r) => r.field)])];
}

/** What a replica digest of a set reads (http/odata/digest.ts): its key and its replication timestamp. */
export interface DigestFields {
  readonly key: FieldSpec;
  readonly timestamp: FieldSpec;
}

/** A set offers the digest when it has a replication timestamp; none otherwise. */
export function digestFieldsOf(set: Pick<EntitySetSpec, 'key' | 'changeTimestamp' | 'fields'>): DigestFields | undefined {
  const key = set.fields.find((f) => f.name === set.key);
  const timestamp = set.changeTimestamp === undefined ? undefined : set.fields.find((f) => f.name === set.changeTimestamp);
  return key && timestamp ? { key, timestamp } : undefined;
}

/** The complex type of a digest's ranges: DigestRange for string keys, DigestRange<Type> (Int64, …) for others. */
export function digestRangeType(key: Pick<FieldSpec, 'type'>): string {
  return key.type === 'Edm.String' ? 'DigestRange' : `DigestRange${key.type.replace(/^Edm\./, '')}`;
}
