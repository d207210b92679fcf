/**
 * The data dictionary as plain definitions: what dictionary.ts reads from the CSDL XML and everything downstream
 * works on. Its own module so that the reader's helpers (enum-lookups.ts) and the model builder share the types
 * without importing the reader.
 */
export interface PropertyDef {
  name: string;
  /** As written: `Edm.String`, `Collection(Edm.String)`, ... */
  type: string;
  nullable: boolean;
  maxLength?: number;
  precision?: number;
  scale?: number;
  lookupName?: string;
  /** For a property the dictionary types with an EnumType (read as a string lookup): that type, qualified. */
  enumType?: string;
  restricted: boolean;
  /** Policy.ChangeTimestamp: the record's change timestamp. */
  changeTimestamp: boolean;
  /** Policy.MovedByRelated, as written. */
  movedByRelated?: string;
  /** Policy.OrdersWhenFiltered. */
  ordersWhenFiltered: boolean;
  /** Policy.NamesFieldOf: the field of the same type naming the entity set whose field this one names. */
  namesFieldOf?: string;
  /** Policy.NamedFieldValue. */
  namedFieldValue: boolean;
  /** Policy.NamesLookup. */
  namesLookup: boolean;
}

export interface NavigationDef {
  name: string;
  type: string;
  partner?: string;
  /** Policy.ExpandOrder: fields (comma separated) that order an expansion by default. */
  expandOrder?: string;
  constraint?: { property: string; referencedProperty: string };
  /** Policy.ChargedExpansion. */
  charged: boolean;
  /** Policy.Followable; undefined when the dictionary does not say. */
  followable?: boolean;
  /** Policy.ResourceDiscriminator: the field of this type naming the resource the constraint refers to. */
  discriminator?: string;
}

export interface EntityTypeDef {
  name: string;
  key: string;
  properties: PropertyDef[];
  navigations: NavigationDef[];
}

export interface EntitySetDef {
  name: string;
  entityType: string;
  bindings: { path: string; target: string }[];
  pathAliases: string[];
  /** Undefined when the dictionary states no FilterRestrictions for the set. */
  nonFilterable?: string[];
  nonSortable?: string[];
  /** Policy.ListingRoot. */
  listingRoot: boolean;
  /** Policy.DeletedWhen, as written. */
  deletedWhen?: string;
  /** Policy.DescribesDictionary, as written. */
  describesDictionary?: string;
  /** Policy.ChangeLogOf, as written: the sets whose changes this set logs. */
  changeLogOf?: string;
  /** Capabilities.SkipSupported on the set, else on the container, else false (the spec refuses $skip). */
  skipSupported: boolean;
  /** Policy.PagedByTop. */
  pagedByTop: boolean;
  /** Policy.UnindexedProperties: filterable or sortable fields given a column without an index; undefined when not stated. */
  unindexed?: string[];
}

export interface EnumDef {
  name: string;
  members: { name: string; standardName: string }[];
}

export interface Dictionary {
  namespace: string;
  containerName: string;
  entityTypes: EntityTypeDef[];
  entitySets: EntitySetDef[];
  enums: EnumDef[];
}
