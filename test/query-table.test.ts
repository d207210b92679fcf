/**
 * Query options over HTTP, table-driven, read against the listing service spec: §4 "Query options",
 * "Query restrictions", "Property endpoint", "Sorting rules", the removed-listings check, and §7 "Errors".
 *
 * Every row is one request. A 200 row carries a predicate written by hand (never the service's parser,
 * binder or translator); the oracle is the whole stored data set read straight from the tables, so each
 * answer is checked for soundness (every record satisfies the predicate), completeness (every record that
 * satisfies it is there, up to $top and the page), order (stated keys, then the key), projection and counts.
 * Error rows check the status, the OData error body, the target, and that 501/403 messages say what works.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { serviceModel } from '../generated';
import { lookups } from '../generated/lookups';
import type { RunningServer } from '../src/server';
import { seedDemoData } from '../src/seed/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, odataError, startTestServer } from './support/http';
import { requireShared, sharedPath } from './support/shared';
import {
  ALIASES, at, comparator, KEYS, loadRecords, ms, Order, PHOTOS_NULL_KEYS, plantEdgeCases, project, QUOTE_KEY, Rec,
  T0, T0_MINUS_1MS, T0_PLUS_1MS, UNICODE_KEY,
} from './support/query-data';

const PAGE = 1000;
const MAX_FILTER = 32 * 1024;

interface Row {
  /** Relative to the service root (/odata). Spaces and quotes are written plainly; '+' in an offset as %2B. */
  url: string;
  status: number;
  /** 200: the independent predicate every returned record must satisfy and every other record must fail. */
  check?: (r: Rec) => boolean;
  /** 200: stated order (default: ModificationTimestamp asc); the key ends it. */
  order?: Order;
  select?: string[];
  top?: number;
  /** Error: the expected target. */
  target?: string;
  /** Error: the message must contain every one of these. */
  mentions?: string[];
  /** Error: the message must contain at least one of these (what would work instead). */
  mentionsAny?: string[];
  /** Further checks of a 200 body. */
  extra?: (body: any) => void;
}

// ---- field values and predicates, by hand --------------------------------------------------------------

const MOD = (r: Rec) => ms(r.ModificationTimestamp)!;
const PHO = (r: Rec) => ms(r.PhotosChangeTimestamp);
const DOC = (r: Rec) => ms(r.DocumentsChangeTimestamp);
const utc = (v: number | undefined) => (v === undefined ? undefined : new Date(v));
const T = at(T0);
const HALF_MS = 0.5;
const all = () => true;
const none = () => false;

const FILTERABLE = ['ListingKey', 'ModificationTimestamp', 'PhotosChangeTimestamp', 'DocumentsChangeTimestamp', 'MlsStatus', 'PropertyType'];
const RESTRICTED = ['PrivateRemarks', 'ShowingInstructions', 'OwnerName', 'LockBoxSerialNumber'];
const NOT_INDEXED = ['ListPrice', 'BedroomsTotal', 'City', 'StandardStatus', 'PublicRemarks'];
const COLLECTIONS = new Set(serviceModel.entitySets.flatMap((s) => s.fields.filter((f) => f.collection).map((f) => f.name)));

const ok = (url: string, check: (r: Rec) => boolean, o: Partial<Row> = {}): Row => ({ url, status: 200, check, ...o });
const err = (status: number, url: string, o: Partial<Row> = {}): Row => ({ url, status, ...o });
/** A Property query with $filter (and more options after it). */
const F = (filter: string, more = '') => `/Property?$filter=${filter}${more}`;
const O = (orderby: string, more = '') => `/Property?$orderby=${orderby}${more}`;
const BY_PHOTOS: Order = [['PhotosChangeTimestamp', 'asc']];
const BY_DOCS: Order = [['DocumentsChangeTimestamp', 'asc']];

/** A filter of exactly n characters that is valid and matches nothing. */
const filterOfLength = (n: number) => `ListingKey eq '${'x'.repeat(n - "ListingKey eq ''".length)}'`;

// ---- the table, by spec statement ------------------------------------------------------------------------

interface Statement { title: string; rows: Row[] }

