/**
 * A real MariaDB Galera cluster for the tests: three `mariadbd` with the Galera provider (Debian's galera-4), group
 * communication on loopback ports, state transfer by rsync (which runs as the server's user: the data folders are
 * theirs). Started when GALERA=1 (.ci/run sets it), once per test process, in about 15–30 s: node 1 bootstraps the
 * cluster, nodes 2 and 3 join it by a full state transfer. A node can be killed (SIGKILL) and started again; it
 * rejoins by incremental state transfer from the others' cache (or a full one).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as mysql from 'mysql2/promise';
import { INSTALL_DB, installDatabase, MARIADBD, ownedByServer, serverUser } from './mariadb-server';
import { retryingWhile, until } from './poll';

export const GALERA = process.env.GALERA === '1';

const PROVIDER = '/usr/lib/galera/libgalera_smm.so';
/** SQL ports BASE+1..3; group communication, incremental and full state transfer on their own ranges. */
const BASE = Number(process.env.GALERA_BASE_PORT ?? 13310);

/**
 * A node that stops answering is suspected after 1.5 s and dropped after 3 s (Galera's defaults: 5 s and 15 s).
 * Until then every node's commits and causal reads wait for it, so production.md has operators keep the suspicion
 * shorter than DB_STATEMENT_TIMEOUT_MS (2.5 s): the lost node's instance answers 503, the others only wait.
 */
const EVICTION = 'evs.keepalive_period=PT0.3S;evs.suspect_timeout=PT1.5S;evs.inactive_timeout=PT3S';

/**
 * A lost node's eviction (1.5 s of suspicion, above) stalls causal reads on every node for about 2.4 s (measured):
 * DB_STATEMENT_TIMEOUT_MS above that, as docs/production.md advises on a cluster, for the instances of tests that
 * lose a node.
 */
export const CLUSTER_TIMEOUTS = { acquireMs: 2000, statementMs: 5000 };

export interface GaleraNode {
  readonly index: number;
  readonly port: number;
}

export class GaleraCluster {
  readonly nodes: readonly GaleraNode[] = [1, 2, 3].map((index) => ({ index, port: BASE + index }));
  private readonly processes = new Map<number, ChildProcess>();

  private constructor(private readonly dir: string) {}

  /** A new cluster, every node synced; throws (with the nodes' error logs) if it does not come up in `ms`. */
  static async start(ms = 120_000): Promise<GaleraCluster> {
    for (const path of [PROVIDER, MARIADBD, '/usr/bin/rsync', INSTALL_DB]) {
      if (!existsSync(path)) throw new Error(`GALERA=1 needs ${path} (Debian: apt-get install galera-4 rsync socat mariadb-server)`);
    }
    const cluster = new GaleraCluster(mkdtempSync(join(tmpdir(), 'reso-galera-')));
    ownedByServer(cluster.dir);
    const first = cluster.folder(1);
    mkdirSync(first);
    installDatabase(first);
    const deadline = Date.now() + ms;
    await cluster.startNode(1, deadline, true);
    for (const n of [2, 3]) await cluster.startNode(n, deadline);
    return cluster;
  }

  /** A database URL on `node` (1–3). */
  url(node: number, database: string): string {
    return `mysql://root@127.0.0.1:${BASE + node}/${database}`;
  }

  /** The node's server's pid file (its mariadbd writes it once started). */
  pidFile(node: number): string {
    return join(this.dir, `n${node}.pid`);
  }

  /** Kills the node's server outright (no shutdown); its instances lose their database. */
  async kill(node: number): Promise<void> {
    const p = this.processes.get(node);
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((resolve) => p.once('exit', resolve));
    p.kill('SIGKILL');
    await exited;
    this.processes.delete(node);
  }

  /** Whether the node's server process runs (it may still be joining). */
  running(node: number): boolean {
    const p = this.processes.get(node);
    return p !== undefined && p.exitCode === null && p.signalCode === null;
  }

  /**
   * Starts a stopped node again; resolves once it is synced with the others. As galera_recovery does under systemd,
   * the position a killed node reached is recovered from its InnoDB log first, so it rejoins by incremental state
   * transfer from the others' cache (not a full copy that blocks its donor).
   */
  async restart(node: number, ms = 120_000): Promise<void> {
    await this.startNode(node, Date.now() + ms, false, this.recoveredPosition(node));
  }

  /** `uuid:seqno` as `mariadbd --wsrep-recover` finds it in the node's data folder, if it does. */
  private recoveredPosition(node: number): string | undefined {
    const log = join(this.dir, `n${node}.recover.err`);
    try {
      execFileSync(MARIADBD, ['--no-defaults', `--datadir=${this.folder(node)}`, ...serverUser(), '--wsrep-recover', '--innodb-buffer-pool-size=64M',
        `--log-error=${log}`, `--socket=${join(this.dir, `n${node}.recover.sock`)}`, '--skip-networking'], { stdio: 'ignore', timeout: 60_000 });
    } catch {
      return undefined;
    }
    return /WSREP: Recovered position:\s+(\S+:-?\d+)/.exec(existsSync(log) ? readFileSync(log, 'utf8') : '')?.[1];
  }

