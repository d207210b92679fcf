/**
 * The SQL compiler, construct by construct, on each dialect: the SQL text and the parameters that a bound
 * filter, order, keyset position, projection, visibility predicate and limit compile to (snapshots, written
 * out by hand and read against the OData semantics they implement). Fast and without a database; the HTTP
 * suites remain the oracle for what the statements return.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bindQuery } from '../src/query/bind-query';
import { parseQueryOptions } from '../src/query/parse-options';
import type { BoundPredicate } from '../src/query/bound';
import { allOf, fieldEquals, fieldOf } from '../src/query/predicates';
import { projection, WHOLE_RECORD } from '../src/query/projection';
import { Visibility } from '../src/query/visibility';
import type { SqlDialect } from '../src/storage/sql/dialect';
import { compileFilter } from '../src/storage/sql/filter-compiler';
import { mysqlDialect } from '../src/storage/sql/mysql-dialect';
import { RecordQueries } from '../src/storage/records/record-queries';
import { sqlBuilder } from '../src/storage/sql/query-builder';
import type { Fragment } from '../src/storage/sql/fragment';
import { sqliteDialect } from '../src/storage/sql/sqlite-dialect';
import type { Database, Executor } from '../src/storage/db/database';
import { RecordStore } from '../src/storage/records/record-store';
import { LONG_LIST } from '../src/storage/sql/value-list';
import { listings, media, model } from './support/sql-fixture';

const DIALECTS = { sqlite: sqliteDialect, mysql: mysqlDialect } as const;
type DialectName = keyof typeof DIALECTS;

/** Expected SQL per dialect (`mysql` omitted: the same text as SQLite); params per dialect when they differ. */
interface Snapshot {
  readonly sqlite: string;
  readonly mysql?: string;
  readonly params: readonly unknown[];
  readonly mysqlParams?: readonly unknown[];
}

function expectSnapshot(compile: (d: SqlDialect) => Fragment | string, s: Snapshot): void {
  for (const name of Object.keys(DIALECTS) as DialectName[]) {
    const out = compile(DIALECTS[name]);
    const actual = typeof out === 'string' ? { sql: out, params: [] } : { sql: out.sql, params: [...out.params] };
    const expected = name === 'mysql'
      ? { sql: s.mysql ?? s.sqlite, params: [...(s.mysqlParams ?? s.params)] }
      : { sql: s.sqlite, params: [...s.params] };
    expect(actual, name).to.deep.equal(expected);
  }
}

const bind = (options: Record<string, string>, set = listings) => bindQuery(set, parseQueryOptions(options));
const filterOf = (text: string) => bind({ $filter: text }).filter!;

function filterCases(cases: readonly (readonly [string, Snapshot])[]): void {
  for (const [filter, snapshot] of cases) {
    it(filter, () => expectSnapshot((d) => compileFilter(filterOf(filter), d, 'Property'), snapshot));
  }
}

describe('SQL compiler: comparison operators', function () {
  filterCases([
    ["ListingKey eq 'L1'", { sqlite: '`ListingKey` = ?', params: ['L1'] }],
    ["ListingKey ne 'L1'", { sqlite: '`ListingKey` <> ?', params: ['L1'] }],
    ["ListingKey ge 'L1'", { sqlite: '`ListingKey` >= ?', params: ['L1'] }],
    ["ListingKey lt 'L1'", { sqlite: '`ListingKey` < ?', params: ['L1'] }],
    // A nullable column: eq and ordering stay plain (null never matches them), ne admits null (null ne 5 is true).
    ['ListPrice eq 5', { sqlite: '`ListPrice` = ?', params: [5] }],
    ['ListPrice gt 100000', { sqlite: '`ListPrice` > ?', params: [100000] }],
    // OData 2.0/3.0 suffixes (query/lexer.ts): the same statement as the plain number.
    ['ListPrice gt 100000M', { sqlite: '`ListPrice` > ?', params: [100000] }],
    ['ListPrice gt 100000.5m', { sqlite: '`ListPrice` > ?', params: [100000.5] }],
    ['BedroomsTotal lt 3L', { sqlite: '`BedroomsTotal` < ?', params: [3] }],
    ['ListPrice le 2.5e5d', { sqlite: '`ListPrice` <= ?', params: [250000] }],
    ['ListPrice le 5', { sqlite: '`ListPrice` <= ?', params: [5] }],
    ['ListPrice ne 5', { sqlite: '(`ListPrice` <> ? OR `ListPrice` IS NULL)', params: [5] }],
    // Two nullable columns: null eq null is true, null ne x is true.
    ['BedroomsTotal eq ListPrice', { sqlite: '(`BedroomsTotal` = `ListPrice` OR (`BedroomsTotal` IS NULL AND `ListPrice` IS NULL))', params: [] }],
    ['BedroomsTotal ne ListPrice', {
      sqlite: '(`BedroomsTotal` <> `ListPrice` OR (`BedroomsTotal` IS NULL AND `ListPrice` IS NOT NULL) OR (`BedroomsTotal` IS NOT NULL AND `ListPrice` IS NULL))',
      params: [],
    }],
    // A literal on the left moves right, the operator flipped.
    ["'L1' lt ListingKey", { sqlite: '`ListingKey` > ?', params: ['L1'] }],
  ]);
});

