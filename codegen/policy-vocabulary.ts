/**
 * The ResoServer.Policy vocabulary: the terms this server's generator reads (codegen/dictionary.ts), each with
 * what it does. The shipped dictionary declares exactly this schema (test/init-defaults.test.ts checks it), and
 * `reso-server init` declares it in a dictionary that does not, so the operator's file says what its policy
 * annotations mean.
 */

export const POLICY_NAMESPACE = 'ResoServer.Policy';
/** The alias the shipped dictionary gives it, and init too unless the dictionary uses the name otherwise. */
export const POLICY_ALIAS = 'Policy';

/** The schema's lines, indented from its own element; `Alias="Policy"` as written is replaced when init must. */
export const POLICY_SCHEMA: readonly string[] = `<Schema Namespace="ResoServer.Policy" Alias="Policy" xmlns="http://docs.oasis-open.org/odata/ns/edm">
  <Term Name="Restricted" Type="Core.Tag" DefaultValue="true" AppliesTo="Property"/>
  <Term Name="PathAlias" Type="Edm.String" AppliesTo="EntitySet"/>
  <Term Name="ExpandOrder" Type="Edm.String" AppliesTo="NavigationProperty"/>
  <!-- The set whose records client and feed scopes select; every set with a navigation from it is scoped through it. -->
  <Term Name="ListingRoot" Type="Core.Tag" DefaultValue="true" AppliesTo="EntitySet"/>
  <!-- A removed record of this set is kept and marked, never physically deleted: an OData filter "Field eq 'Value'". -->
  <Term Name="DeletedWhen" Type="Edm.String" AppliesTo="EntitySet"/>
  <!-- The rows of this set are the dictionary itself ("Lookups" or "Fields"), kept equal to it by the service. -->
  <Term Name="DescribesDictionary" Type="Edm.String" AppliesTo="EntitySet"/>
  <!-- On this set $top bounds each page instead of the whole walk: a response holds at most $top records
       (and at most MAX_PAGE_SIZE), and while records remain its nextLink continues with pages of that size.
       For readers that take $top as a page size and follow nextLinks to the end (RESO's Lookup reader). -->
  <Term Name="PagedByTop" Type="Core.Tag" DefaultValue="true" AppliesTo="EntitySet"/>
  <!-- Each record of this navigation's expansion is charged one more class B transaction. -->
  <Term Name="ChargedExpansion" Type="Core.Tag" DefaultValue="true" AppliesTo="NavigationProperty"/>
  <!-- Whether the navigation may be followed as a path (Set('key')/Nav); on by default where a join allows it. -->
  <Term Name="Followable" Type="Core.Tag" DefaultValue="true" AppliesTo="NavigationProperty"/>
  <!-- On a navigation to a parent: the field of this type that must name the parent's entity set for the
       referential constraint to hold (Media.ResourceRecordKey is a ListingKey only when ResourceName is Property). -->
  <Term Name="ResourceDiscriminator" Type="Edm.String" AppliesTo="NavigationProperty"/>
  <!-- The record's change timestamp: kept by the service, moved on every change, the default order and replication mark. -->
  <Term Name="ChangeTimestamp" Type="Core.Tag" DefaultValue="true" AppliesTo="Property"/>
  <!-- A timestamp the service moves when related records change: comma-separated navigations, each optionally
       with a condition on the related record ("Media/MediaCategory eq 'Photo'"). -->
  <Term Name="MovedByRelated" Type="Edm.String" AppliesTo="Property"/>
  <!-- A filter on this field orders the result by it (spec sorting rules 2 and 3). -->
  <Term Name="OrdersWhenFiltered" Type="Core.Tag" DefaultValue="true" AppliesTo="Property"/>
  <!-- This field of a record holds the name of a field of the entity set that the named field of the same record
       names (HistoryTransactional.FieldName of the set in ResourceName): a client from whom that field is
       hidden sees no such record, anywhere. -->
  <Term Name="NamesFieldOf" Type="Edm.String" AppliesTo="Property"/>
  <!-- This field holds a value of the field its record names (NamesFieldOf): withheld with the record. -->
  <Term Name="NamedFieldValue" Type="Core.Tag" DefaultValue="true" AppliesTo="Property"/>
  <!-- This field holds the name of a lookup (RESO.OData.Metadata.LookupName): a client sees no record of a
       lookup that only fields hidden from it use. -->
  <Term Name="NamesLookup" Type="Core.Tag" DefaultValue="true" AppliesTo="Property"/>
  <!-- This set is the service's change log (RESO EntityEvent, RCP-027): one record per committed change of a
       record of the sets named here (comma separated), appended in the change's own transaction. -->
  <Term Name="ChangeLogOf" Type="Edm.String" AppliesTo="EntitySet"/>
  <!-- Filterable or sortable fields of this set given a column but no index: a filter or order on them is
       answered by scanning the set's table, stopped at the statement timeout (501 ScanLimitExceeded past it),
       so a set may offer more fields than the database can index. Published in $metadata under this name. -->
  <Term Name="UnindexedProperties" Type="Collection(Edm.PropertyPath)" Nullable="false" AppliesTo="EntitySet"/>
</Schema>`.split('\n');
