/** An empty database for a bench run: the SQLite file (and its WAL) removed, or the MariaDB/MySQL database made again. */
import { rmSync } from 'node:fs';
import * as mysql from 'mysql2/promise';

export async function freshDatabase(url: string): Promise<void> {
  if (url.startsWith('sqlite:')) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(url.slice('sqlite:'.length) + suffix, { force: true });
    return;
  }
  const u = new URL(url);
  const name = u.pathname.slice(1);
  u.pathname = '/';
  const conn = await mysql.createConnection(u.toString());
  await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await conn.query(`CREATE DATABASE \`${name}\``);
  await conn.end();
}