describe('SQL compiler: and, or, not', function () {
  filterCases([
    ["City eq 'A' and BedroomsTotal ge 3", { sqlite: '(`City` = ? AND `BedroomsTotal` >= ?)', params: ['A', 3] }],
    // Equalities on one column in an OR chain become one IN list.
    ["City eq 'A' or City eq 'B'", { sqlite: '(`City` IN (?, ?))', params: ['A', 'B'] }],
    // not is pushed down (De Morgan); the negated ordering comparison admits null.
    ["not (City eq 'A' or BedroomsTotal lt 2)", {
      sqlite: '((`City` NOT IN (?) OR `City` IS NULL) AND (`BedroomsTotal` >= ? OR `BedroomsTotal` IS NULL))', params: ['A', 2],
    }],
    ["not (City eq 'A') and not (City eq 'B')", { sqlite: '((`City` NOT IN (?, ?) OR `City` IS NULL))', params: ['A', 'B'] }],
    ['not (ListPrice gt 5)', { sqlite: '(`ListPrice` <= ? OR `ListPrice` IS NULL)', params: [5] }],
    // Constants fold away.
    ['true', { sqlite: '1 = 1', params: [] }],
    ["false or City eq 'A'", { sqlite: '(`City` IN (?))', params: ['A'] }],
    ["true or City eq 'A'", { sqlite: '1 = 1', params: [] }],
  ]);

  it('a chain of more than 16 terms is a balanced tree of parentheses (SQLite limits expression depth)', function () {
    const filter = Array.from({ length: 17 }, (_, i) => `ListPrice gt ${i}`).join(' or ');
    const terms = Array.from({ length: 17 }, () => '`ListPrice` > ?');
    const group = (t: string[]) => `(${t.join(' OR ')})`;
    expectSnapshot((d) => compileFilter(filterOf(filter), d, 'Property'), {
      sqlite: `(${group(terms.slice(0, 9))} OR ${group(terms.slice(9))})`,
      params: Array.from({ length: 17 }, (_, i) => i),
    });
  });
});

describe('SQL compiler: in and null', function () {
  filterCases([
    // MlsStatus is a lookup: its values are the lookup's strings, compared as such.
    ["MlsStatus in ('Active', 'Pending')", { sqlite: '`MlsStatus` IN (?, ?)', params: ['Active', 'Pending'] }],
    ["not (MlsStatus in ('Active', 'Pending'))", { sqlite: '(`MlsStatus` NOT IN (?, ?) OR `MlsStatus` IS NULL)', params: ['Active', 'Pending'] }],
    ["MlsStatus eq 'Active Under Contract'", { sqlite: '`MlsStatus` = ?', params: ['Active Under Contract'] }],
    ["not (ListingKey in ('a', 'b'))", { sqlite: '`ListingKey` NOT IN (?, ?)', params: ['a', 'b'] }],
    ['City eq null', { sqlite: '`City` IS NULL', params: [] }],
    ['null ne City', { sqlite: '`City` IS NOT NULL', params: [] }],
    ['ListPrice gt null', { sqlite: '1 = 0', params: [] }],
  ]);
});

