/**
 * The statements of the service's own tables (settings, usage, …), built by knex once per shape and run with their
 * values alone: what each dialect's text says, that the values go where knex put their placeholders, and that
 * a multi-row insert stays within what each database accepts. Fast and without a database; the metering,
 * rate-limit, auth and webhook suites run the statements on both.
 */
import { expect } from 'chai';
import { openDatabase } from '../src/storage/db/open-database';
import type { SqlDialect } from '../src/storage/sql/dialect';
import { mysqlDialect } from '../src/storage/sql/mysql-dialect';
import { sqlBuilder } from '../src/storage/sql/query-builder';
import { settingsStatements } from '../src/storage/tables/settings';
import { InsertBatches, MAX_ROWS_PER_INSERT, paddedList, standIn, textTaking } from '../src/storage/sql/shapes';
import { sqliteDialect } from '../src/storage/sql/sqlite-dialect';
import { usageStatements } from '../src/storage/tables/usage-table';

const DIALECTS: readonly SqlDialect[] = [sqliteDialect, mysqlDialect];
const database = (d: SqlDialect) => ({ knex: sqlBuilder(d.name), dialect: d });

/** What `fn` printed through the console (knex's logger writes its warnings there). */
function printed(fn: () => void): string[] {
  const lines: string[] = [];
  const saved = { log: console.log, warn: console.warn, error: console.error };
  const keep = (...args: unknown[]) => { lines.push(args.join(' ')); };
  Object.assign(console, { log: keep, warn: keep, error: keep });
  try {
    fn();
  } finally {
    Object.assign(console, saved);
  }
  return lines;
}

describe('Own tables\' statements: a locking read', function () {
  it('locks the row on MariaDB; knex\'s SQLite compiler leaves the lock out (its write transaction holds the database), saying nothing', function () {
    const texts: Record<string, string> = {};
    const output = printed(() => { for (const d of DIALECTS) texts[d.name] = settingsStatements(database(d)).lock; });
    expect(texts).to.deep.equal({
      sqlite: 'select `value` from `reso_server_settings` where `name` = ?',
      mysql: 'select `value` from `reso_server_settings` where `name` = ? for update',
    });
    expect(output).to.deep.equal([]);
  });
});

describe('Own tables\' statements: an insert that keeps an existing row', function () {
  it('is DO NOTHING on SQLite and a no-op update on MariaDB, never INSERT IGNORE (which turns other errors, a value too long, into warnings)', function () {
    const texts = Object.fromEntries(DIALECTS.map((d) => [d.name, settingsStatements(database(d)).insert]));
    expect(texts).to.deep.equal({
      sqlite: 'insert into `reso_server_settings` (`name`, `value`) values (?, ?) on conflict (`name`) do nothing',
      mysql: 'insert into `reso_server_settings` (`name`, `value`) values (?, ?) on duplicate key update `name` = `name`',
    });
  });
});

describe('Own tables\' statements: usage increments', function () {
  it('add the inserted count to the stored one (SQLite: excluded, MariaDB: VALUES()), several rows a statement', function () {
    const texts = Object.fromEntries(DIALECTS.map((d) => [d.name, usageStatements(database(d)).increments.text(2)]));
    expect(texts).to.deep.equal({
      sqlite: 'insert into `reso_usage` (`class`, `client_id`, `count`, `hour`) select ? as `class`, ? as `client_id`, ? as `count`, ? as `hour` '
        + 'union all select ? as `class`, ? as `client_id`, ? as `count`, ? as `hour` where true '
        + 'on conflict (`client_id`, `hour`, `class`) do update set `count` = `count` + excluded.`count`',
      mysql: 'insert into `reso_usage` (`class`, `client_id`, `count`, `hour`) values (?, ?, ?, ?), (?, ?, ?, ?) '
        + 'on duplicate key update `count` = `count` + VALUES(`count`)',
    });
  });

  it('take each row\'s values (client, hour, class, count) in the order knex placed the columns (alphabetical)', function () {
    const increments = usageStatements(database(sqliteDialect)).increments;
    expect(increments.params([['c1', '2026-01-01T00', 'A', 3], ['c2', '2026-01-01T01', 'B', 4]]))
      .to.deep.equal(['A', 'c1', 3, '2026-01-01T00', 'B', 'c2', 4, '2026-01-01T01']);
  });
});

