/**
 * Query options over HTTP, table-driven (support/request-table.ts), read against the listing service spec:
 * §4 "Query options" other than $filter ($orderby, $top, $count, $select, $expand, $skip), "Query
 * restrictions", "Property endpoint", "Sorting rules", the removed-listings check, §2 resource sets, and
 * §7 "Errors". The $filter table: query-filter.test.ts.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { lookups } from '../generated/lookups';
import {
  all, BY_DOCS, BY_PHOTOS, describeRequestTable, DOC, err, F, FILTERABLE, filterOfLength, MAX_FILTER, MOD, none, NOT_INDEXED, O, ok,
  PHO, RESTRICTED, Statement, specSection, T, titled,
} from './support/request-table';
import { requireShared } from './support/shared';
import { at, Rec, T0_MINUS_1MS } from './support/query-data';

const OPTIONS: Statement[] = [
  {
    title: '§4 Query options: $orderby "Supported on a subset of indexed fields" — each sortable field, asc/desc, several keys',
    rows: [
      ok(O('ModificationTimestamp'), all, { order: [['ModificationTimestamp', 'asc']] }),
      ok(O('ModificationTimestamp asc'), all, { order: [['ModificationTimestamp', 'asc']] }),
      ok(O('ModificationTimestamp desc'), all, { order: [['ModificationTimestamp', 'desc']] }),
      ok(O('ModificationTimestamp DESC'), all, { order: [['ModificationTimestamp', 'desc']] }),
      ok(O('ListingKey'), all, { order: [['ListingKey', 'asc']] }),
      ok(O('ListingKey desc'), all, { order: [['ListingKey', 'desc']] }),
      ok(O('MlsStatus'), all, { order: [['MlsStatus', 'asc']] }),
      ok(O('MlsStatus desc'), all, { order: [['MlsStatus', 'desc']] }),
      ok(O('PropertyType asc'), all, { order: [['PropertyType', 'asc']] }),
      ok(O('PropertyType desc'), all, { order: [['PropertyType', 'desc']] }),
      ok(O('PhotosChangeTimestamp'), all, { order: [['PhotosChangeTimestamp', 'asc']] }),
      ok(O('PhotosChangeTimestamp desc'), all, { order: [['PhotosChangeTimestamp', 'desc']] }),
      ok(O('DocumentsChangeTimestamp asc'), all, { order: [['DocumentsChangeTimestamp', 'asc']] }),
      ok(O('DocumentsChangeTimestamp desc,ModificationTimestamp desc'), all, { order: [['DocumentsChangeTimestamp', 'desc'], ['ModificationTimestamp', 'desc']] }),
      ok(O('MlsStatus asc,PropertyType desc'), all, { order: [['MlsStatus', 'asc'], ['PropertyType', 'desc']] }),
      ok(O('PropertyType desc,MlsStatus asc,ModificationTimestamp desc'), all,
        { order: [['PropertyType', 'desc'], ['MlsStatus', 'asc'], ['ModificationTimestamp', 'desc']] }),
      ok(O('MlsStatus desc, ListingKey asc'), all, { order: [['MlsStatus', 'desc'], ['ListingKey', 'asc']] }),
      ok(O('PropertyType,DocumentsChangeTimestamp desc'), all, { order: [['PropertyType', 'asc'], ['DocumentsChangeTimestamp', 'desc']] }),
      ok(O('MlsStatus desc', '&$top=7'), all, { order: [['MlsStatus', 'desc']], top: 7 }),
      ok(O('ListingKey desc', "&$filter=MlsStatus eq 'Active'&$top=5"), (r) => r.MlsStatus === 'Active', { order: [['ListingKey', 'desc']], top: 5 }),
      ok(O('DocumentsChangeTimestamp', '&$top=10'), all, { order: [['DocumentsChangeTimestamp', 'asc']], top: 10 }),
      err(400, O('NoSuchField'), { target: 'NoSuchField' }),
      err(400, O('modificationtimestamp'), { target: 'modificationtimestamp' }),
      err(400, O('MlsStatus sideways'), { target: '$orderby' }),
      err(400, O('MlsStatus asc desc'), { target: '$orderby' }),
      err(400, O(''), { target: '$orderby' }),
      err(400, O('MlsStatus,'), { target: '$orderby' }),
      err(400, O('MlsStatus,MlsStatus desc')),
    ],
  },
  {
    title: '§4 Sorting rules for Property 1: "The default order is ModificationTimestamp"',
    rows: [
      ok('/Property', all, { order: [['ModificationTimestamp', 'asc']] }),
      ok(F("MlsStatus eq 'Active'"), (r) => r.MlsStatus === 'Active', { order: [['ModificationTimestamp', 'asc']] }),
      ok(F('ModificationTimestamp gt 2025-01-01T00:00:00Z'), (r) => MOD(r) > at('2025-01-01T00:00:00Z'), { order: [['ModificationTimestamp', 'asc']] }),
      ok('/Property?$top=5', all, { order: [['ModificationTimestamp', 'asc']], top: 5 }),
    ],
  },
  {
    title: '§4 Sorting rules for Property 2: "When the filter uses PhotosChangeTimestamp, the sort must be on PhotosChangeTimestamp"',
    rows: [
      ok(F('PhotosChangeTimestamp gt 2026-01-01T00:00:00Z'), (r) => PHO(r) !== undefined && PHO(r)! > T, { order: BY_PHOTOS }),
      ok(F("PhotosChangeTimestamp ge 2025-01-01T00:00:00Z and MlsStatus eq 'Active'"),
        (r) => PHO(r) !== undefined && PHO(r)! >= at('2025-01-01T00:00:00Z') && r.MlsStatus === 'Active', { order: BY_PHOTOS }),
      ok(F('PhotosChangeTimestamp gt 2025-01-01T00:00:00Z', '&$orderby=PhotosChangeTimestamp desc'),
        (r) => PHO(r) !== undefined && PHO(r)! > at('2025-01-01T00:00:00Z'), { order: [['PhotosChangeTimestamp', 'desc']] }),
      ok(F('PhotosChangeTimestamp gt 2025-01-01T00:00:00Z', '&$orderby=PhotosChangeTimestamp,ModificationTimestamp desc'),
        (r) => PHO(r) !== undefined && PHO(r)! > at('2025-01-01T00:00:00Z'), { order: [['PhotosChangeTimestamp', 'asc'], ['ModificationTimestamp', 'desc']] }),
      ok(F('PhotosChangeTimestamp gt 2025-01-01T00:00:00Z', '&$top=3'),
        (r) => PHO(r) !== undefined && PHO(r)! > at('2025-01-01T00:00:00Z'), { order: BY_PHOTOS, top: 3 }),
      err(501, F('PhotosChangeTimestamp gt 2025-01-01T00:00:00Z', '&$orderby=ModificationTimestamp'),
        { target: '$orderby', mentions: ['PhotosChangeTimestamp'] }),
      err(501, F('PhotosChangeTimestamp gt 2025-01-01T00:00:00Z', '&$orderby=MlsStatus desc'),
        { target: '$orderby', mentions: ['PhotosChangeTimestamp'] }),
    ],
  },
  {
    title: '§4 Sorting rules for Property 3: "When the filter uses DocumentsChangeTimestamp, the sort must be on DocumentsChangeTimestamp"',
    rows: [
      ok(F('DocumentsChangeTimestamp gt 2025-01-01T00:00:00Z'), (r) => DOC(r) !== undefined && DOC(r)! > at('2025-01-01T00:00:00Z'), { order: BY_DOCS }),
      ok(F('DocumentsChangeTimestamp ne null', '&$orderby=DocumentsChangeTimestamp desc'), (r) => DOC(r) !== undefined,
        { order: [['DocumentsChangeTimestamp', 'desc']] }),
      ok(F('DocumentsChangeTimestamp eq null', '&$top=4'), (r) => DOC(r) === undefined, { order: BY_DOCS, top: 4 }),
      ok(F('DocumentsChangeTimestamp gt 2025-01-01T00:00:00Z and PhotosChangeTimestamp gt 2025-01-01T00:00:00Z', '&$orderby=PhotosChangeTimestamp'),
        (r) => DOC(r) !== undefined && DOC(r)! > at('2025-01-01T00:00:00Z') && PHO(r) !== undefined && PHO(r)! > at('2025-01-01T00:00:00Z'),
        { order: BY_PHOTOS }),
      err(501, F('DocumentsChangeTimestamp gt 2025-01-01T00:00:00Z', '&$orderby=ModificationTimestamp desc'),
        { target: '$orderby', mentions: ['DocumentsChangeTimestamp'] }),
      err(501, F('DocumentsChangeTimestamp eq null', '&$orderby=PropertyType'),
        { target: '$orderby', mentions: ['DocumentsChangeTimestamp'] }),
    ],
  },
  {
    title: '§4 Sorting rules for Property 4: "Sorting on ListingKey is also allowed"',
    rows: [
      ok(F('PhotosChangeTimestamp gt 2025-01-01T00:00:00Z', '&$orderby=ListingKey'),
        (r) => PHO(r) !== undefined && PHO(r)! > at('2025-01-01T00:00:00Z'), { order: [['ListingKey', 'asc']] }),
      ok(F('DocumentsChangeTimestamp ne null', '&$orderby=ListingKey desc'), (r) => DOC(r) !== undefined, { order: [['ListingKey', 'desc']] }),
      ok(F("MlsStatus eq 'Closed'", '&$orderby=ListingKey desc'), (r) => r.MlsStatus === 'Closed', { order: [['ListingKey', 'desc']] }),
    ],
  },
  {
    title: '§4 Query options: $top "Supported; may be combined with $filter"',
    rows: [
      ok('/Property?$top=0', all, { top: 0 }),
      ok('/Property?$top=1', all, { top: 1 }),
      ok(F("MlsStatus eq 'Active'", '&$top=10'), (r) => r.MlsStatus === 'Active', { top: 10 }),
      ok(F("MlsStatus eq 'Hold'", '&$top=50'), (r) => r.MlsStatus === 'Hold', { top: 50 }),
      ok(F("MlsStatus eq 'Active'", '&$top=1000000'), (r) => r.MlsStatus === 'Active', { top: 1_000_000 }),
      ok(F('ModificationTimestamp gt 2026-01-01T00:00:00Z', '&$top=0&$count=true'), (r) => MOD(r) > T, { top: 0 }),
      err(400, '/Property?$top=-1', { target: '$top' }),
      err(400, '/Property?$top=abc', { target: '$top' }),
      err(400, '/Property?$top=1.5', { target: '$top' }),
      err(400, '/Property?$top=', { target: '$top' }),
      err(400, '/Property?$top=99999999999999999999', { target: '$top' }),
    ],
  },
  {
    title: '§4 Query options: $count "Supported; returns the total number of records" (and /Property/$count)',
    rows: [
      ok('/Property?$count=true', all),
      ok('/Property?$count=true&$top=1', all, { top: 1 }),
      ok(F("MlsStatus eq 'Active'", '&$count=true'), (r) => r.MlsStatus === 'Active'),
      ok(F("MlsStatus eq 'Active'", '&$count=true&$top=3&$select=ListingKey'), (r) => r.MlsStatus === 'Active', { top: 3, select: ['ListingKey'] }),
      ok(F('DocumentsChangeTimestamp eq null', '&$count=true'), (r) => DOC(r) === undefined, { order: BY_DOCS }),
      ok(F("MlsStatus eq 'Active'", '&$count=false'), (r) => r.MlsStatus === 'Active'),
      ok('/Property/$count', all),
      ok("/Property/$count?$filter=MlsStatus eq 'Active'", (r) => r.MlsStatus === 'Active'),
      ok('/Property/$count?$filter=DocumentsChangeTimestamp ne 2026-01-01T00:00:00Z', (r) => DOC(r) !== T),
      ok('/Property/$count?$filter=PhotosChangeTimestamp eq null', (r) => PHO(r) === undefined),
      ok("/Property/$count?$filter=MlsStatus eq 'nothing'", none),
      err(400, '/Property?$count=yes', { target: '$count' }),
      err(403, '/Property/$count?$filter=PrivateRemarks ne null', { target: 'PrivateRemarks' }),
      err(501, '/Property/$count?$filter=ListPrice gt 1', { target: 'ListPrice', mentionsAny: FILTERABLE }),
      err(400, '/Property/$count?$filter=NoSuchField eq 1', { target: 'NoSuchField' }),
    ],
  },
  {
    title: '§4 Query options: $select "Supported. Selecting only ListingKey keeps the payload minimal"',
    rows: [
      ok('/Property?$select=ListingKey', all, { select: ['ListingKey'] }),
      ok('/Property?$select=ListingKey,MlsStatus', all, { select: ['ListingKey', 'MlsStatus'] }),
      ok('/Property?$select=MlsStatus,ListingKey,ModificationTimestamp', all, { select: ['MlsStatus', 'ListingKey', 'ModificationTimestamp'] }),
      ok('/Property?$select=DocumentsChangeTimestamp,PhotosChangeTimestamp', all, { select: ['DocumentsChangeTimestamp', 'PhotosChangeTimestamp'] }),
      ok('/Property?$select=ListPrice,City,BedroomsTotal', all, { select: ['ListPrice', 'City', 'BedroomsTotal'] }),
      ok('/Property?$select=ListingKey,AccessibilityFeatures', all, { select: ['ListingKey', 'AccessibilityFeatures'] }),
      // Restricted fields may be read; only filtering and ordering on them is refused (§4 Query restrictions 3).
      ok('/Property?$select=ListingKey,PrivateRemarks', all, { select: ['ListingKey', 'PrivateRemarks'] }),
      ok('/Property?$select=OwnerName,ShowingInstructions,LockBoxSerialNumber', all, { select: ['OwnerName', 'ShowingInstructions', 'LockBoxSerialNumber'] }),
      ok('/Property?$select=*', all),
      ok(F("MlsStatus eq 'Pending'", '&$select=ListingKey,MlsStatus&$orderby=ListingKey desc'), (r) => r.MlsStatus === 'Pending',
        { select: ['ListingKey', 'MlsStatus'], order: [['ListingKey', 'desc']] }),
      ok(F('PhotosChangeTimestamp eq null', '&$select=ListingKey'), (r) => PHO(r) === undefined, { select: ['ListingKey'], order: BY_PHOTOS }),
      err(400, '/Property?$select=NoSuchField', { target: 'NoSuchField' }),
      err(400, '/Property?$select=Media', { target: 'Media' }),
      err(400, '/Property?$select=ListingKey/Foo'),
      err(400, '/Property?$select=', { target: '$select' }),
      err(400, '/Property?$select=ListingKey,,MlsStatus', { target: '$select' }),
    ],
  },
  {
    title: '§4 Query options: $expand "Supported on Property for the names listed in section 2" (errors; the expansions themselves: test/expand.test.ts)',
    rows: [
      err(501, '/Property?$expand=Media($skip=1)', { target: 'Media' }),
      err(501, '/Property?$expand=Media($expand=Listing)', { target: 'Media' }),
      err(501, '/Property?$expand=Media($count=true)', { target: 'Media' }),
      err(501, '/Property?$expand=*'),
      err(400, '/Property?$expand=NoSuchNavigation', { target: 'NoSuchNavigation' }),
      err(400, '/Property?$expand=media', { target: 'media' }),
      err(400, '/Property?$expand=Media,Media', { target: 'Media' }),
      err(400, '/Property?$expand=Media($select=NoSuchField)', { target: 'NoSuchField' }),
      err(501, '/Property?$expand=Media($filter=Order gt 3)', { target: 'Order' }),
    ],
  },
  {
    title: '§4 Query options: $skip "Not supported. Clients must not build their own $skip values" (§8 Paging)',
    rows: [
      err(501, '/Property?$skip=10', { target: '$skip', mentions: ['@odata.nextLink'] }),
      err(501, '/Property?$skip=0', { target: '$skip', mentions: ['@odata.nextLink'] }),
      err(501, F("MlsStatus eq 'Active'", '&$top=10&$skip=10'), { target: '$skip', mentions: ['@odata.nextLink'] }),
      err(501, '/Property?skip=5', { target: '$skip', mentions: ['@odata.nextLink'] }),
    ],
  },
  {
    title: '§4 Query restrictions 1: "Filtering and ordering work only on indexed fields" — names the set does not have (400)',
    rows: [
      err(400, F("NoSuchField eq 'x'"), { target: 'NoSuchField' }),
      err(400, F("ListingKey/Foo eq 'x'")),
      err(400, F("Listing/ListingKey eq 'x'"), { target: 'Listing' }),
      err(400, F("NoSuchField/any(x: x eq 'a')"), { target: 'NoSuchField' }),
      err(400, '/Property?$frobnicate=1', { target: '$frobnicate' }),
    ],
  },
  {
    title: '§4 Query restrictions 2: "A valid OData request that filters or orders on a field the service does not support for performance reasons returns 501"',
    rows: [
      ...NOT_INDEXED.map((f) => err(501, F(`${f} eq null`), { target: f, mentionsAny: FILTERABLE })),
      err(501, F('ListPrice gt 100000'), { target: 'ListPrice', mentionsAny: FILTERABLE }),
      err(501, F('BedroomsTotal ge 3'), { target: 'BedroomsTotal', mentionsAny: FILTERABLE }),
      err(501, F("City eq 'Seattle'"), { target: 'City', mentionsAny: FILTERABLE }),
      err(501, F("StandardStatus eq 'Active'"), { target: 'StandardStatus', mentionsAny: FILTERABLE }),
      err(501, F('InternetEntireListingDisplayYN eq true'), { target: 'InternetEntireListingDisplayYN', mentionsAny: FILTERABLE }),
      err(501, F("contains(City,'a')"), { target: 'City', mentionsAny: FILTERABLE }),
      err(501, F('ListPrice in (1, 2)'), { target: 'ListPrice', mentionsAny: FILTERABLE }),
      err(501, F('year(ListingContractDate) eq 2026'), { target: 'ListingContractDate', mentionsAny: FILTERABLE }),
      err(501, F("MlsStatus eq 'Active' and ListPrice gt 1"), { target: 'ListPrice', mentionsAny: FILTERABLE }),
      err(501, F("MlsStatus eq 'Active' or not (City eq 'x')"), { target: 'City', mentionsAny: FILTERABLE }),
      err(501, F("tolower(MlsStatus) eq tolower(StandardStatus)"), { target: 'StandardStatus', mentionsAny: FILTERABLE }),
      err(501, F("AccessibilityFeatures/any(a: a eq 'Accessible Bedroom')"), { target: 'AccessibilityFeatures', mentionsAny: FILTERABLE }),
      err(501, F('AccessibilityFeatures/any()'), { target: 'AccessibilityFeatures', mentionsAny: FILTERABLE }),
      err(501, F("Media/any(m: m/MediaKey eq 'x')"), { target: 'Media' }),
      err(501, F("Media/MediaKey eq 'x'"), { target: 'Media/MediaKey' }),
      err(501, O('ListPrice'), { target: 'ListPrice', mentionsAny: FILTERABLE }),
      err(501, O('BedroomsTotal desc'), { target: 'BedroomsTotal', mentionsAny: FILTERABLE }),
      err(501, O('City'), { target: 'City', mentionsAny: FILTERABLE }),
      err(501, O('StandardStatus desc'), { target: 'StandardStatus', mentionsAny: FILTERABLE }),
      err(501, O('ListingKey,ListPrice'), { target: 'ListPrice', mentionsAny: FILTERABLE }),
      err(501, O('tolower(MlsStatus)'), { target: '$orderby' }),
      err(501, O('Media'), { target: 'Media' }),
      // Arithmetic and functions that are valid OData but not offered.
      err(501, F('year(ModificationTimestamp) add 1 eq 2026'), { target: '$filter' }),
      err(501, F('length(MlsStatus) mul 2 eq 12'), { target: '$filter' }),
      err(501, F('-length(MlsStatus) eq -6'), { target: '$filter' }),
      err(501, F('length(MlsStatus) mod 2 eq 0'), { target: '$filter' }),
      err(501, F('year(ModificationTimestamp) sub 2000 gt 25'), { target: '$filter' }),
      err(501, F('length(MlsStatus) div 2 eq 3'), { target: '$filter' }),
      err(501, F("substring(MlsStatus,1) eq 'ctive'"), { target: '$filter' }),
      err(501, F("concat(MlsStatus,'x') eq 'Activex'"), { target: '$filter' }),
      err(501, F("indexof(MlsStatus,'A') eq 0"), { target: '$filter' }),
      err(501, F("matchesPattern(MlsStatus,'^A')"), { target: '$filter' }),
      err(501, F('fractionalseconds(ModificationTimestamp) gt 0'), { target: '$filter' }),
      err(501, F('ModificationTimestamp lt maxdatetime()'), { target: '$filter' }),
      err(501, F('ModificationTimestamp gt 2026-01-01T00:00:00Z add duration\'P1D\''), { target: '$filter' }),
      err(501, '/Property?$search=garden'),
      err(501, '/Property?$apply=groupby((MlsStatus))'),
      err(501, "/Property?$compute=tolower(MlsStatus) as m"),
    ],
  },
  {
    title: '§4 Query restrictions 3: "A request that filters or orders on a restricted field returns 403"',
    rows: [
      ...RESTRICTED.map((f) => err(403, F(`${f} eq 'x'`), { target: f, mentionsAny: FILTERABLE })),
      ...RESTRICTED.map((f) => err(403, O(f), { target: f, mentionsAny: FILTERABLE })),
      err(403, F('PrivateRemarks eq null'), { target: 'PrivateRemarks', mentionsAny: FILTERABLE }),
      err(403, F("contains(PrivateRemarks,'motivated')"), { target: 'PrivateRemarks', mentionsAny: FILTERABLE }),
      err(403, F("MlsStatus eq 'Active' and OwnerName eq 'x'"), { target: 'OwnerName', mentionsAny: FILTERABLE }),
      err(403, F("not (LockBoxSerialNumber eq '1')"), { target: 'LockBoxSerialNumber', mentionsAny: FILTERABLE }),
      err(403, F("ShowingInstructions in ('a','b')"), { target: 'ShowingInstructions', mentionsAny: FILTERABLE }),
      err(403, F("tolower(OwnerName) eq 'x'"), { target: 'OwnerName', mentionsAny: FILTERABLE }),
      err(403, O('ShowingInstructions desc'), { target: 'ShowingInstructions', mentionsAny: FILTERABLE }),
      err(403, O('ListingKey,OwnerName'), { target: 'OwnerName', mentionsAny: FILTERABLE }),
    ],
  },
  {
    title: '§4 Property endpoint: "Fields on which the Property endpoint can be queried" and the two filter shapes',
    rows: [
      // "The filter shape for an update query is: $filter=ModificationTimestamp gt '<timestamp>'"
      ok(F("ModificationTimestamp gt '2026-01-01T00:00:00Z'"), (r) => MOD(r) > T),
      ok(F("ModificationTimestamp gt '2025-12-31T23:59:59.999Z'"), (r) => MOD(r) > at(T0_MINUS_1MS)),
      // "The filter shape for a key query is: $filter=ListingKey eq '<ListingKey>'"
      ok(F("ListingKey eq 'L000042'"), (r) => r.ListingKey === 'L000042'),
      ok(F('PhotosChangeTimestamp gt 2026-03-01T00:00:00Z'), (r) => PHO(r) !== undefined && PHO(r)! > at('2026-03-01T00:00:00Z'), { order: BY_PHOTOS }),
      ok(F('DocumentsChangeTimestamp gt 2026-03-01T00:00:00Z'), (r) => DOC(r) !== undefined && DOC(r)! > at('2026-03-01T00:00:00Z'), { order: BY_DOCS }),
      ok(F("MlsStatus eq 'Withdrawn'"), (r) => r.MlsStatus === 'Withdrawn'),
      ok(F("PropertyType eq 'Residential Lease'"), (r) => r.PropertyType === 'Residential Lease'),
    ],
  },
  {
    title: '§4 Removed-listings check 1: "queries the whole licensed data set with $select=ListingKey"',
    rows: [
      ok('/Property?$select=ListingKey', all, { select: ['ListingKey'] }),
      ok('/Property?$select=ListingKey&$orderby=ListingKey', all, { select: ['ListingKey'], order: [['ListingKey', 'asc']] }),
      ok("/Property?$select=ListingKey&$filter=MlsStatus eq 'Delete'", (r) => r.MlsStatus === 'Delete', { select: ['ListingKey'] }),
    ],
  },
  {
    title: '§2 Resource sets: Members, Offices, OpenHouses, Media (and the Lookup and Field resources) take the same options',
    rows: [
      ok("/Member?$filter=MemberStatus eq 'Active'", (r) => r.MemberStatus === 'Active'),
      ok("/Members?$filter=MemberStatus eq 'Active'", (r) => r.MemberStatus === 'Active'),
      ok("/Members?$filter=OfficeKey eq 'OF00001'&$orderby=MemberKey desc", (r) => r.OfficeKey === 'OF00001', { order: [['MemberKey', 'desc']] }),
      ok('/Members?$filter=ModificationTimestamp gt 2026-01-01T00:00:00Z&$select=MemberKey,ModificationTimestamp',
        (r) => MOD(r) > T, { select: ['MemberKey', 'ModificationTimestamp'] }),
      ok("/Members/$count?$filter=startswith(MemberKey,'M0000')", (r) => r.MemberKey.startsWith('M0000')),
      err(501, "/Members?$filter=MemberFirstName eq 'Aisha'", { target: 'MemberFirstName', mentionsAny: ['MemberKey', 'ModificationTimestamp'] }),
      err(400, "/Members?$filter=ListingKey eq 'x'", { target: 'ListingKey' }),
      ok("/Office?$filter=OfficeStatus eq 'Active'", (r) => r.OfficeStatus === 'Active'),
      ok('/Offices?$orderby=OfficeKey desc', all, { order: [['OfficeKey', 'desc']] }),
      ok("/Offices?$filter=startswith(OfficeKey,'OF')&$count=true", (r) => r.OfficeKey.startsWith('OF')),
      ok("/OpenHouse?$filter=ListingKey eq 'L000002'", (r) => r.ListingKey === 'L000002'),
      ok("/OpenHouses?$filter=ListingKey in ('L000001','L000002','L000003')&$orderby=ListingKey,OpenHouseKey desc",
        (r) => ['L000001', 'L000002', 'L000003'].includes(r.ListingKey), { order: [['ListingKey', 'asc'], ['OpenHouseKey', 'desc']] }),
      // Listing expands (test/expand.test.ts), as one record: nothing to cut with $top.
      err(501, '/OpenHouses?$expand=Listing($top=1)', { target: 'Listing' }),
      ok("/Media?$filter=ResourceRecordKey eq 'L000001'", (r) => r.ResourceRecordKey === 'L000001'),
      ok("/Media?$filter=ResourceRecordKey eq 'L000001'&$orderby=MediaKey", (r) => r.ResourceRecordKey === 'L000001', { order: [['MediaKey', 'asc']] }),
      ok("/Media?$filter=ResourceRecordKey eq 'L000001'&$select=MediaKey,ResourceRecordKey", (r) => r.ResourceRecordKey === 'L000001',
        { select: ['MediaKey', 'ResourceRecordKey'] }),
      ok("/Media?$filter=ResourceRecordKey in ('L000001','L000002')&$top=5&$count=true", (r) => ['L000001', 'L000002'].includes(r.ResourceRecordKey), { top: 5 }),
      ok("/Media/$count?$filter=ResourceRecordKey eq 'L000001'", (r) => r.ResourceRecordKey === 'L000001'),
      ok('/Media?$filter=ModificationTimestamp gt 2026-05-01T00:00:00Z&$orderby=ModificationTimestamp desc&$top=20',
        (r) => MOD(r) > at('2026-05-01T00:00:00Z'), { order: [['ModificationTimestamp', 'desc']], top: 20 }),
      err(501, "/Media?$filter=MediaCategory eq 'Photo'", { target: 'MediaCategory', mentionsAny: ['ResourceRecordKey', 'ModificationTimestamp'] }),
      err(501, "/Media?$filter=Listing/ListingKey eq 'L000001'", { target: 'Listing/ListingKey' }),
      ok("/Lookup?$filter=LookupName eq 'StandardStatus'", (r) => r.LookupName === 'StandardStatus', {
        extra: (body) => {
          const standard = lookups.find((l) => l.name === 'StandardStatus')!.values.map((v) => v.value);
          expect(body.value.map((v: Rec) => v.LookupValue)).to.have.members(standard);
          for (const v of body.value) expect(standard, v.LookupValue).to.include(v.LookupValue);
        },
      }),
      ok("/Lookup?$filter=LookupName eq 'StandardStatus'&$orderby=LookupKey desc&$select=LookupKey,LookupValue", (r) => r.LookupName === 'StandardStatus',
        { order: [['LookupKey', 'desc']], select: ['LookupKey', 'LookupValue'] }),
      ok("/Lookup/$count?$filter=LookupName eq 'MlsStatus'", (r) => r.LookupName === 'MlsStatus'),
      ok("/Field?$filter=ResourceName eq 'Property'&$orderby=FieldKey", (r) => r.ResourceName === 'Property', {
        order: [['FieldKey', 'asc']],
        extra: (body) => expect(body.value).to.have.length(serviceModel.entitySets.find((s) => s.name === 'Property')!.fields.length),
      }),
      ok("/Field?$filter=ResourceName eq 'Media' and startswith(FieldKey,'Media.M')", (r) => r.ResourceName === 'Media' && r.FieldKey.startsWith('Media.M')),
      ok("/HistoryTransactional?$filter=ResourceRecordKey eq 'L000002'", (r) => r.ResourceRecordKey === 'L000002'),
      ok("/PropertyRooms?$filter=ListingKey eq 'L000003'&$orderby=RoomKey desc", (r) => r.ListingKey === 'L000003', { order: [['RoomKey', 'desc']] }),
      ok('/PropertyUnitTypes?$filter=ListingKey ne null', (r) => r.ListingKey != null),
    ],
  },
  {
    title: '§7 Errors: other statuses — unknown resource set (404), $filter too long (413), options given twice (400)',
    rows: [
      err(404, "/Properties?$filter=ListingKey eq 'L000001'"),
      err(404, "/property?$filter=ListingKey eq 'L000001'"),
      err(404, '/NoSuchSet?$top=1'),
      err(404, '/Property/NoSuchSegment'),
      err(413, F(filterOfLength(MAX_FILTER + 1)), { target: '$filter' }),
      err(413, F(filterOfLength(MAX_FILTER * 4)), { target: '$filter' }),
      err(413, `/Property/$count?$filter=${filterOfLength(MAX_FILTER + 1)}`, { target: '$filter' }),
      ok(F(filterOfLength(MAX_FILTER)), none),
      err(400, '/Property?$top=1&$top=2', { target: '$top' }),
      err(400, '/Property?$filter=true&$filter=false'),
      err(400, '/Property?$filter=true&filter=true'),
      err(400, '/Property?$orderby=ListingKey&$ORDERBY=ListingKey'),
      // Date parts of a literal are read in the literal's own offset (01:00+02:00 is still January 1st there).
      ok(F('day(2026-01-01T01:00:00%2B02:00) eq 1'), all),
      ok(F('day(2026-01-01T01:00:00%2B02:00) eq 31'), none),
      ok(F('hour(2026-01-01T01:00:00-05:00) eq 1'), all),
    ],
  },
];

describeRequestTable('Query options (spec §2, §4, §7): request table of the other options, restrictions and sorting rules', OPTIONS, 150);

describe('Query options (spec §4, §7): the request table covers every statement of spec §4 beyond $filter', () => {
  before(function () {
    requireShared(this);
  });
  const titledHere = (prefix: string) => titled(OPTIONS, prefix);

  it('every option of the "Query options" table but $filter (query-filter.test.ts) has its statement, with rows', () => {
    const options = [...specSection('### Query options').matchAll(/^\| (\$\w+) \|/gm)].map((m) => m[1]);
    expect(options).to.include.members(['$filter', '$orderby', '$count', '$top', '$select', '$expand', '$skip']);
    for (const o of options.filter((x) => x !== '$filter')) {
      const statements = titledHere(`§4 Query options: ${o} `);
      expect(statements, o).to.not.be.empty;
      expect(statements.reduce((n, s) => n + s.rows.length, 0), o).to.be.at.least(3);
    }
  });

  it('every numbered "Query restrictions" statement has its statement, with rows', () => {
    const numbers = [...specSection('### Query restrictions').matchAll(/^(\d+)\. /gm)].map((m) => m[1]);
    expect(numbers).to.deep.equal(['1', '2', '3']);
    for (const n of numbers) expect(titledHere(`§4 Query restrictions ${n}: `), `restriction ${n}`).to.have.length(1);
  });

  it('every field of the "Property endpoint" table and both filter shapes have rows', () => {
    const endpoint = specSection('### Property endpoint');
    const table = endpoint.slice(endpoint.indexOf('Fields on which'), endpoint.indexOf('The filter shape'));
    const fields = [...table.matchAll(/^\| (\w+) \|/gm)].map((m) => m[1]).filter((f) => f !== 'Field');
    expect(fields).to.have.members(FILTERABLE);
    const rows = titledHere('§4 Property endpoint').flatMap((s) => s.rows);
    for (const f of fields) expect(rows.some((r) => r.url.includes(`$filter=${f} `)), f).to.equal(true);
    expect(endpoint).to.include("$filter=ModificationTimestamp gt '<timestamp>'");
    expect(rows.some((r) => /\$filter=ModificationTimestamp gt '[^']+'$/.test(r.url)), 'update query shape').to.equal(true);
    expect(endpoint).to.include("$filter=ListingKey eq '<ListingKey>'");
    expect(rows.some((r) => /\$filter=ListingKey eq '[^']+'$/.test(r.url)), 'key query shape').to.equal(true);
  });

  it('every numbered "Sorting rules for Property" statement has its statement, with rows', () => {
    const endpoint = specSection('### Property endpoint');
    const rules = endpoint.slice(endpoint.indexOf('Sorting rules for Property:'), endpoint.indexOf('Expansion rules'));
    const numbers = [...rules.matchAll(/^(\d+)\. /gm)].map((m) => m[1]);
    expect(numbers).to.deep.equal(['1', '2', '3', '4']);
    for (const n of numbers) {
      const s = titledHere(`§4 Sorting rules for Property ${n}: `);
      expect(s, `sorting rule ${n}`).to.have.length(1);
      expect(s[0].rows.length, `sorting rule ${n}`).to.be.at.least(3);
    }
  });

  it('the removed-listings check and the §7 error table have rows', () => {
    expect(specSection('### Property endpoint')).to.include('$select=ListingKey');
    expect(titledHere('§4 Removed-listings check 1')).to.have.length(1);
    const statuses = new Set(OPTIONS.flatMap((s) => s.rows.map((r) => r.status)));
    for (const [, status] of specSection('## 7. Errors').matchAll(/^\| (\d{3}) /gm)) expect(statuses.has(Number(status)), status).to.equal(true);
  });
});