describe('SQL compiler: long in (…) lists bind one JSON parameter', function () {
  const keys = Array.from({ length: LONG_LIST + 1 }, (_, i) => `K${i}`);
  const list = (values: readonly (string | number)[]) => values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ');
  const jsonTable = (type: string, element = 'CAST(v AS CHAR)') => `SELECT ${element} FROM JSON_TABLE(?, '$[*]' COLUMNS (v ${type} PATH '$')) AS list`;

  it(`up to ${LONG_LIST} values, one parameter each`, () => {
    const values = keys.slice(0, LONG_LIST);
    expectSnapshot((d) => compileFilter(filterOf(`ListingKey in (${list(values)})`), d, 'Property'), {
      sqlite: `\`ListingKey\` IN (${values.map(() => '?').join(', ')})`, params: values,
    });
  });
  it(`over ${LONG_LIST}, text: json_each on SQLite, JSON_TABLE read as CHAR in the connection's collation on MariaDB`, () => {
    expectSnapshot((d) => compileFilter(filterOf(`ListingKey in (${list(keys)})`), d, 'Property'), {
      sqlite: '`ListingKey` IN (SELECT value FROM json_each(?))',
      mysql: `\`ListingKey\` IN (${jsonTable('VARCHAR(64)')})`,
      params: [JSON.stringify(keys)],
    });
  });
  it('negated, null stays outside the list as in the short form', () => {
    expectSnapshot((d) => compileFilter(filterOf(`not (City in (${list(keys)}))`), d, 'Property'), {
      sqlite: '(`City` NOT IN (SELECT value FROM json_each(?)) OR `City` IS NULL)',
      mysql: `(\`City\` NOT IN (${jsonTable('VARCHAR(64)')}) OR \`City\` IS NULL)`,
      params: [JSON.stringify(keys)],
    });
  });
  it('equalities joined into one list by or go the same way', () => {
    expectSnapshot((d) => compileFilter(filterOf(keys.map((k) => `City eq '${k}'`).join(' or ')), d, 'Property'), {
      sqlite: '(`City` IN (SELECT value FROM json_each(?)))',
      mysql: `(\`City\` IN (${jsonTable('VARCHAR(64)')}))`,
      params: [JSON.stringify(keys)],
    });
  });
  it('the VARCHAR is never narrower than the longest value (in powers of two), so nothing is truncated into a match', () => {
    const long = [...keys.slice(1), 'x'.repeat(100)];
    expectSnapshot((d) => compileFilter(filterOf(`City in (${list(long)})`), d, 'Property'), {
      sqlite: '`City` IN (SELECT value FROM json_each(?))',
      mysql: `\`City\` IN (${jsonTable('VARCHAR(128)')})`,
      params: [JSON.stringify(long)],
    });
  });
  it('numbers as DOUBLE, as a bound number compares; timestamps as their stored text', () => {
    const prices = Array.from({ length: LONG_LIST + 1 }, (_, i) => i + 0.5);
    expectSnapshot((d) => compileFilter(filterOf(`ListPrice in (${list(prices)})`), d, 'Property'), {
      sqlite: '`ListPrice` IN (SELECT value FROM json_each(?))',
      mysql: `\`ListPrice\` IN (${jsonTable('DOUBLE', 'v')})`,
      params: [JSON.stringify(prices)],
    });
    const times = Array.from({ length: LONG_LIST + 1 }, (_, i) => `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}+01:00`);
    const stored = times.map((t) => new Date(t).toISOString());
    expectSnapshot((d) => compileFilter(filterOf(`ModificationTimestamp in (${times.join(', ')})`), d, 'Property'), {
      sqlite: '`ModificationTimestamp` IN (SELECT value FROM json_each(?))',
      mysql: `\`ModificationTimestamp\` IN (${jsonTable('VARCHAR(64)')})`,
      params: [JSON.stringify(stored)],
    });
  });
  it('but the parent keys of an expansion bind a placeholder each, up to 1,024', () => {
    // MariaDB joins a JSON_TABLE list holding repeats (the padding) through a temporary table and sorts every
    // related row there: 36 ms against 23 ms with placeholders for a page of 100's media (20,000 listings).
    const order = bind({ $orderby: 'Order' }, media).orderBy;
    const related = (d: SqlDialect) => new RecordQueries(sqlBuilder(d.name), d, 'Media', 'MediaKey');
    expectSnapshot((d) => related(d).related({ foreignKey: 'ResourceRecordKey', keys, orderBy: order, projection: WHOLE_RECORD }), {
      sqlite: `select \`ResourceRecordKey\` as \`_parent\`, \`_record\` from \`Media\` where \`ResourceRecordKey\` IN (${keys.map(() => '?').join(', ')}) `
        + 'order by `ResourceRecordKey` asc, `Order` asc, `MediaKey` asc',
      params: keys,
    });
    const many = Array.from({ length: 1025 }, (_, i) => `K${i}`);
    expectSnapshot((d) => related(d).related({ foreignKey: 'ResourceRecordKey', keys: many, orderBy: order, projection: WHOLE_RECORD }), {
      sqlite: 'select `ResourceRecordKey` as `_parent`, `_record` from `Media` where `ResourceRecordKey` IN (SELECT value FROM json_each(?)) '
        + 'order by `ResourceRecordKey` asc, `Order` asc, `MediaKey` asc',
      mysql: `select \`ResourceRecordKey\` as \`_parent\`, \`_record\` from \`Media\` where \`ResourceRecordKey\` IN (${jsonTable('VARCHAR(64)')}) `
        + 'order by `ResourceRecordKey` asc, `Order` asc, `MediaKey` asc',
      params: [JSON.stringify(many)],
    });
  });
});

describe('SQL compiler: lambdas on a collection, from its value table', function () {
  const VT = '`_values_Property_Appliances`';
  const KEY = `${VT}.\`_key\``;
  filterCases([
    ["Appliances/any(x: x eq 'Dishwasher')", { sqlite: `EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} = \`Property\`.\`ListingKey\` AND \`_value\` = ?)`, params: ['Dishwasher'] }],
    // Equalities on the variable join into one list, as on a field.
    ["Appliances/any(x: x eq 'Dishwasher' or x eq 'Range')", {
      sqlite: `EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} = \`Property\`.\`ListingKey\` AND (\`_value\` IN (?, ?)))`, params: ['Dishwasher', 'Range'],
    }],
    // all(x: p) is "no element fails p": an empty collection meets it. MariaDB correlates NOT EXISTS with <=>
    // (the same on keys that are never null), which keeps it a per-row seek of the primary key.
    ["Appliances/all(x: x eq 'Dishwasher')", {
      sqlite: `NOT EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} = \`Property\`.\`ListingKey\` AND \`_value\` <> ?)`,
      mysql: `NOT EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} <=> \`Property\`.\`ListingKey\` AND \`_value\` <> ?)`,
      params: ['Dishwasher'],
    }],
    ['Appliances/any()', { sqlite: `EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} = \`Property\`.\`ListingKey\`)`, params: [] }],
    ['not Appliances/any()', {
      sqlite: `NOT EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} = \`Property\`.\`ListingKey\`)`,
      mysql: `NOT EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} <=> \`Property\`.\`ListingKey\`)`,
      params: [],
    }],
    ["not Appliances/all(x: x in ('Dishwasher', 'Range'))", {
      sqlite: `EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} = \`Property\`.\`ListingKey\` AND \`_value\` NOT IN (?, ?))`, params: ['Dishwasher', 'Range'],
    }],
    // has on a multi-value lookup is any(x: x eq member); several members, each of them.
    ["Appliances has org.example.Appliances'Dishwasher,Range'", {
      sqlite: `(EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} = \`Property\`.\`ListingKey\` AND \`_value\` = ?) AND EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} = \`Property\`.\`ListingKey\` AND \`_value\` = ?))`,
      params: ['Dishwasher', 'Range'],
    }],
    // The set's own fields stay nameable inside; they resolve to the record outside the subquery.
    ["Appliances/any(x: x eq 'Range' and City eq 'Austin') or MlsStatus eq 'Active'", {
      sqlite: `(\`MlsStatus\` IN (?) OR EXISTS (SELECT 1 FROM ${VT} WHERE ${KEY} = \`Property\`.\`ListingKey\` AND (\`_value\` = ? AND \`City\` = ?)))`,
      params: ['Active', 'Range', 'Austin'],
    }],
  ]);
});