const SPEC: Statement[] = [
  {
    title: '§4 Query options: $filter "Supported on a subset of indexed fields" — comparison operators on ListingKey',
    rows: [
      ok(F("ListingKey eq 'L000005'"), (r) => r.ListingKey === 'L000005'),
      ok(F("ListingKey ne 'L000005'"), (r) => r.ListingKey !== 'L000005'),
      ok(F("ListingKey gt 'L000100'"), (r) => r.ListingKey > 'L000100'),
      ok(F("ListingKey ge 'L000119'"), (r) => r.ListingKey >= 'L000119'),
      ok(F("ListingKey lt 'L000010'"), (r) => r.ListingKey < 'L000010'),
      ok(F("ListingKey le 'L000002'"), (r) => r.ListingKey <= 'L000002'),
      ok(F("ListingKey eq 'no-such-listing'"), none),
      ok(F("ListingKey eq 'O''Brien-1'"), (r) => r.ListingKey === QUOTE_KEY),
      ok(F(`ListingKey eq '${UNICODE_KEY}'`), (r) => r.ListingKey === UNICODE_KEY),
      ok(F("ListingKey eq 'l000005'"), none),
      // Trailing blanks are part of a string value; no PAD SPACE equality.
      ok(F("ListingKey eq 'L000005 '"), none, {}),
      ok(F("ListingKey ne 'L000005 '"), all, {}),
      ok(F("'L000005' eq ListingKey"), (r) => r.ListingKey === 'L000005'),
      ok(F("'L000100' lt ListingKey"), (r) => r.ListingKey > 'L000100'),
      ok(F('ListingKey eq ListingKey'), all),
      ok(F('ListingKey ne ListingKey'), none),
    ],
  },
  {
    title: '§4 Query options: $filter — comparison operators on MlsStatus',
    rows: [
      ok(F("MlsStatus eq 'Active'"), (r) => r.MlsStatus === 'Active'),
      ok(F("MlsStatus ne 'Active'"), (r) => r.MlsStatus !== 'Active'),
      ok(F("MlsStatus eq 'Active Under Contract'"), (r) => r.MlsStatus === 'Active Under Contract'),
      ok(F("MlsStatus eq 'Delete'"), (r) => r.MlsStatus === 'Delete'),
      ok(F("MlsStatus gt 'Hold'"), (r) => r.MlsStatus > 'Hold'),
      ok(F("MlsStatus ge 'Pending'"), (r) => r.MlsStatus >= 'Pending'),
      ok(F("MlsStatus lt 'Canceled'"), (r) => r.MlsStatus < 'Canceled'),
      ok(F("MlsStatus le 'Closed'"), (r) => r.MlsStatus <= 'Closed'),
      ok(F("MlsStatus eq 'Active '"), none, {}),
      ok(F('MlsStatus eq null'), (r) => r.MlsStatus == null),
      ok(F('MlsStatus ne null'), (r) => r.MlsStatus != null),
      ok(F('null eq MlsStatus'), (r) => r.MlsStatus == null),
      ok(F('MlsStatus eq PropertyType'), (r) => r.MlsStatus === r.PropertyType),
    ],
  },
  {
    title: '§4 Query options: $filter — comparison operators on PropertyType',
    rows: [
      ok(F("PropertyType eq 'Residential'"), (r) => r.PropertyType === 'Residential'),
      ok(F("PropertyType ne 'Residential'"), (r) => r.PropertyType !== 'Residential'),
      ok(F("PropertyType gt 'Land'"), (r) => r.PropertyType > 'Land'),
      ok(F("PropertyType ge 'Residential Lease'"), (r) => r.PropertyType >= 'Residential Lease'),
      ok(F("PropertyType lt 'Farm'"), (r) => r.PropertyType < 'Farm'),
      ok(F("PropertyType le 'Farm'"), (r) => r.PropertyType <= 'Farm'),
      ok(F("PropertyType eq 'Commercial Sale' or PropertyType eq 'Commercial Lease'"), (r) => r.PropertyType.startsWith('Commercial ')),
    ],
  },
  {
    title: '§4 Query options: $filter — ModificationTimestamp: unquoted and the spec\'s quoted literal, offsets, fractions, dates',
    rows: [
      ok(F('ModificationTimestamp gt 2026-01-01T00:00:00Z'), (r) => MOD(r) > T),
      ok(F('ModificationTimestamp ge 2026-01-01T00:00:00Z'), (r) => MOD(r) >= T),
      ok(F('ModificationTimestamp lt 2026-01-01T00:00:00Z'), (r) => MOD(r) < T),
      ok(F('ModificationTimestamp le 2026-01-01T00:00:00Z'), (r) => MOD(r) <= T),
      ok(F('ModificationTimestamp eq 2026-01-01T00:00:00Z'), (r) => MOD(r) === T),
      ok(F('ModificationTimestamp ne 2026-01-01T00:00:00Z'), (r) => MOD(r) !== T),
      ok(F("ModificationTimestamp gt '2026-01-01T00:00:00Z'"), (r) => MOD(r) > T),
      ok(F("ModificationTimestamp eq '2026-01-01T00:00:00.000Z'"), (r) => MOD(r) === T),
      ok(F("ModificationTimestamp le '2025-12-31T23:59:59.999Z'"), (r) => MOD(r) <= at(T0_MINUS_1MS)),
      // Offsets: +02:00 must travel as %2B02:00 ('+' is a space in a query string); -05:00 as written.
      ok(F('ModificationTimestamp eq 2026-01-01T02:00:00%2B02:00'), (r) => MOD(r) === T),
      ok(F('ModificationTimestamp gt 2026-01-01T02:00:00%2B02:00'), (r) => MOD(r) > T),
      ok(F("ModificationTimestamp ge '2026-01-01T02:00:00.001%2B02:00'"), (r) => MOD(r) >= at(T0_PLUS_1MS)),
      ok(F('ModificationTimestamp lt 2025-12-31T19:00:00-05:00'), (r) => MOD(r) < T),
      ok(F('ModificationTimestamp eq 2025-12-31T19:00:00.001-05:00'), (r) => MOD(r) === at(T0_PLUS_1MS)),
      // A client that sends '+' raw: it arrives as a space, and the service reads it back as '+'.
      ok(F('ModificationTimestamp eq 2026-01-01T02:00:00+02:00'), (r) => MOD(r) === T),
      // Fractions: milliseconds, fewer digits, more digits.
      ok(F('ModificationTimestamp eq 2026-01-01T00:00:00.001Z'), (r) => MOD(r) === at(T0_PLUS_1MS)),
      ok(F('ModificationTimestamp gt 2025-12-31T23:59:59.999Z'), (r) => MOD(r) > at(T0_MINUS_1MS)),
      ok(F('ModificationTimestamp lt 2026-01-01T00:00:00.1Z'), (r) => MOD(r) < T + 100),
      ok(F('ModificationTimestamp eq 2026-01-01T00:00:00.000000000Z'), (r) => MOD(r) === T),
      ok(F('ModificationTimestamp eq 2026-01-01T00:00:00.0010Z'), (r) => MOD(r) === T + 1),
      ok(F('ModificationTimestamp ge 2026-01-01T00:00Z'), (r) => MOD(r) >= T),
      // Sub-millisecond literals: stored instants have milliseconds, so T+0.5ms lies strictly between two of them.
      ok(F('ModificationTimestamp gt 2026-01-01T00:00:00.0005Z'), (r) => MOD(r) > T + HALF_MS),
      ok(F('ModificationTimestamp ge 2026-01-01T00:00:00.0005Z'), (r) => MOD(r) >= T + HALF_MS),
      ok(F('ModificationTimestamp lt 2026-01-01T00:00:00.0005Z'), (r) => MOD(r) < T + HALF_MS),
      ok(F('ModificationTimestamp le 2026-01-01T00:00:00.0005Z'), (r) => MOD(r) <= T + HALF_MS),
      ok(F('ModificationTimestamp eq 2026-01-01T00:00:00.0005Z'), none),
      ok(F('ModificationTimestamp ne 2026-01-01T00:00:00.0005Z'), all),
      ok(F("ModificationTimestamp gt '2026-01-01T00:00:00.0005Z'"), (r) => MOD(r) > T + HALF_MS),
      ok(F('ModificationTimestamp gt 2026-01-01T00:00:00.0000001Z'), (r) => MOD(r) > T + 0.0001),
      ok(F('ModificationTimestamp le 2025-12-31T23:59:59.9995Z'), (r) => MOD(r) <= at(T0_MINUS_1MS) + HALF_MS),
      ok(F('ModificationTimestamp gt 2026-01-01T02:00:00.0005%2B02:00'), (r) => MOD(r) > T + HALF_MS),
      // A date literal meets a timestamp as midnight UTC of that date.
      ok(F('ModificationTimestamp ge 2026-01-01'), (r) => MOD(r) >= T),
      ok(F('ModificationTimestamp eq 2026-01-01'), (r) => MOD(r) === T),
      ok(F('ModificationTimestamp lt 2024-01-01'), (r) => MOD(r) < at('2024-01-01T00:00:00Z')),
      ok(F('ModificationTimestamp lt now()'), (r) => MOD(r) < Date.now()),
      ok(F('ModificationTimestamp gt now()'), (r) => MOD(r) > Date.now()),
      ok(F('ModificationTimestamp gt 2026-03-01T00:00:00Z and ModificationTimestamp lt 2026-04-01T00:00:00Z'),
        (r) => MOD(r) > at('2026-03-01T00:00:00Z') && MOD(r) < at('2026-04-01T00:00:00Z')),
    ],
  },
  {
    title: '§4 Query options: $filter — nullable PhotosChangeTimestamp and DocumentsChangeTimestamp (OData null semantics)',
    rows: [
      ok(F('PhotosChangeTimestamp eq null'), (r) => PHO(r) === undefined, { order: BY_PHOTOS }),
      ok(F('PhotosChangeTimestamp ne null'), (r) => PHO(r) !== undefined, { order: BY_PHOTOS }),
      ok(F('DocumentsChangeTimestamp eq null'), (r) => DOC(r) === undefined, { order: BY_DOCS }),
      ok(F('DocumentsChangeTimestamp ne null'), (r) => DOC(r) !== undefined, { order: BY_DOCS }),
      ok(F('null ne DocumentsChangeTimestamp'), (r) => DOC(r) !== undefined, { order: BY_DOCS }),
      ok(F('PhotosChangeTimestamp gt 2026-01-01T00:00:00Z'), (r) => PHO(r) !== undefined && PHO(r)! > T, { order: BY_PHOTOS }),
      ok(F('PhotosChangeTimestamp le 2026-01-01T00:00:00Z'), (r) => PHO(r) !== undefined && PHO(r)! <= T, { order: BY_PHOTOS }),
      ok(F('PhotosChangeTimestamp eq 2026-01-01T00:00:00Z'), (r) => PHO(r) === T, { order: BY_PHOTOS }),
      // `X ne v` is true when X is null.
      ok(F('PhotosChangeTimestamp ne 2026-01-01T00:00:00Z'), (r) => PHO(r) !== T, { order: BY_PHOTOS }),
      ok(F('DocumentsChangeTimestamp ne 2026-01-01T00:00:00Z'), (r) => DOC(r) !== T, { order: BY_DOCS }),
      ok(F('DocumentsChangeTimestamp ge 2026-01-01T00:00:00Z'), (r) => DOC(r) !== undefined && DOC(r)! >= T, { order: BY_DOCS }),
      ok(F('DocumentsChangeTimestamp lt 2026-01-01T00:00:00Z'), (r) => DOC(r) !== undefined && DOC(r)! < T, { order: BY_DOCS }),
      ok(F("DocumentsChangeTimestamp gt '2025-06-01T00:00:00Z'"), (r) => DOC(r) !== undefined && DOC(r)! > at('2025-06-01T00:00:00Z'), { order: BY_DOCS }),
      // `not (X eq v)` includes nulls; `not (X gt v)` too: gt with a null operand is false, and not false is true.
      ok(F('not (DocumentsChangeTimestamp eq 2026-01-01T00:00:00Z)'), (r) => !(DOC(r) === T), { order: BY_DOCS }),
      ok(F('not (DocumentsChangeTimestamp ne null)'), (r) => DOC(r) === undefined, { order: BY_DOCS }),
      ok(F('not (DocumentsChangeTimestamp gt 2026-01-01T00:00:00Z)'), (r) => !(DOC(r) !== undefined && DOC(r)! > T), { order: BY_DOCS }),
      ok(F('not (PhotosChangeTimestamp lt 2026-01-01T00:00:00Z)'), (r) => !(PHO(r) !== undefined && PHO(r)! < T), { order: BY_PHOTOS }),
      ok(F('DocumentsChangeTimestamp gt null'), none, { order: BY_DOCS }),
      ok(F('not (DocumentsChangeTimestamp gt null)'), all, { order: BY_DOCS }),
      ok(F('DocumentsChangeTimestamp lt 2030-01-01T00:00:00Z or DocumentsChangeTimestamp eq null'), all, { order: BY_DOCS }),
      // Sub-millisecond literals against a nullable field: `ne` is still true for null.
      ok(F('DocumentsChangeTimestamp ne 2026-01-01T00:00:00.0005Z'), all, { order: BY_DOCS }),
      ok(F('not (DocumentsChangeTimestamp ne 2026-01-01T00:00:00.0005Z)'), none, { order: BY_DOCS }),
      ok(F('not (DocumentsChangeTimestamp eq 2026-01-01T00:00:00.0005Z)'), all, { order: BY_DOCS }),
      ok(F('PhotosChangeTimestamp ge 2026-01-01T00:00:00.0005Z'), (r) => PHO(r) !== undefined && PHO(r)! > T + HALF_MS, { order: BY_PHOTOS }),
      // Two fields: null eq null is true, null ne a value is true, ordering comparisons with null are false.
      ok(F('DocumentsChangeTimestamp eq PhotosChangeTimestamp'), (r) => DOC(r) === PHO(r), { order: BY_DOCS }),
      ok(F('DocumentsChangeTimestamp ne PhotosChangeTimestamp'), (r) => DOC(r) !== PHO(r), { order: BY_DOCS }),
      ok(F('DocumentsChangeTimestamp gt PhotosChangeTimestamp'),
        (r) => DOC(r) !== undefined && PHO(r) !== undefined && DOC(r)! > PHO(r)!, { order: BY_DOCS }),
      ok(F('ModificationTimestamp ge PhotosChangeTimestamp'), (r) => PHO(r) !== undefined && MOD(r) >= PHO(r)!, { order: BY_PHOTOS }),
      ok(F('not (DocumentsChangeTimestamp gt PhotosChangeTimestamp)'),
        (r) => !(DOC(r) !== undefined && PHO(r) !== undefined && DOC(r)! > PHO(r)!), { order: BY_DOCS }),
    ],
  },
  {
    title: '§4 Query options: $filter — string functions (contains startswith endswith tolower toupper length trim)',
    rows: [
      ok(F("contains(MlsStatus,'Under')"), (r) => r.MlsStatus.includes('Under')),
      ok(F("contains(PropertyType,' ')"), (r) => r.PropertyType.includes(' ')),
      ok(F("contains(ListingKey,'''')"), (r) => r.ListingKey.includes("'")),
      ok(F("contains(ListingKey,'')"), all),
      ok(F("contains(MlsStatus,'%')"), none),
      ok(F("contains(ListingKey,'_')"), none),
      ok(F("contains(MlsStatus,'active')"), none),
      ok(F("not contains(MlsStatus,'Active')"), (r) => !r.MlsStatus.includes('Active')),
      ok(F("startswith(MlsStatus,'Act')"), (r) => r.MlsStatus.startsWith('Act')),
      ok(F("startswith(ListingKey,'L00001')"), (r) => r.ListingKey.startsWith('L00001')),
      ok(F("startswith(ListingKey,'O''')"), (r) => r.ListingKey.startsWith("O'")),
      ok(F("startswith(ListingKey,'Ü')"), (r) => r.ListingKey.startsWith('Ü')),
      ok(F("startswith(MlsStatus,'%')"), none),
      ok(F("startswith(MlsStatus,'Active ')"), (r) => r.MlsStatus.startsWith('Active '), {}),
      ok(F("startswith(ListingKey,'')"), all),
      ok(F("endswith(MlsStatus,'ed')"), (r) => r.MlsStatus.endsWith('ed')),
      ok(F("endswith(PropertyType,'Lease')"), (r) => r.PropertyType.endsWith('Lease')),
      ok(F("endswith(ListingKey,'-1')"), (r) => r.ListingKey.endsWith('-1')),
      ok(F("endswith(ListingKey,'')"), all),
      ok(F("tolower(MlsStatus) eq 'active'"), (r) => r.MlsStatus.toLowerCase() === 'active'),
      ok(F("toupper(MlsStatus) eq 'ACTIVE UNDER CONTRACT'"), (r) => r.MlsStatus.toUpperCase() === 'ACTIVE UNDER CONTRACT'),
      ok(F("contains(tolower(PropertyType),'lease')"), (r) => r.PropertyType.toLowerCase().includes('lease')),
      ok(F("tolower(ListingKey) eq 'l000005'"), (r) => r.ListingKey.toLowerCase() === 'l000005'),
      // tolower/toupper follow Unicode rules (OData 4.01 part 2, "tolower").
      ok(F(`tolower(ListingKey) eq '${UNICODE_KEY.toLowerCase()}'`), (r) => r.ListingKey.toLowerCase() === UNICODE_KEY.toLowerCase(), {}),
      ok(F(`toupper(ListingKey) eq '${UNICODE_KEY.toUpperCase()}'`), (r) => r.ListingKey.toUpperCase() === UNICODE_KEY.toUpperCase(), {}),
      ok(F('length(MlsStatus) eq 6'), (r) => r.MlsStatus.length === 6),
      ok(F('length(PropertyType) gt 10'), (r) => r.PropertyType.length > 10),
      ok(F('length(ListingKey) eq 9'), (r) => [...r.ListingKey].length === 9),
      ok(F('length(ListingKey) le 7'), (r) => [...r.ListingKey].length <= 7),
      ok(F("trim(MlsStatus) eq 'Active'"), (r) => r.MlsStatus.trim() === 'Active'),
      ok(F('trim(PropertyType) eq PropertyType'), (r) => r.PropertyType.trim() === r.PropertyType),
      ok(F('length(trim(MlsStatus)) gt 6'), (r) => r.MlsStatus.trim().length > 6),
      ok(F("toupper(tolower(MlsStatus)) eq 'PENDING'"), (r) => r.MlsStatus.toUpperCase() === 'PENDING'),
      // Boolean functions as operands (MariaDB gives every comparison operator one precedence).
      ok(F("contains(MlsStatus,'Active') eq contains(PropertyType,'Lease')"), (r) => r.MlsStatus.includes('Active') === r.PropertyType.includes('Lease')),
      ok(F("startswith(MlsStatus,'Act') ne true"), (r) => !r.MlsStatus.startsWith('Act')),
    ],
  },
  {
    title: '§4 Query options: $filter — date and time functions (year month day hour minute second date time now)',
    rows: [
      ok(F('year(ModificationTimestamp) eq 2025'), (r) => utc(MOD(r))!.getUTCFullYear() === 2025),
      ok(F('year(ModificationTimestamp) lt 2024'), (r) => utc(MOD(r))!.getUTCFullYear() < 2024),
      ok(F('month(ModificationTimestamp) eq 12 and day(ModificationTimestamp) eq 31'),
        (r) => utc(MOD(r))!.getUTCMonth() === 11 && utc(MOD(r))!.getUTCDate() === 31),
      ok(F('month(ModificationTimestamp) ge 10'), (r) => utc(MOD(r))!.getUTCMonth() + 1 >= 10),
      ok(F('day(ModificationTimestamp) eq 1'), (r) => utc(MOD(r))!.getUTCDate() === 1),
      ok(F('hour(ModificationTimestamp) lt 6'), (r) => utc(MOD(r))!.getUTCHours() < 6),
      ok(F('minute(ModificationTimestamp) eq 0 and second(ModificationTimestamp) eq 0'),
        (r) => utc(MOD(r))!.getUTCMinutes() === 0 && utc(MOD(r))!.getUTCSeconds() === 0),
      ok(F('second(ModificationTimestamp) ge 30'), (r) => utc(MOD(r))!.getUTCSeconds() >= 30),
      ok(F('year(PhotosChangeTimestamp) lt 2020'), (r) => PHO(r) !== undefined && utc(PHO(r))!.getUTCFullYear() < 2020, { order: BY_PHOTOS }),
      ok(F('year(DocumentsChangeTimestamp) eq 2026'), (r) => DOC(r) !== undefined && utc(DOC(r))!.getUTCFullYear() === 2026, { order: BY_DOCS }),
      ok(F('year(DocumentsChangeTimestamp) ne 2026'), (r) => !(DOC(r) !== undefined && utc(DOC(r))!.getUTCFullYear() === 2026), { order: BY_DOCS }),
      ok(F('not (year(DocumentsChangeTimestamp) gt 2025)'), (r) => !(DOC(r) !== undefined && utc(DOC(r))!.getUTCFullYear() > 2025), { order: BY_DOCS }),
      ok(F('date(ModificationTimestamp) eq 2026-01-01'), (r) => new Date(MOD(r)).toISOString().slice(0, 10) === '2026-01-01'),
      ok(F('date(ModificationTimestamp) ge 2026-05-01'), (r) => MOD(r) >= at('2026-05-01T00:00:00Z')),
      ok(F('time(ModificationTimestamp) lt 06:00:00'), (r) => utc(MOD(r))!.getUTCHours() < 6),
      ok(F('time(ModificationTimestamp) eq 00:00:00'), (r) => MOD(r) % 86_400_000 === 0),
      ok(F('date(ModificationTimestamp) eq date(PhotosChangeTimestamp)'),
        (r) => PHO(r) !== undefined && new Date(MOD(r)).toISOString().slice(0, 10) === new Date(PHO(r)!).toISOString().slice(0, 10), { order: BY_PHOTOS }),
      ok(F('year(ModificationTimestamp) eq year(now())'), (r) => utc(MOD(r))!.getUTCFullYear() === new Date().getUTCFullYear()),
    ],
  },
  {
    title: '§4 Query options: $filter — in lists',
    rows: [
      ok(F("ListingKey in ('L000001','L000002','L000003','no-such')"), (r) => ['L000001', 'L000002', 'L000003'].includes(r.ListingKey)),
      ok(F("ListingKey in ('L000007')"), (r) => r.ListingKey === 'L000007'),
      ok(F("ListingKey in ('O''Brien-1', 'Ünïcödé-1')"), (r) => r.ListingKey === QUOTE_KEY || r.ListingKey === UNICODE_KEY),
      ok(F("MlsStatus in ('Active','Pending','Closed')"), (r) => ['Active', 'Pending', 'Closed'].includes(r.MlsStatus)),
      ok(F("MlsStatus in ('Active ')"), none, {}),
      ok(F("PropertyType in ('Farm','Land') and MlsStatus in ('Active')"), (r) => ['Farm', 'Land'].includes(r.PropertyType) && r.MlsStatus === 'Active'),
      ok(F("not (MlsStatus in ('Active','Closed'))"), (r) => !['Active', 'Closed'].includes(r.MlsStatus)),
      ok(F("tolower(MlsStatus) in ('active','hold')"), (r) => ['active', 'hold'].includes(r.MlsStatus.toLowerCase())),
      ok(F('ModificationTimestamp in (2026-01-01T00:00:00Z, 2026-01-01T00:00:00.001Z)'), (r) => MOD(r) === T || MOD(r) === T + 1),
      ok(F("ModificationTimestamp in ('2026-01-01T02:00:00%2B02:00')"), (r) => MOD(r) === T),
      ok(F('DocumentsChangeTimestamp in (2026-01-01T00:00:00Z)'), (r) => DOC(r) === T, { order: BY_DOCS }),
      ok(F('not (DocumentsChangeTimestamp in (2026-01-01T00:00:00Z))'), (r) => DOC(r) !== T, { order: BY_DOCS }),
      ok(F('year(ModificationTimestamp) in (2023, 2024)'), (r) => [2023, 2024].includes(utc(MOD(r))!.getUTCFullYear())),
    ],
  },
  {
    title: '§4 Query options: $filter "Several criteria can be combined" — and, or, not, parentheses, precedence',
    rows: [
      ok(F("MlsStatus eq 'Active' and PropertyType eq 'Residential'"), (r) => r.MlsStatus === 'Active' && r.PropertyType === 'Residential'),
      ok(F("MlsStatus eq 'Pending' or MlsStatus eq 'Closed'"), (r) => r.MlsStatus === 'Pending' || r.MlsStatus === 'Closed'),
      ok(F("not (MlsStatus eq 'Active')"), (r) => r.MlsStatus !== 'Active'),
      // ABNF: notExpr = "not" RWS boolCommonExpr, so `not A eq B` negates the comparison.
      ok(F("not MlsStatus eq 'Active'"), (r) => r.MlsStatus !== 'Active'),
      ok(F("not (not (MlsStatus eq 'Active'))"), (r) => r.MlsStatus === 'Active'),
      ok(F("MlsStatus eq 'Active' or MlsStatus eq 'Pending' and PropertyType eq 'Farm'"),
        (r) => r.MlsStatus === 'Active' || (r.MlsStatus === 'Pending' && r.PropertyType === 'Farm')),
      ok(F("(MlsStatus eq 'Active' or MlsStatus eq 'Pending') and PropertyType eq 'Farm'"),
        (r) => (r.MlsStatus === 'Active' || r.MlsStatus === 'Pending') && r.PropertyType === 'Farm'),
      ok(F("not (MlsStatus eq 'Active' or PropertyType eq 'Residential')"), (r) => !(r.MlsStatus === 'Active' || r.PropertyType === 'Residential')),
      ok(F("not (MlsStatus eq 'Active' and PropertyType eq 'Residential')"), (r) => !(r.MlsStatus === 'Active' && r.PropertyType === 'Residential')),
      ok(F("not (MlsStatus eq 'Active') and not (PropertyType eq 'Residential')"), (r) => r.MlsStatus !== 'Active' && r.PropertyType !== 'Residential'),
      ok(F("((((MlsStatus eq 'Hold'))))"), (r) => r.MlsStatus === 'Hold'),
      ok(F("(MlsStatus eq 'Active')and(PropertyType eq 'Farm')"), (r) => r.MlsStatus === 'Active' && r.PropertyType === 'Farm'),
      ok(F("MlsStatus  eq  'Active'   and   PropertyType eq 'Land'"), (r) => r.MlsStatus === 'Active' && r.PropertyType === 'Land'),
      ok(F('ModificationTimestamp gt 2025-06-01T00:00:00Z and (MlsStatus eq \'Closed\' or not (PropertyType ne \'Farm\'))'),
        (r) => MOD(r) > at('2025-06-01T00:00:00Z') && (r.MlsStatus === 'Closed' || r.PropertyType === 'Farm')),
      ok(F("ListingKey eq 'L000001' or ListingKey eq 'L000002' or ListingKey eq 'L000003' or ListingKey eq 'L000004'"),
        (r) => ['L000001', 'L000002', 'L000003', 'L000004'].includes(r.ListingKey)),
      ok(F('true'), all),
      ok(F('false'), none),
      ok(F('not true'), none),
      ok(F("true and MlsStatus eq 'Active'"), (r) => r.MlsStatus === 'Active'),
      ok(F("false or MlsStatus eq 'Hold'"), (r) => r.MlsStatus === 'Hold'),
      ok(F('null eq null'), all),
      ok(F("MlsStatus eq 'Active' and (PhotosChangeTimestamp eq null or DocumentsChangeTimestamp ne null)"),
        (r) => r.MlsStatus === 'Active' && (PHO(r) === undefined || DOC(r) !== undefined), { order: BY_DOCS }),
    ],
  },
  {
    title: '§4 Query options: $filter — values are case-sensitive; operators, functions and option names are not (OData 4.01)',
    rows: [
      ok(F("MlsStatus eq 'active'"), none),
      ok(F("MlsStatus eq 'ACTIVE'"), none),
      ok(F("startswith(MlsStatus,'act')"), none),
      ok(F("MlsStatus EQ 'Active' And PropertyType Eq 'Residential'"), (r) => r.MlsStatus === 'Active' && r.PropertyType === 'Residential'),
      ok(F("NOT (MlsStatus eq 'Active') OR PropertyType EQ 'Farm'"), (r) => r.MlsStatus !== 'Active' || r.PropertyType === 'Farm'),
      ok(F("MlsStatus In ('Pending','Hold')"), (r) => ['Pending', 'Hold'].includes(r.MlsStatus)),
      ok(F('DocumentsChangeTimestamp EQ NULL'), (r) => DOC(r) === undefined, { order: BY_DOCS }),
      ok(F('ModificationTimestamp GT 2026-01-01T00:00:00Z'), (r) => MOD(r) > T),
      ok(F("ToLower(MlsStatus) eq 'pending'"), (r) => r.MlsStatus.toLowerCase() === 'pending'),
      ok(F('YEAR(ModificationTimestamp) eq 2024'), (r) => utc(MOD(r))!.getUTCFullYear() === 2024),
      ok(F('TRUE'), all),
      ok("/Property?$FILTER=MlsStatus eq 'Hold'", (r) => r.MlsStatus === 'Hold'),
      ok("/Property?filter=MlsStatus eq 'Hold'", (r) => r.MlsStatus === 'Hold'),
      ok('/Property?$OrderBy=ListingKey desc&$Top=3', all, { order: [['ListingKey', 'desc']], top: 3 }),
      err(400, F("listingkey eq 'L000001'"), { target: 'listingkey' }),
    ],
  },
  {
    title: '§7 Errors (400): a $filter that is not valid OData — syntax, unknown functions, bad literals, type mismatches',
    rows: [
      err(400, F("MlsStatus eq 5"), { target: '$filter' }),
      err(400, F('MlsStatus eq true'), { target: '$filter' }),
      err(400, F("MlsStatus eq 2026-01-01T00:00:00Z"), { target: '$filter' }),
      err(400, F("ListingKey gt 5"), { target: '$filter' }),
      err(400, F("ModificationTimestamp gt 'yesterday'"), { target: '$filter' }),
      err(400, F("ModificationTimestamp gt '2026-01-01T00:00:00'"), { target: '$filter' }),
      err(400, F('ModificationTimestamp gt 2026-02-30T00:00:00Z'), { target: '$filter' }),
      err(400, F('ModificationTimestamp gt 2026-13-01T00:00:00Z'), { target: '$filter' }),
      err(400, F('ModificationTimestamp gt 2026-01-01T24:00:00Z'), { target: '$filter' }),
      err(400, F('ModificationTimestamp gt 2026-01-01T00:00:00%2B25:00'), { target: '$filter' }),
      err(400, F('ModificationTimestamp gt 2026-01-01T00:00:00'), { target: '$filter' }),
      err(400, F('ModificationTimestamp gt 5'), { target: '$filter' }),
      err(400, F('ModificationTimestamp eq true'), { target: '$filter' }),
      err(400, F('ModificationTimestamp eq 12:00:00'), { target: '$filter' }),
      err(400, F("year(ModificationTimestamp) eq '2025'"), { target: '$filter' }),
      err(400, F('year(MlsStatus) eq 2026'), { target: '$filter' }),
      err(400, F("contains(ModificationTimestamp,'2026')"), { target: '$filter' }),
      err(400, F('length(ModificationTimestamp) eq 24'), { target: '$filter' }),
      err(400, F("tolower(ModificationTimestamp) eq 'x'"), { target: '$filter' }),
      err(400, F('contains(MlsStatus)'), { target: '$filter' }),
      err(400, F("tolower(MlsStatus,'x') eq 'x'"), { target: '$filter' }),
      err(400, F('ModificationTimestamp lt now(1)'), { target: '$filter' }),
      err(400, F("frobnicate(MlsStatus) eq 'x'"), { target: '$filter' }),
      err(400, F('MlsStatus'), { target: '$filter' }),
      err(400, F("'Active'"), { target: '$filter' }),
      err(400, F('5'), { target: '$filter' }),
      err(400, F('MlsStatus eq'), { target: '$filter' }),
      err(400, F("eq 'Active'"), { target: '$filter' }),
      err(400, F("MlsStatus eq 'Active"), { target: '$filter' }),
      err(400, F("(MlsStatus eq 'Active'"), { target: '$filter' }),
      err(400, F("MlsStatus eq 'Active')"), { target: '$filter' }),
      err(400, F("MlsStatus eq 'Active' and"), { target: '$filter' }),
      err(400, F("and MlsStatus eq 'Active'"), { target: '$filter' }),
      err(400, F("MlsStatus eq 'Active' MlsStatus"), { target: '$filter' }),
      err(400, F('MlsStatus eq "Active"'), { target: '$filter' }),
      err(400, F("MlsStatus eq'Active'"), { target: '$filter' }),
      err(400, F("MlsStatus == 'Active'"), { target: '$filter' }),
      err(400, F("MlsStatus eq 'Active' %26%26 PropertyType eq 'Farm'"), { target: '$filter' }),
      err(400, F("MlsStatus has 'Active'"), { target: '$filter' }),
      err(400, F("ListingKey in ()"), { target: '$filter' }),
      err(400, F("ListingKey in 'L000001'"), { target: '$filter' }),
      err(400, F('ListingKey in (MlsStatus)'), { target: '$filter' }),
      err(400, F('MlsStatus in (1, 2)'), { target: '$filter' }),
      err(400, F('@p eq 1'), { target: '$filter' }),
      err(400, F(''), { target: '$filter' }),
      err(400, F('   '), { target: '$filter' }),
    ],
  },
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
      err(501, '/OpenHouses?$expand=Listing', { target: 'Listing' }),
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

// ---- runner ---------------------------------------------------------------------------------------------

function setOf(url: string): string {
  const first = url.split('?')[0].replace(/^\//, '').split('/')[0];
  return ALIASES[first] ?? first;
}

const rowCount = SPEC.reduce((n, s) => n + s.rows.length, 0);

describeEachDatabase('Query options (spec §4, §7): request table', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  const data: Record<string, Rec[]> = {};

  before(async function () {
    this.timeout(300_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: PAGE, maxFilterLength: MAX_FILTER });
    await seedDemoData(server.service, { listings: 120 });
    await plantEdgeCases(server.service);
    for (const set of Object.keys(KEYS)) data[set] = await loadRecords(server.service, set);
    base = server.url;
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  it(`the table has at least 150 requests (${rowCount}) and the data has the edge cases it relies on`, () => {
    expect(rowCount).to.be.at.least(150);
    const p = data.Property;
    expect(p).to.have.length(122);
    expect(p.filter((r) => PHO(r) === undefined).map((r) => r.ListingKey)).to.have.members(PHOTOS_NULL_KEYS);
    expect(p.filter((r) => DOC(r) === undefined).length).to.be.within(10, 115);
    expect(p.filter((r) => MOD(r) === T)).to.have.length(1);
    expect(new Set(p.map((r) => r.MlsStatus)).size).to.be.at.least(5);
  });

  for (const statement of SPEC) {
    describe(statement.title, () => {
      for (const row of statement.rows) {
        const shown = row.url.length > 160 ? `${row.url.slice(0, 120)}… (${row.url.length} chars)` : row.url;
        const title = `${row.status} ← GET ${shown}`;
        it(title, async () => {
          const r = await get(`${base}${row.url}`);
          const where = `GET ${shown} → ${r.status} ${r.text.slice(0, 400)}`;
          expect(r.status, where).to.equal(row.status);
          if (row.status === 200) checkSuccess(row, r, where);
          else checkError(row, r, where);
        });
      }
    });
  }

  function checkSuccess(row: Row, r: { text: string; json: any; headers: Headers }, where: string): void {
    const set = setOf(row.url);
    const key = KEYS[set];
    const matches = data[set].filter(row.check!);
    const countPath = /\/\$count(\?|$)/.test(row.url);
    if (countPath) {
      expect(r.headers.get('content-type'), where).to.match(/^text\/plain/);
      expect(r.text.trim(), where).to.equal(String(matches.length));
      return;
    }
    const body = r.json;
    expect(body, where).to.be.an('object');
    expect(body.value, where).to.be.an('array');
    const limit = Math.min(row.top ?? Infinity, PAGE);
    const expected = [...matches].sort(comparator(row.order ?? [['ModificationTimestamp', 'asc']], key)).slice(0, limit);
    expect(body.value.length, `${where}\nrecord count`).to.equal(expected.length);

    if (row.select) {
      for (const rec of body.value) expect(Object.keys(rec), where).to.have.members(row.select);
      const want = expected.map((e) => project(e, row.select!, COLLECTIONS));
      if (row.select.includes(key)) {
        const got = body.value.map((v: Rec) => v[key]);
        expect([...got].sort(), `${where}\nthe set of records`).to.deep.equal(want.map((w) => w[key]).sort());
        expect(got, `${where}\nthe order`).to.deep.equal(want.map((w) => w[key]));
      }
      expect(body.value, `${where}\nprojected records`).to.deep.equal(want);
    } else {
      const unsound = body.value.filter((v: Rec) => !row.check!(v)).map((v: Rec) => v[key]);
      expect(unsound, `${where}\nrecords that fail the predicate`).to.deep.equal([]);
      const got = body.value.map((v: Rec) => v[key]);
      if (limit >= matches.length) {
        const missing = expected.map((e) => e[key]).filter((k) => !got.includes(k));
        expect(missing, `${where}\nrecords that satisfy the predicate but are missing`).to.deep.equal([]);
      }
      expect(got, `${where}\nthe order`).to.deep.equal(expected.map((e) => e[key]));
      expect(body.value, `${where}\nrecords as stored`).to.deep.equal(expected);
    }

    if (/[?&]\$?count=true(&|$)/i.test(row.url)) expect(body['@odata.count'], `${where}\n@odata.count`).to.equal(matches.length);
    else expect(body, where).not.to.have.property('@odata.count');
    row.extra?.(body);
  }

  function checkError(row: Row, r: { json: any; headers: Headers; status: number; text: string }, where: string): void {
    expect(r.headers.get('content-type'), where).to.match(/^application\/json/);
    const e = odataError(r as any);
    expect(e.code, where).to.be.a('string').and.not.equal('');
    expect(e.message, where).to.be.a('string').and.not.equal('');
    expect(e.details, where).to.be.an('array');
    if (row.target !== undefined) expect(e.target, `${where}\ntarget`).to.equal(row.target);
    for (const m of row.mentions ?? []) expect(e.message, `${where}\nthe message should mention ${m}`).to.include(m);
    if (row.mentionsAny) {
      const usable = row.mentionsAny.filter((m) => m !== row.target);
      expect(usable.some((m) => e.message.includes(m)),
        `${where}\nthe message should say what would work (name one of ${usable.join(', ')})`).to.equal(true);
    }
  }
});


describe('Query options (spec §4, §7): the request table covers every statement of spec §4', () => {
  let spec = '';
  before(function () {
    requireShared(this);
    spec = readFileSync(sharedPath('spec', 'listing-service-spec.md'), 'utf8');
  });
  /** The text from a heading to the next heading of any level. */
  const section = (heading: string) => {
    const start = spec.indexOf(`\n${heading}\n`);
    expect(start, heading).to.be.greaterThan(-1);
    const rest = spec.slice(start + heading.length + 2);
    const end = rest.search(/\n#{2,3} /);
    return end < 0 ? rest : rest.slice(0, end);
  };
  const titled = (prefix: string) => SPEC.filter((s) => s.title.startsWith(prefix));

  it('every option of the "Query options" table has its statement, with rows', () => {
    const options = [...section('### Query options').matchAll(/^\| (\$\w+) \|/gm)].map((m) => m[1]);
    expect(options).to.include.members(['$filter', '$orderby', '$count', '$top', '$select', '$expand', '$skip']);
    for (const o of options) {
      const statements = titled(`§4 Query options: ${o} `);
      expect(statements, o).to.not.be.empty;
      expect(statements.reduce((n, s) => n + s.rows.length, 0), o).to.be.at.least(3);
    }
  });

  it('every numbered "Query restrictions" statement has its statement, with rows', () => {
    const numbers = [...section('### Query restrictions').matchAll(/^(\d+)\. /gm)].map((m) => m[1]);
    expect(numbers).to.deep.equal(['1', '2', '3']);
    for (const n of numbers) expect(titled(`§4 Query restrictions ${n}: `), `restriction ${n}`).to.have.length(1);
  });

  it('every field of the "Property endpoint" table and both filter shapes have rows', () => {
    const endpoint = section('### Property endpoint');
    const table = endpoint.slice(endpoint.indexOf('Fields on which'), endpoint.indexOf('The filter shape'));
    const fields = [...table.matchAll(/^\| (\w+) \|/gm)].map((m) => m[1]).filter((f) => f !== 'Field');
    expect(fields).to.have.members(FILTERABLE);
    const rows = titled('§4 Property endpoint').flatMap((s) => s.rows);
    for (const f of fields) expect(rows.some((r) => r.url.includes(`$filter=${f} `)), f).to.equal(true);
    expect(endpoint).to.include("$filter=ModificationTimestamp gt '<timestamp>'");
    expect(rows.some((r) => /\$filter=ModificationTimestamp gt '[^']+'$/.test(r.url)), 'update query shape').to.equal(true);
    expect(endpoint).to.include("$filter=ListingKey eq '<ListingKey>'");
    expect(rows.some((r) => /\$filter=ListingKey eq '[^']+'$/.test(r.url)), 'key query shape').to.equal(true);
  });

  it('every numbered "Sorting rules for Property" statement has its statement, with rows', () => {
    const endpoint = section('### Property endpoint');
    const rules = endpoint.slice(endpoint.indexOf('Sorting rules for Property:'), endpoint.indexOf('Expansion rules'));
    const numbers = [...rules.matchAll(/^(\d+)\. /gm)].map((m) => m[1]);
    expect(numbers).to.deep.equal(['1', '2', '3', '4']);
    for (const n of numbers) {
      const s = titled(`§4 Sorting rules for Property ${n}: `);
      expect(s, `sorting rule ${n}`).to.have.length(1);
      expect(s[0].rows.length, `sorting rule ${n}`).to.be.at.least(3);
    }
  });

  it('the removed-listings check and the §7 error table have rows', () => {
    expect(section('### Property endpoint')).to.include('$select=ListingKey');
    expect(titled('§4 Removed-listings check 1')).to.have.length(1);
    const statuses = new Set(SPEC.flatMap((s) => s.rows.map((r) => r.status)));
    for (const [, status] of section('## 7. Errors').matchAll(/^\| (\d{3}) /gm)) expect(statuses.has(Number(status)), status).to.equal(true);
  });
});
