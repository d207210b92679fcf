/**
 * What the pull tests share: an upstream reso-server with its own database and a client token issued on it by the
 * CLI, the pulling server's database with the upstream added by `reso-server pull add`, and the records two
 * servers serve compared without the timestamps each service keeps for itself.
 */
import { serviceModel } from '../../generated';
import { serviceKeptFields } from '../../src/model/service-model';
import type { RunningServer } from '../../src/process/server';
import { parseCredentials, runCli } from './licence-http';
import type { Sets } from './replication-compare';
import type { Rec } from './replication-paging';

/** A client of the upstream, by `clients add --static-token` on its database; returns its token. */
export async function upstreamToken(upstreamDbUrl: string): Promise<string> {
  const r = await runCli(upstreamDbUrl, ['clients', 'add', '--name', 'puller', '--static-token']);
  if (r.code !== 0) throw new Error(`clients add: ${r.stderr}`);
  return parseCredentials(r.stdout).token!;
}

/** `pull add` on the pulling server's database; throws with its output unless it exits 0. */
export async function addUpstream(dbUrl: string, name: string, upstream: RunningServer, token: string, extra: readonly string[] = []): Promise<void> {
  const r = await runCli(dbUrl, ['pull', 'add', name, '--url', upstream.url, '--token', token, ...extra]);
  if (r.code !== 0) throw new Error(`pull add: exit ${r.code}: ${r.stderr}`);
}

/** The records without the fields each service keeps itself (its change timestamps): what a pull copies exactly. */
export function withoutServiceKept(sets: Sets): Sets {
  return Object.fromEntries(Object.entries(sets).map(([name, records]) => {
    const set = serviceModel.entitySets.find((s) => s.name === name)!;
    const kept = serviceKeptFields(set);
    const strip = (r: Rec): Rec => Object.fromEntries(Object.entries(r).filter(([f]) => !kept.includes(f)));
    return [name, new Map([...records].map(([k, r]) => [k, strip(r)]))];
  })) as Sets;
}