describe('SQL compiler: string functions', function () {
  filterCases([
    ["contains(City, 'x')", { sqlite: '(instr(`City`, ?) > 0)', mysql: '(LOCATE(?, `City`) > 0)', params: ['x'] }],
    // Parameters bind in text order, so a dialect that swaps the arguments swaps the parameters.
    ["contains(tolower('ABC'), 'b')", {
      sqlite: '(instr(odata_tolower(?), ?) > 0)', mysql: '(LOCATE(?, LOWER(?)) > 0)', params: ['ABC', 'b'], mysqlParams: ['b', 'ABC'],
    }],
    ["startswith(City, 'San')", { sqlite: '(substr(`City`, 1, length(?)) = ?)', mysql: '(substr(`City`, 1, CHAR_LENGTH(?)) = ?)', params: ['San', 'San'] }],
    ["endswith(City, 'ville')", {
      sqlite: '(substr(`City`, length(`City`) - length(?) + 1) = ?)', mysql: '(RIGHT(`City`, CHAR_LENGTH(?)) = ?)', params: ['ville', 'ville'],
    }],
    ["tolower(City) eq 'oslo'", { sqlite: 'odata_tolower(`City`) = ?', mysql: 'LOWER(`City`) = ?', params: ['oslo'] }],
    ["toupper(City) eq 'X'", { sqlite: 'odata_toupper(`City`) = ?', mysql: 'UPPER(`City`) = ?', params: ['X'] }],
    ["trim(City) eq 'X'", { sqlite: 'TRIM(`City`) = ?', params: ['X'] }],
    ['length(City) gt 3', { sqlite: 'length(`City`) > ?', mysql: 'CHAR_LENGTH(`City`) > ?', params: [3] }],
  ]);
});

describe('SQL compiler: dates, times and timestamps', function () {
  filterCases([
    // Timestamps are fixed-width UTC text: literals are normalised to it, whatever their offset.
    ['ModificationTimestamp gt 2024-01-01T00:00:00Z', { sqlite: '`ModificationTimestamp` > ?', params: ['2024-01-01T00:00:00.000Z'] }],
    ['ModificationTimestamp ge 2024-01-01T05:00:00+05:00', { sqlite: '`ModificationTimestamp` >= ?', params: ['2024-01-01T00:00:00.000Z'] }],
    // Below the stored millisecond: nothing equals it, and gt/ge round to gt.
    ['ModificationTimestamp eq 2024-01-01T00:00:00.0001Z', { sqlite: '1 = 0', params: [] }],
    ['ModificationTimestamp ge 2024-01-01T00:00:00.0001Z', { sqlite: '`ModificationTimestamp` > ?', params: ['2024-01-01T00:00:00.000Z'] }],
    ['ListingContractDate eq 2024-05-01', { sqlite: '`ListingContractDate` = ?', params: ['2024-05-01'] }],
    ['ShowingStartTime ge 09:30', { sqlite: '`ShowingStartTime` >= ?', params: ['09:30:00.000'] }],
    ['year(ModificationTimestamp) eq 2024', {
      sqlite: 'CAST(substr(`ModificationTimestamp`, 1, 4) AS INTEGER) = ?', mysql: 'CAST(substr(`ModificationTimestamp`, 1, 4) AS SIGNED) = ?', params: [2024],
    }],
    ['month(ModificationTimestamp) eq 5', {
      sqlite: 'CAST(substr(`ModificationTimestamp`, 6, 2) AS INTEGER) = ?', mysql: 'CAST(substr(`ModificationTimestamp`, 6, 2) AS SIGNED) = ?', params: [5],
    }],
    ['day(ListingContractDate) eq 1', {
      sqlite: 'CAST(substr(`ListingContractDate`, 9, 2) AS INTEGER) = ?', mysql: 'CAST(substr(`ListingContractDate`, 9, 2) AS SIGNED) = ?', params: [1],
    }],
    ['minute(ModificationTimestamp) eq 5', {
      sqlite: 'CAST(substr(`ModificationTimestamp`, 15, 2) AS INTEGER) = ?', mysql: 'CAST(substr(`ModificationTimestamp`, 15, 2) AS SIGNED) = ?', params: [5],
    }],
    // A time of day has its parts elsewhere than a timestamp.
    ['hour(ShowingStartTime) eq 9', {
      sqlite: 'CAST(substr(`ShowingStartTime`, 1, 2) AS INTEGER) = ?', mysql: 'CAST(substr(`ShowingStartTime`, 1, 2) AS SIGNED) = ?', params: [9],
    }],
    ['second(ShowingStartTime) eq 5', {
      sqlite: 'CAST(substr(`ShowingStartTime`, 7, 2) AS INTEGER) = ?', mysql: 'CAST(substr(`ShowingStartTime`, 7, 2) AS SIGNED) = ?', params: [5],
    }],
    // A literal's part is computed by the binder.
    ['year(2024-05-01T00:00:00Z) eq year(ModificationTimestamp)', {
      sqlite: '? = CAST(substr(`ModificationTimestamp`, 1, 4) AS INTEGER)', mysql: '? = CAST(substr(`ModificationTimestamp`, 1, 4) AS SIGNED)', params: [2024],
    }],
    ['date(ModificationTimestamp) eq 2024-05-01', { sqlite: 'substr(`ModificationTimestamp`, 1, 10) = ?', params: ['2024-05-01'] }],
    ['time(ModificationTimestamp) lt 12:00', { sqlite: 'substr(`ModificationTimestamp`, 12, 12) < ?', params: ['12:00:00.000'] }],
  ]);
});

