/**
 * A MariaDB primary with one asynchronous replica (GTID replication), both real `mariadbd` on loopback ports, for
 * the read-replica tests. Started with the Galera cluster's tests (GALERA=1): both need servers of their own.
 * The replica's applier can be stopped and started, to make it lag on purpose.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as mysql from 'mysql2/promise';
import { installDatabase, MARIADBD, ownedByServer, serverUser } from './mariadb-server';
import { until } from './poll';

const BASE = Number(process.env.REPLICA_BASE_PORT ?? 13400);

export class ReplicaPair {
  private readonly processes: ChildProcess[] = [];

  private constructor(private readonly dir: string) {}

  readonly primaryPort = BASE + 1;
  readonly replicaPort = BASE + 2;

  static async start(ms = 60_000): Promise<ReplicaPair> {
    const pair = new ReplicaPair(mkdtempSync(join(tmpdir(), 'reso-replicas-')));
    const deadline = Date.now() + ms;
    for (const [name, port, extra] of [
      ['primary', pair.primaryPort, ['--server-id=1', `--log-bin=${join(pair.dir, 'primary', 'bin')}`]],
      ['replica', pair.replicaPort, ['--server-id=2', '--read-only=1']],
    ] as const) {
      const folder = join(pair.dir, name);
      mkdirSync(folder, { recursive: true });
      ownedByServer(pair.dir);
      installDatabase(folder);
      pair.processes.push(spawn(MARIADBD, [
        '--no-defaults', `--datadir=${folder}`, `--port=${port}`, `--socket=${join(pair.dir, `${name}.sock`)}`, '--bind-address=127.0.0.1', ...serverUser(),
        '--binlog-format=ROW', '--innodb-buffer-pool-size=64M', `--log-error=${join(pair.dir, `${name}.err`)}`, `--pid-file=${join(pair.dir, `${name}.pid`)}`, ...extra,
      ], { stdio: 'ignore' }));
      await until(`the ${name} answering`, () => pair.query(port, 'SELECT 1').then(() => true, () => false), deadline - Date.now(), 200);
    }
    await pair.query(pair.replicaPort, `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${pair.primaryPort}, MASTER_USER='root', MASTER_USE_GTID=slave_pos`);
    await pair.query(pair.replicaPort, 'START SLAVE');
    return pair;
  }

  url(port: number, database: string): string {
    return `mysql://root@127.0.0.1:${port}/${database}`;
  }

  /** A new database on the primary (replicated), and its URL on each. */
  async database(): Promise<{ primary: string; replica: string; drop(): Promise<void> }> {
    const name = `reso_replicas_${process.pid}_${Date.now() % 1_000_000}`;
    await this.query(this.primaryPort, `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    return {
      primary: this.url(this.primaryPort, name),
      replica: this.url(this.replicaPort, name),
      drop: () => this.query(this.primaryPort, `DROP DATABASE IF EXISTS \`${name}\``).then(() => undefined),
    };
  }

  /** The replica stops applying (it lags from now on), or applies again. */
  async applying(on: boolean): Promise<void> {
    await this.query(this.replicaPort, on ? 'START SLAVE SQL_THREAD' : 'STOP SLAVE SQL_THREAD');
  }

  async query(port: number, sql: string): Promise<unknown[]> {
    const conn = await mysql.createConnection(this.url(port, ''));
    try {
      return (await conn.query(sql))[0] as unknown[];
    } finally {
      await conn.end();
    }
  }

  async stop(): Promise<void> {
    for (const p of this.processes) {
      if (p.exitCode !== null) continue;
      const exited = new Promise((resolve) => p.once('exit', resolve));
      p.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
