/**
 * A dictionary served as an operator would serve it, for RESO's tool to read: generated into a folder of its own
 * (never the project's generated/), started on a fresh database (a SQLite file, or a MariaDB database made from
 * MYSQL_URL's server and dropped after) with the demo data written into it, and a static admin token.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as mysql from 'mysql2/promise';
import { generate } from '../codegen/generate';
import { loadGenerated } from '../codegen/load-generated';
import { configFromEnv } from '../src/config/config';
import { seedDemoData } from '../src/demo/demo-data';
import { RunningServer, startServer } from '../src/process/server';

export type DatabaseKind = 'SQLite' | 'MariaDB';

export interface Served {
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;
}

/** A fresh database of `kind` under `dir` (SQLite) or on MYSQL_URL's server, and how to remove it. */
async function freshDatabase(kind: DatabaseKind, dir: string, name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (kind === 'SQLite') return { url: `sqlite:${join(dir, `${name}.sqlite`)}`, drop: async () => undefined };
  const base = process.env.MYSQL_URL;
  if (!base) throw new Error('MariaDB needs MYSQL_URL (mysql://user@host:3306/any)');
  const database = `reso_certify_${process.pid}_${name.replace(/\W/g, '_')}`;
  const admin = async (sql: string) => {
    const conn = await mysql.createConnection(base);
    try {
      await conn.query(sql);
    } finally {
      await conn.end();
    }
  };
  await admin(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  const url = new URL(base);
  url.pathname = `/${database}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS \`${database}\``) };
}

/** `dictionary` generated under `dir`, served on a fresh `kind` database holding `listings` demo listings. */
export async function serve(dictionary: string, kind: DatabaseKind, dir: string, name: string, listings: number): Promise<Served> {
  const generated = join(dir, name, 'generated');
  mkdirSync(generated, { recursive: true });
  generate({ dictionary, outDir: generated });
  const model = loadGenerated(generated);
  const database = await freshDatabase(kind, dir, name);
  const token = randomBytes(32).toString('base64url');
  let server: RunningServer | undefined;
  try {
    const config = { ...configFromEnv({ DATABASE_URL: database.url }), port: 0, seedListings: 0, demoToken: token };
    server = await startServer(model, config);
    await seedDemoData(server.service, { listings });
  } catch (e) {
    await server?.close();
    await database.drop();
    throw e;
  }
  const running = server;
  return { url: running.url, token, close: async () => { await running.close(); await database.drop(); } };
}