describe('SQL compiler: booleans', function () {
  filterCases([
    ['NewConstructionYN', { sqlite: '`NewConstructionYN` = 1', params: [] }],
    ['not NewConstructionYN', { sqlite: '`NewConstructionYN` = 0', params: [] }],
    ['NewConstructionYN eq true', { sqlite: '`NewConstructionYN` = ?', params: [1] }],
    ['NewConstructionYN ne false', { sqlite: '(`NewConstructionYN` <> ? OR `NewConstructionYN` IS NULL)', params: [0] }],
    ["not contains(City, 'x')", { sqlite: 'NOT (instr(`City`, ?) > 0)', mysql: 'NOT (LOCATE(?, `City`) > 0)', params: ['x'] }],
    // As an operand a boolean function is parenthesised: MariaDB gives all comparison operators one precedence.
    ["contains(City, 'x') eq true", { sqlite: '(instr(`City`, ?) > 0) = ?', mysql: '(LOCATE(?, `City`) > 0) = ?', params: ['x', 1] }],
    ["contains(City, 'a') eq contains(City, 'b')", {
      sqlite: '((instr(`City`, ?) > 0) = (instr(`City`, ?) > 0) OR ((instr(`City`, ?) > 0) IS NULL AND (instr(`City`, ?) > 0) IS NULL))',
      mysql: '((LOCATE(?, `City`) > 0) = (LOCATE(?, `City`) > 0) OR ((LOCATE(?, `City`) > 0) IS NULL AND (LOCATE(?, `City`) > 0) IS NULL))',
      params: ['a', 'b', 'a', 'b'],
    }],
  ]);
});