describe('Own tables\' statements: multi-row inserts', function () {
  const columns = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);
  const placeholders = (text: string) => text.split('?').length - 1;

  it(`at most ${MAX_ROWS_PER_INSERT} rows a statement: SQLite writes them as one compound SELECT, which may have no more terms`, function () {
    for (const d of DIALECTS) {
      const batches = new InsertBatches({ knex: sqlBuilder(d.name), dialect: d }, 't', columns(4));
      expect(batches.rowsPerStatement, d.name).to.equal(MAX_ROWS_PER_INSERT);
      const text = batches.text(batches.rowsPerStatement);
      expect(placeholders(text), d.name).to.equal(4 * MAX_ROWS_PER_INSERT);
      if (d.name === 'sqlite') expect(text.split(' union all ').length).to.equal(MAX_ROWS_PER_INSERT);
    }
  });

  it('and within the bound variables the dialect allows, for wide rows', function () {
    for (const d of DIALECTS) {
      const batches = new InsertBatches({ knex: sqlBuilder(d.name), dialect: d }, 't', columns(200));
      expect(batches.rowsPerStatement, d.name).to.equal(Math.floor(d.maxParams / 200));
      expect(placeholders(batches.text(batches.rowsPerStatement)), d.name).to.be.at.most(d.maxParams);
    }
  });

  it('a last, smaller batch is one more statement; every row is inserted once, in the order given (SQLite runs a full batch)', async function () {
    const db = openDatabase('sqlite::memory:');
    try {
      await db.schemaWork((knex) => knex.schema.createTable('t', (t) => { t.integer('n').primary(); t.integer('b'); t.text('a'); }));
      const batches = new InsertBatches(db, 't', ['b', 'a'], undefined, 2);
      expect([batches.rowsPerStatement, batches.text(2), batches.text(1)]).to.deep.equal([2,
        'insert into `t` (`a`, `b`) select ? as `a`, ? as `b` union all select ? as `a`, ? as `b`', 'insert into `t` (`a`, `b`) values (?, ?)']);
      await db.transaction((tx) => batches.insert(tx, [[1, 'x'], [2, 'y'], [3, 'z']]));
      expect(await db.all('SELECT b, a FROM t ORDER BY n')).to.deep.equal([{ b: 1, a: 'x' }, { b: 2, a: 'y' }, { b: 3, a: 'z' }]);
      const full = new InsertBatches(db, 't', ['b', 'a']);
      const rows = Array.from({ length: MAX_ROWS_PER_INSERT + 1 }, (_, i) => [i, `r${i}`]);
      await db.transaction((tx) => full.insert(tx, rows));
      expect((await db.all('SELECT b FROM t WHERE n > 3 ORDER BY n')).map((r) => r.b)).to.deep.equal(rows.map(([b]) => b));
    } finally {
      await db.close();
    }
  });
});

describe('Own tables\' statements: a shape and its values', function () {
  const [A, B] = [standIn('a'), standIn('b')];
  const insert = () => sqlBuilder('sqlite')('t').insert({ b: B, a: A });

  it('a shape is kept only when knex takes its values in the order its callers pass them (an insert lists its columns alphabetically)', function () {
    expect(textTaking(insert(), [A, B])).to.equal('insert into `t` (`a`, `b`) values (?, ?)');
    expect(() => textTaking(insert(), [B, A])).to.throw(/otherwise than its callers pass them/);
    expect(() => textTaking(insert(), [A])).to.throw(/otherwise than its callers pass them/);
  });

  it('an in-list is lengthened to the next power of two (at most the batch) by repeating its last value', function () {
    expect(paddedList(['a'], 200)).to.deep.equal(['a']);
    expect(paddedList(['a', 'b', 'c'], 200)).to.deep.equal(['a', 'b', 'c', 'c']);
    expect(paddedList(Array.from({ length: 129 }, (_, i) => i), 200)).to.have.length(200);
    expect(paddedList(Array.from({ length: 200 }, (_, i) => i), 200)).to.have.length(200);
  });
});