  /** The node's status variables that say whether it serves (wsrep_ready, wsrep_cluster_size, its state). */
  async status(node: number): Promise<Record<string, string>> {
    const rows = await this.query(node, "SHOW STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_cluster_size', 'wsrep_local_state_comment', 'wsrep_cluster_status')");
    return Object.fromEntries((rows as { Variable_name: string; Value: string }[]).map((r) => [r.Variable_name, r.Value]));
  }

  /** One statement on the node, outside any test database (a setting, a status). */
  async query(node: number, sql: string): Promise<unknown> {
    const conn = await mysql.createConnection(this.url(node, ''));
    try {
      return (await conn.query(sql))[0];
    } finally {
      await conn.end();
    }
  }

  /**
   * `query`, again while the node refuses because it is outside a primary component or still joining ("WSREP has not
   * yet prepared node for application use"), for at most a minute.
   */
  queryWhenReady(node: number, sql: string): Promise<unknown> {
    return retryingWhile(() => this.query(node, sql), (e) => (e as { code?: string }).code === 'ER_UNKNOWN_COM_ERROR');
  }

  async stop(): Promise<void> {
    for (const node of [...this.processes.keys()]) await this.kill(node);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async startNode(node: number, deadline: number, bootstrap = false, position?: string): Promise<void> {
    const folder = this.folder(node);
    mkdirSync(folder, { recursive: true });
    ownedByServer(folder);
    const peers = this.nodes.map((n) => `127.0.0.1:${BASE + 100 + n.index}`).join(',');
    const args = [
      '--no-defaults', `--datadir=${folder}`, `--port=${BASE + node}`, `--socket=${join(this.dir, `n${node}.sock`)}`, '--bind-address=127.0.0.1',
      ...serverUser(), '--binlog-format=ROW', '--default-storage-engine=InnoDB', '--innodb-autoinc-lock-mode=2', '--innodb-buffer-pool-size=128M',
      '--innodb-log-file-size=48M', '--max-connections=300', '--wsrep-on=ON', `--wsrep-provider=${PROVIDER}`, '--wsrep-cluster-name=reso-test',
      `--wsrep-cluster-address=gcomm://${peers}`, `--wsrep-node-address=127.0.0.1:${BASE + 100 + node}`, `--wsrep-node-name=n${node}`,
      `--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:${BASE + 100 + node};ist.recv_addr=127.0.0.1:${BASE + 200 + node};gcache.size=128M;${EVICTION}`,
      '--wsrep-sst-method=rsync', `--wsrep-sst-receive-address=127.0.0.1:${BASE + 300 + node}`, `--log-error=${join(this.dir, `n${node}.err`)}`,
      `--pid-file=${join(this.dir, `n${node}.pid`)}`, ...(bootstrap ? ['--wsrep-new-cluster'] : []), ...(position ? [`--wsrep-start-position=${position}`] : []),
    ];
    const p = spawn(MARIADBD, args, { stdio: 'ignore' });
    this.processes.set(node, p);
    let state: Record<string, string> | undefined;
    await until(() => `Galera node ${node} synced (${JSON.stringify(state)}):\n${this.log(node)}`, async () => {
      if (p.exitCode !== null) throw new Error(`Galera node ${node} exited (${p.exitCode}):\n${this.log(node)}`);
      state = await this.status(node).catch(() => undefined);
      return state?.wsrep_ready === 'ON' && state.wsrep_local_state_comment === 'Synced';
    }, deadline - Date.now(), 250);
  }

  private folder(node: number): string {
    return join(this.dir, `n${node}`);
  }

  private log(node: number): string {
    const file = join(this.dir, `n${node}.err`);
    return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-30).join('\n') : '(no log)';
  }
}

let shared: Promise<GaleraCluster> | undefined;

/** The test process's cluster, started on first use and stopped when the process's tests end (hooks.ts). */
export function galeraCluster(): Promise<GaleraCluster> {
  shared ??= GaleraCluster.start();
  return shared;
}

export async function stopGaleraCluster(): Promise<void> {
  // A cluster that never came up has nothing to stop (its start's failure was reported where it happened).
  const cluster = await shared?.catch(() => undefined);
  await cluster?.stop();
  shared = undefined;
}

/** A new database on the cluster (created through node 1, replicated to every node), and how to drop it. */
export async function galeraDatabase(cluster: GaleraCluster): Promise<{ name: string; urls: string[]; drop(): Promise<void> }> {
  const name = `reso_galera_${process.pid}_${Date.now() % 1_000_000}`;
  await cluster.query(1, `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  // Each node applies the statement in the cluster's order, some a moment later: a causal read waits for that.
  for (const node of cluster.nodes) {
    const [found] = await cluster.query(node.index, `SET STATEMENT wsrep_sync_wait = 1 FOR SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '${name}'`) as unknown[][];
    if (!found) throw new Error(`database ${name} not on node ${node.index} after a causal read`);
  }
  return {
    name,
    urls: [1, 2, 3].map((n) => cluster.url(n, name)),
    // A suite that failed while the cluster changed membership drops its database once node 1 serves again.
    drop: async () => { await cluster.queryWhenReady(1, `DROP DATABASE IF EXISTS \`${name}\``); },
  };
}