describe('SQL compiler: order, projection, keyset position and limit', function () {
  const queries = (d: SqlDialect, table = 'Property', key = 'ListingKey') => new RecordQueries(sqlBuilder(d.name), d, table, key);

  it('$select reads the selected columns and the sort columns; $orderby ends with the key; the limit is a parameter', function () {
    const q = bind({ $filter: "City eq 'Oslo'", $orderby: 'ListPrice desc', $select: 'ListingKey,City' });
    expectSnapshot((d) => queries(d).page({ condition: queries(d).condition(q.filter), orderBy: q.orderBy, limit: 11, projection: projection(listings, q.select) }), {
      sqlite: 'select `ListingKey`, `City`, `ListPrice` from `Property` where `City` = ? order by `ListPrice` desc, `ListingKey` desc limit ?',
      params: ['Oslo', 11],
    });
  });

  it('the default order continues after a skiptoken\'s position in the form that seeks the (ModificationTimestamp, key) index', function () {
    const q = bind({});
    expectSnapshot((d) => queries(d).page({ orderBy: q.orderBy, after: ['2024-01-01T00:00:00.000Z', 'L9'], limit: 101, projection: WHOLE_RECORD }), {
      sqlite: 'select `_record`, `ModificationTimestamp`, `ListingKey` from `Property` where `ModificationTimestamp` >= ? AND '
        + '(`ModificationTimestamp` > ? OR `ListingKey` > ?) order by `ModificationTimestamp` asc, `ListingKey` asc limit ?',
      params: ['2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z', 'L9', 101],
    });
  });

  it('after a null in a descending nullable column, only nulls with a later key follow; the filter comes first', function () {
    const q = bind({ $filter: "City eq 'Oslo'", $orderby: 'ListPrice desc' });
    expectSnapshot((d) => queries(d).page({ condition: queries(d).condition(q.filter), after: [null, 'L9'], orderBy: q.orderBy, limit: 11, projection: WHOLE_RECORD }), {
      sqlite: 'select `_record`, `ListPrice`, `ListingKey` from `Property` where (`City` = ?) AND (((`ListPrice` IS NULL AND `ListingKey` < ?))) '
        + 'order by `ListPrice` desc, `ListingKey` desc limit ?',
      params: ['Oslo', 'L9', 11],
    });
  });

  it('after a value in a descending nullable column: smaller values and nulls follow', function () {
    const q = bind({ $orderby: 'ListPrice desc' });
    expectSnapshot((d) => queries(d).page({ after: [500, 'L9'], orderBy: q.orderBy, limit: 11, projection: WHOLE_RECORD }), {
      sqlite: 'select `_record`, `ListPrice`, `ListingKey` from `Property` where (`ListPrice` <= ? OR `ListPrice` IS NULL) AND '
        + '((`ListPrice` < ? OR `ListPrice` IS NULL) OR `ListingKey` < ?) order by `ListPrice` desc, `ListingKey` desc limit ?',
      params: [500, 500, 'L9', 11],
    });
  });

  it('$count counts what the filter admits', function () {
    expectSnapshot((d) => queries(d).count(queries(d).condition(filterOf('BedroomsTotal ge 3'))), {
      sqlite: 'select count(*) as `n` from `Property` where `BedroomsTotal` >= ?', params: [3],
    });
  });

  it('$expand reads the related records of a page of parents at once, ranked per parent when $top is given', function () {
    const order = bind({ $orderby: 'Order' }, media).orderBy;
    expectSnapshot((d) => queries(d, 'Media', 'MediaKey').related({ foreignKey: 'ResourceRecordKey', keys: ['L1', 'L2'], orderBy: order, projection: WHOLE_RECORD, perParent: 2 }), {
      sqlite: 'select * from (select `ResourceRecordKey` as `_parent`, `_record`, row_number() over (partition by `ResourceRecordKey` '
        + 'order by `Order` asc, `MediaKey` asc) as `_row` from `Media` where `ResourceRecordKey` IN (?, ?)) as `ranked` where `_row` <= ? '
        + 'order by `_parent` asc, `_row` asc',
      params: ['L1', 'L2', 2],
    });
    expectSnapshot((d) => queries(d, 'Media', 'MediaKey').related({ foreignKey: 'ResourceRecordKey', keys: ['L1'], orderBy: order, projection: WHOLE_RECORD }, queries(d, 'Media', 'MediaKey').condition(filterOfMedia('Order lt 3'))), {
      sqlite: 'select `ResourceRecordKey` as `_parent`, `_record` from `Media` where (`ResourceRecordKey` IN (?)) AND (`Order` < ?) '
        + 'order by `ResourceRecordKey` asc, `Order` asc, `MediaKey` asc',
      params: ['L1', 3],
    });
  });

  it('$expand as stored reads the related records of each parent joined by the database, with the length they add up to', function () {
    const order = bind({ $orderby: 'Order' }, media).orderBy;
    const length = 'SUM(OCTET_LENGTH(`_record`)) + COUNT(*) - 1 as `_length`';
    expectSnapshot((d) => queries(d, 'Media', 'MediaKey').joinedRelated({ foreignKey: 'ResourceRecordKey', keys: ['L1', 'L2'], orderBy: order }), {
      sqlite: "select `ResourceRecordKey` as `_parent`, CAST(group_concat(`_record`, ',' ORDER BY `Order` ASC, `MediaKey` ASC) AS BLOB) as `_record`, "
        + `${length} from \`Media\` where \`ResourceRecordKey\` IN (?, ?) group by \`ResourceRecordKey\``,
      mysql: "select `ResourceRecordKey` as `_parent`, CAST(GROUP_CONCAT(`_record` ORDER BY `Order` ASC, `MediaKey` ASC SEPARATOR ',') AS BINARY) as `_record`, "
        + `${length} from \`Media\` where \`ResourceRecordKey\` IN (?, ?) group by \`ResourceRecordKey\``,
      params: ['L1', 'L2'],
    });
    expectSnapshot((d) => queries(d, 'Media', 'MediaKey').joinedRelated({ foreignKey: 'ResourceRecordKey', keys: ['L1'], orderBy: order, perParent: 2 }), {
      sqlite: "select `_parent`, CAST(group_concat(`_record`, ',' ORDER BY `_row` ASC) AS BLOB) as `_record`, "
        + `${length} from (select \`ResourceRecordKey\` as \`_parent\`, \`_record\`, row_number() over (partition by \`ResourceRecordKey\` `
        + 'order by `Order` asc, `MediaKey` asc) as `_row` from `Media` where `ResourceRecordKey` IN (?)) as `ranked` where `_row` <= ? group by `_parent`',
      mysql: "select `_parent`, CAST(GROUP_CONCAT(`_record` ORDER BY `_row` ASC SEPARATOR ',') AS BINARY) as `_record`, "
        + `${length} from (select \`ResourceRecordKey\` as \`_parent\`, \`_record\`, row_number() over (partition by \`ResourceRecordKey\` `
        + 'order by `Order` asc, `MediaKey` asc) as `_row` from `Media` where `ResourceRecordKey` IN (?)) as `ranked` where `_row` <= ? group by `_parent`',
      params: ['L1', 2],
    });
  });
});

function filterOfMedia(text: string) {
  return bind({ $filter: text }, media).filter!;
}

