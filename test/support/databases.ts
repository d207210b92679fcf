/**
 * Every storage test runs once per database: SQLite always, MariaDB when MYSQL_URL is set
 * (each suite gets a database of its own, dropped afterwards). Without MYSQL_URL the MariaDB
 * half is registered as pending, and the run says so. The suites whose guarantees span server
 * instances (replication, metering, rate limits, webhook leases) run a third time on a 3-node
 * Galera cluster when GALERA=1, each instance they start on the next node.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as mysql from 'mysql2/promise';
import { GALERA, galeraCluster, galeraDatabase } from './galera';

export const MYSQL_URL = process.env.MYSQL_URL;

export interface TestDatabase {
  /** DATABASE_URL of a fresh, empty database. */
  readonly url: string;
  /**
   * DATABASE_URL for a suite's `n`-th server instance (0 the first): `url` on one database server; on a cluster
   * the same database through node `n % 3 + 1`, so that instances started in turn sit on different nodes.
   */
  instanceUrl(n: number): string;
  drop(): Promise<void>;
}

export interface DatabaseTarget {
  readonly label: 'SQLite' | 'MariaDB' | 'Galera';
  create(): Promise<TestDatabase>;
}

let counter = 0;

export const sqliteTarget: DatabaseTarget = {
  label: 'SQLite',
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'reso-test-'));
    const url = `sqlite:${join(dir, 'test.sqlite')}`;
    return { url, instanceUrl: () => url, drop: async () => rmSync(dir, { recursive: true, force: true }) };
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
      instanceUrl: () => u.toString(),
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

/** A database of its own on the test process's Galera cluster (support/galera.ts), reached through any node. */
export const galeraTarget: DatabaseTarget = {
  label: 'Galera',
  async create() {
    const created = await galeraDatabase(await galeraCluster());
    return { url: created.urls[0], instanceUrl: (n) => created.urls[n % created.urls.length], drop: created.drop };
  },
};

/**
 * Registers `fn` as a describe block per database; `target` tells the suite which one it is on. `cluster`: the
 * suite runs on the Galera cluster too (GALERA=1), for guarantees that must hold across nodes.
 */
export function describeEachDatabase(title: string, fn: (target: DatabaseTarget) => void, options: { cluster?: boolean } = {}): void {
  describe(`${title} (SQLite)`, () => fn(sqliteTarget));
  if (MYSQL_URL) describe(`${title} (MariaDB)`, () => fn(mariadbTarget));
  else describe.skip(`${title} (MariaDB: skipped, MYSQL_URL is not set)`, () => fn(mariadbTarget));
  if (!options.cluster) return;
  if (GALERA) describe(`${title} (Galera, 3 nodes)`, () => fn(galeraTarget));
  else describe.skip(`${title} (Galera: skipped, GALERA is not set)`, () => fn(galeraTarget));
}
