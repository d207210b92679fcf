/**
 * Every storage test runs once per database: SQLite always, MariaDB when MYSQL_URL is set
 * (each suite gets a database of its own, dropped afterwards). Without MYSQL_URL the MariaDB
 * half is registered as pending, and the run says so.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as mysql from 'mysql2/promise';

export const MYSQL_URL = process.env.MYSQL_URL;

export interface TestDatabase {
  /** DATABASE_URL of a fresh, empty database. */
  readonly url: string;
  drop(): Promise<void>;
}

export interface DatabaseTarget {
  readonly label: 'SQLite' | 'MariaDB';
  create(): Promise<TestDatabase>;
}

let counter = 0;

export const sqliteTarget: DatabaseTarget = {
  label: 'SQLite',
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'reso-test-'));
    return { url: `sqlite:${join(dir, 'test.sqlite')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

export const mariadbTarget: DatabaseTarget = {
  label: 'MariaDB',
  async create() {
    if (!MYSQL_URL) throw new Error('MYSQL_URL is not set');
    const name = `reso_test_${process.pid}_${++counter}_${Date.now() % 100000}`;
    const conn = await mysql.createConnection(MYSQL_URL);
    try {
      await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    } finally {
      await conn.end();
    }
    const u = new URL(MYSQL_URL);
    u.pathname = `/${name}`;
    return {
      url: u.toString(),
      drop: async () => {
        const c = await mysql.createConnection(MYSQL_URL);
        try {
          await c.query(`DROP DATABASE IF EXISTS \`${name}\``);
        } finally {
          await c.end();
        }
      },
    };
  },
};

/** Registers `fn` as a describe block per database; `target` tells the suite which one it is on. */
export function describeEachDatabase(title: string, fn: (target: DatabaseTarget) => void): void {
  describe(`${title} (SQLite)`, () => fn(sqliteTarget));
  if (MYSQL_URL) describe(`${title} (MariaDB)`, () => fn(mariadbTarget));
  else describe.skip(`${title} (MariaDB: skipped, MYSQL_URL is not set)`, () => fn(mariadbTarget));
}