describe('SQL compiler: visibility', function () {
  const queries = (d: SqlDialect, table = 'Property', key = 'ListingKey') => new RecordQueries(sqlBuilder(d.name), d, table, key);
  const scoped = new Visibility(model, ["MlsStatus ne 'Withdrawn'"]);

  it('a listing is visible when the scope admits it', function () {
    expectSnapshot((d) => queries(d).byKey('L1', ['_record'], queries(d).condition(scoped.of(listings))), {
      sqlite: 'select `_record` from `Property` where `ListingKey` = ? and ((`MlsStatus` <> ? OR `MlsStatus` IS NULL))',
      params: ['L1', 'Withdrawn'],
    });
  });

  it('a related record is visible unless its listing is outside the scope (a correlated anti-join seeking the listing by key); records without a listing stay visible', function () {
    expectSnapshot((d) => queries(d, 'Media', 'MediaKey').count(queries(d, 'Media', 'MediaKey').condition(scoped.of(media))), {
      sqlite: 'select count(*) as `n` from `Media` where NOT EXISTS (SELECT 1 FROM `Property` `_q1` '
        + 'WHERE `_q1`.`ListingKey` = `Media`.`ResourceRecordKey` AND `MlsStatus` = ?)',
      mysql: 'select count(*) as `n` from `Media` where NOT EXISTS (SELECT 1 FROM `Property` `_q1` '
        + 'WHERE `_q1`.`ListingKey` <=> `Media`.`ResourceRecordKey` AND `MlsStatus` = ?)',
      params: ['Withdrawn'],
    });
  });

  it('several scopes must all hold: outside any one is outside; with a navigation path\'s parent and the client\'s filter', function () {
    const two = new Visibility(model, ["MlsStatus ne 'Withdrawn'", "City eq 'Oslo'"]);
    const where = allOf(allOf(two.of(media), fieldEquals(media.fieldsByName.ResourceRecordKey, 'L1')), filterOfMedia('Order lt 3'));
    const order = bind({}, media).orderBy;
    expectSnapshot((d) => queries(d, 'Media', 'MediaKey').page({ condition: queries(d, 'Media', 'MediaKey').condition(where), orderBy: order, limit: 3, projection: WHOLE_RECORD }), {
      sqlite: 'select `_record`, `ModificationTimestamp`, `MediaKey` from `Media` where ((NOT EXISTS (SELECT 1 FROM `Property` `_q1` '
        + 'WHERE `_q1`.`ListingKey` = `Media`.`ResourceRecordKey` AND (`MlsStatus` IN (?) OR (`City` <> ? OR `City` IS NULL))) '
        + 'AND `ResourceRecordKey` = ?) AND `Order` < ?) order by `ModificationTimestamp` asc, `MediaKey` asc limit ?',
      mysql: 'select `_record`, `ModificationTimestamp`, `MediaKey` from `Media` where ((NOT EXISTS (SELECT 1 FROM `Property` `_q1` '
        + 'WHERE `_q1`.`ListingKey` <=> `Media`.`ResourceRecordKey` AND (`MlsStatus` IN (?) OR (`City` <> ? OR `City` IS NULL))) '
        + 'AND `ResourceRecordKey` = ?) AND `Order` < ?) order by `ModificationTimestamp` asc, `MediaKey` asc limit ?',
      params: ['Withdrawn', 'Oslo', 'L1', 3, 3],
    });
  });

  it('a choice by a field\'s value is one CASE (no index for the planner to take instead of the page\'s order); negated, each branch is', function () {
    const key = fieldOf(listings.fieldsByName.ListingKey);
    const choice: BoundPredicate = {
      kind: 'choice', on: key, cases: [{ value: { kind: 'value', type: 'string', value: 'L1' }, then: filterOf("City eq 'Oslo'") }], otherwise: filterOf('ListPrice gt 5'),
    };
    expectSnapshot((d) => compileFilter(choice, d, 'Property'), {
      sqlite: '(CASE `ListingKey` WHEN ? THEN `City` = ? ELSE `ListPrice` > ? END)',
      params: ['L1', 'Oslo', 5],
    });
    expectSnapshot((d) => compileFilter({ kind: 'not', operand: choice }, d, 'Property'), {
      sqlite: '(CASE `ListingKey` WHEN ? THEN (`City` <> ? OR `City` IS NULL) ELSE (`ListPrice` <= ? OR `ListPrice` IS NULL) END)',
      params: ['L1', 'Oslo', 5],
    });
  });

  it('without scopes nothing is added', function () {
    expect(new Visibility(model, []).of(media)).to.equal(undefined);
    expect(new Visibility(model, []).of(listings)).to.equal(undefined);
  });
});

describe('SQL compiler: record writes (knex, compiled once per shape)', function () {
  /** The statements a store runs on an executor, as they are sent (text and values). */
  function statementsOf(d: SqlDialect, work: (store: RecordStore, ex: Executor) => Promise<unknown>): Promise<Fragment[]> {
    const sent: Fragment[] = [];
    const ex: Executor = { all: async (sql, params = []) => { sent.push({ sql, params }); return []; }, run: async (sql, params = []) => { sent.push({ sql, params }); } };
    const table = { name: 'Media', primaryKey: 'MediaKey', indexes: [], columns: [
      { name: 'MediaKey', type: 'string', nullable: false }, { name: 'ModificationTimestamp', type: 'timestamp', nullable: false },
      { name: 'ResourceRecordKey', type: 'string', nullable: true }, { name: 'Order', type: 'integer', nullable: true }, { name: '_record', type: 'text', nullable: false },
    ] } as const;
    // Only what a store builds statements with: knex for the dialect, and the dialect.
    const db = { knex: sqlBuilder(d.name), dialect: d } as unknown as Database;
    const store = new RecordStore(db, { ...media, changeTimestamp: 'ModificationTimestamp' }, table, []);
    return work(store, ex).then(() => sent);
  }
  const row = (key: string, order: number) => ({ key, json: '{}', value: {}, row: [key, '2024-01-01T00:00:00.000Z', 'L1', order, '{}'] });

  it('an upsert replaces every column but the key, rows bound in the columns\' sorted order', async function () {
    for (const d of [sqliteDialect, mysqlDialect]) {
      const [upsert] = await statementsOf(d, (store, ex) => store.upsert(ex, [row('M1', 1), row('M2', 2)]));
      expect(upsert.params, d.name).to.deep.equal(['M1', '2024-01-01T00:00:00.000Z', 1, 'L1', '{}', 'M2', '2024-01-01T00:00:00.000Z', 2, 'L1', '{}']);
      expect(upsert.sql, d.name).to.equal(d.name === 'sqlite'
        ? 'insert into `Media` (`MediaKey`, `ModificationTimestamp`, `Order`, `ResourceRecordKey`, `_record`) select ? as `MediaKey`, ? as `ModificationTimestamp`, '
          + '? as `Order`, ? as `ResourceRecordKey`, ? as `_record` union all select ? as `MediaKey`, ? as `ModificationTimestamp`, ? as `Order`, '
          + '? as `ResourceRecordKey`, ? as `_record` where true on conflict (`MediaKey`) do update set `ModificationTimestamp` = excluded.`ModificationTimestamp`, '
          + '`ResourceRecordKey` = excluded.`ResourceRecordKey`, `Order` = excluded.`Order`, `_record` = excluded.`_record`'
        : 'insert into `Media` (`MediaKey`, `ModificationTimestamp`, `Order`, `ResourceRecordKey`, `_record`) values (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) '
          + 'on duplicate key update `ModificationTimestamp` = values(`ModificationTimestamp`), `ResourceRecordKey` = values(`ResourceRecordKey`), '
          + '`Order` = values(`Order`), `_record` = values(`_record`)');
    }
  });

  it('a restamp moves the timestamp in the stored text before the column (MariaDB assigns left to right), for records of the parents', async function () {
    for (const d of [sqliteDialect, mysqlDialect]) {
      const [restamp] = await statementsOf(d, (store, ex) => store.restampByParent(ex, 'ResourceRecordKey', ['L1', 'L2'], undefined, '2024-02-02T00:00:00.000Z'));
      const concat = d.name === 'sqlite' ? '? || `ModificationTimestamp` || ?' : 'CONCAT(?, `ModificationTimestamp`, ?)';
      // A new revision with the new text (storage/record-cache.ts): drawn at random, the same for the statement's rows.
      expect(restamp.sql, d.name).to.equal(`update \`Media\` set \`_record\` = REPLACE(\`_record\`, ${concat}, ?), \`ModificationTimestamp\` = ?, \`_revision\` = ? where \`ResourceRecordKey\` in (?, ?)`);
      const [revision] = restamp.params.slice(4, 5);
      expect([...restamp.params.slice(0, 4), ...restamp.params.slice(5)], d.name).to.deep.equal(['"ModificationTimestamp":"', '"', '"ModificationTimestamp":"2024-02-02T00:00:00.000Z"', '2024-02-02T00:00:00.000Z', 'L1', 'L2']);
      expect(Number.isSafeInteger(revision) && (revision as number) > 0, String(revision)).to.equal(true);
    }
  });

  it('records by parent, with a discriminator that names the parent\'s set or nothing; deletes by key', async function () {
    const [read, del] = await statementsOf(sqliteDialect, async (store, ex) => {
      await store.recordsByParent(ex, 'ResourceRecordKey', ['L1'], { field: 'ResourceRecordKey', value: 'Property' });
      await store.deleteByKeys(ex, ['M1', 'M2']);
    });
    expect(read).to.deep.equal({ sql: 'select `_record` from `Media` where `ResourceRecordKey` in (?) and (`ResourceRecordKey` = ? or `ResourceRecordKey` is null)', params: ['L1', 'Property'] });
    expect(del).to.deep.equal({ sql: 'delete from `Media` where `MediaKey` in (?, ?)', params: ['M1', 'M2'] });
  });
});

describe('Architecture: storage is the only place that knows SQL', function () {
  const root = join(__dirname, '..', '..');
  const files = (dir: string): string[] => readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
  const SQL_TEXT = [/\bSELECT /, /\bINSERT INTO\b/, /\bDELETE FROM\b/, /\bUPDATE /, / WHERE /, /\bFOR UPDATE\b/, /\bON CONFLICT\b/];
  const SQL = [/\bknex\b/, /\.toSQL\(/, ...SQL_TEXT];

  /**
   * knex's schema builder also appears where migrations are written: the generated migrations (built by the
   * migration emitter), typed by the contract they are written against (the model's DictionaryMigration, knex's
   * types only). None of them holds SQL text.
   */
  const SCHEMA_BUILDER = [join('generated', 'migrations'), join('codegen', 'emit-migrations.ts'), join('src', 'model', 'migration.ts')];

  it('no file in src/ outside src/storage/, nor in codegen/ or generated/, imports knex or holds SQL text', function () {
    const offenders = ['src', 'codegen', 'generated'].flatMap((dir) => files(join(root, dir)))
      .map((path) => relative(root, path))
      .filter((path) => !path.startsWith(join('src', 'storage')))
      .flatMap((path) => {
        const text = readFileSync(join(root, path), 'utf8');
        const rules = SCHEMA_BUILDER.some((p) => path.startsWith(p)) ? SQL_TEXT : SQL;
        return rules.filter((re) => re.test(text)).map((re) => `${path}: ${re.source}`);
      });
    expect(offenders).to.deep.equal([]);
  });

  it('the check would see SQL where it is (storage is not empty of it: knex, and the filter compiler\'s fragments)', function () {
    const storage = files(join(root, 'src', 'storage')).map((path) => readFileSync(path, 'utf8')).join('\n');
    for (const re of [/\bknex\b/, /\.toSQL\(/, /\bSELECT /, / WHERE /]) expect(re.test(storage), re.source).to.equal(true);
  });
});
