/**
 * `reso-server pull add | list | show | remove | pause | resume | run`: the upstreams this server replicates
 * (src/pull/). Secrets given to `add` are never printed back: `list` and `show` mask them.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { ExitCode, OperatorError } from '../errors/operator-error';
import type { ListingService } from '../process/service';
import { PullProgress } from '../storage/tables/pull-progress';
import { PullTable } from '../storage/tables/pull-table';
import { Puller } from '../pull/puller';
import { PullFailed, PullInvalid, PullSettings, pulledSet, STRATEGIES, Strategy } from '../pull/pull-settings';
import { createUpstream } from '../pull/upstream-client';
import type { UpstreamAuth } from '../pull/upstream';
import { UpstreamStatus, Upstreams, upstreamsOver } from '../pull/upstreams';
import { CommandContext, repeatableList, wholeNumber } from './command-line';
import { table } from './client-commands';

interface AddOptions {
  readonly url: string;
  readonly set: string[];
  readonly filter?: string[];
  readonly token?: string;
  readonly tokenUrl?: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly scope?: string;
  readonly pageSize: number;
  readonly rate: number;
  readonly overlapSeconds: number;
  readonly strategy: Strategy;
}

interface RunOptions {
  readonly follow?: boolean;
  readonly interval: number;
  readonly reconcileEvery: number;
  readonly leaseSeconds: number;
}

const positive = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('Expected a number above 0.');
  return n;
};

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export function pullCommand(context: CommandContext): Command {
  const pull = new Command('pull').description('Replicate upstream RESO Web API feeds into this server: add, list, show, remove, pause, resume, run');
  const withUpstreams = (work: (upstreams: Upstreams, service: ListingService) => Promise<number | void>) => context.run(() => context.withService(async (service) => {
    try {
      return (await work(upstreamsOf(service), service)) ?? ExitCode.ok;
    } catch (e) {
      if (e instanceof PullInvalid) throw new OperatorError(`pull: ${e.message}`, ExitCode.usage);
      if (e instanceof PullFailed) throw new OperatorError(`pull: ${e.message}`, ExitCode.failure);
      throw e;
    }
  }));
  pull.command('add').description('Add an upstream to pull (bearer token, or OAuth2 client credentials)').argument('<name>', 'the upstream\'s name here')
    .requiredOption('--url <url>', 'the upstream\'s service root, e.g. https://feed.example/odata')
    .requiredOption('--set <spec>', 'a set to pull: its name, or UpstreamSet:LocalSet (repeatable, or comma-separated)', repeatableList())
    .option('--filter <Set=filter>', 'an upstream $filter for one set, as Set=filter (repeatable)', collect)
    .option('--token <token>', 'a bearer token')
    .option('--token-url <url>', 'OAuth2 client credentials: the token endpoint')
    .option('--client-id <id>', 'OAuth2 client credentials: the client id')
    .option('--client-secret <secret>', 'OAuth2 client credentials: the secret')
    .option('--scope <scope>', 'OAuth2 client credentials: the scope asked')
    .option('--page-size <N>', 'records per page asked (Prefer: odata.maxpagesize)', wholeNumber(), 1000)
    .option('--rate <per-second>', 'requests per second the upstream allows', positive, 2)
    .option('--overlap-seconds <N>', 'seconds re-read before the checkpoint on every walk', wholeNumber(0), 60)
    .addOption(new Option('--strategy <how>', 'how changes are found: by timestamp, by the upstream\'s event log (RCP-027), or auto (the log when it declares one)')
      .choices([...STRATEGIES]).default('timestamp'))
    .action((name: string, options: AddOptions) => withUpstreams(async (upstreams) => {
      const added = await upstreams.add(settingsFrom(name, options));
      context.log(`upstream ${added.name}: ${added.sets.map((s) => `${s.upstream} → ${s.local}`).join(', ')} from ${added.url} (${authText(added.auth)}); `
        + `run it with reso-server pull run ${added.name}`);
    }));
  pull.command('list').description('Every upstream: state, lag, records pulled, last error (secrets masked)')
    .option('--json', 'as a JSON array')
    .action((options: { json?: boolean }) => withUpstreams(async (upstreams) => {
      const all = await upstreams.list();
      context.log(options.json ? JSON.stringify(all) : listing(all));
    }));
  pull.command('show').description('One upstream, its checkpoints included (secrets masked)').argument('<name>')
    .action((name: string) => withUpstreams(async (upstreams) => { context.log(JSON.stringify(await upstreams.show(name), null, 2)); }));
  for (const [verb, description, said] of [
    ['remove', 'Remove an upstream (the records it wrote stay)', 'removed'],
    ['pause', 'Leave an upstream alone until resumed', 'paused'],
    ['resume', 'Pull a paused or stopped upstream again', 'active'],
  ] as const) {
    pull.command(verb).description(description).argument('<name>').action((name: string) => withUpstreams(async (upstreams) => {
      await upstreams[verb](name);
      context.log(`upstream ${name} ${said}`);
    }));
  }
  pull.command('run').description('Pull an upstream once, or --follow it (SIGTERM stops it cleanly); one puller per upstream at a time')
    .argument('<name>')
    .option('--follow', 'keep pulling, a pass every --interval seconds')
    .option('--interval <seconds>', 'between passes when following', positive, 10)
    .option('--reconcile-every <seconds>', 'look for records removed upstream at most this often (0: every pass)', wholeNumber(0), 3600)
    .option('--lease-seconds <seconds>', 'how long a puller\'s claim on the upstream holds unless renewed', positive, 30)
    .action((name: string, options: RunOptions) => withUpstreams((_upstreams, service) => runPuller(context, service, name, options)));
  return pull;
}

async function runPuller(context: CommandContext, service: ListingService, name: string, options: RunOptions): Promise<number> {
  const puller = new Puller(new PullTable(service.db), new PullProgress(service.db), service, {
    leaseMs: options.leaseSeconds * 1000, intervalMs: options.interval * 1000, reconcileEveryMs: options.reconcileEvery * 1000,
    clock: service.clock, log: (line) => console.error(line),
    connect: (s, onFault) => createUpstream({
      baseUrl: s.baseUrl, auth: s.auth, requestsPerSecond: s.requestsPerSecond, timeoutMs: 60_000, maxResponseBytes: 256 * 1024 * 1024,
      retry: { attempts: 5, firstWaitMs: 500, maxWaitMs: 30_000 },
      onEvent: (event) => { if (event.fault) onFault(event.fault); },
    }),
  });
  const stop = () => puller.stop();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  context.log(`pull ${name}: ${options.follow ? 'following' : 'one pass'}, as puller ${puller.owner}`);
  try {
    const outcome = await puller.run(name, options.follow === true);
    context.log(`pull ${name}: ${outcome.written} record(s) written, ${outcome.removed} removed`);
    return ExitCode.ok;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}

function upstreamsOf(service: ListingService): Upstreams {
  return upstreamsOver(service.db, service.model, service.clock);
}

function settingsFrom(name: string, o: AddOptions): PullSettings {
  const filters = new Map((o.filter ?? []).map((f) => {
    const at = f.indexOf('=');
    if (at <= 0) throw new PullInvalid(`--filter "${f}": expected Set=filter`);
    return [f.slice(0, at).trim(), f.slice(at + 1).trim()] as const;
  }));
  return {
    name, baseUrl: o.url, auth: authFrom(o), sets: o.set.map((s) => pulledSet(s, filters)),
    pageSize: o.pageSize, requestsPerSecond: o.rate, overlapSeconds: o.overlapSeconds, strategy: o.strategy,
  };
}

function authFrom(o: AddOptions): UpstreamAuth {
  const oauth = [o.tokenUrl, o.clientId, o.clientSecret];
  if (o.token !== undefined && oauth.some((v) => v !== undefined)) throw new PullInvalid('give --token, or --token-url with --client-id and --client-secret, not both');
  if (o.token !== undefined) return { kind: 'bearer', token: o.token };
  if (oauth.every((v) => v === undefined)) return { kind: 'none' };
  if (oauth.some((v) => v === undefined)) throw new PullInvalid('OAuth2 client credentials need --token-url, --client-id and --client-secret');
  return { kind: 'client-credentials', tokenUrl: o.tokenUrl!, clientId: o.clientId!, clientSecret: o.clientSecret!, ...(o.scope ? { scope: o.scope } : {}) };
}

function authText(auth: Record<string, string>): string {
  return Object.entries(auth).map(([k, v]) => `${k} ${v}`).join(', ');
}

function listing(all: readonly UpstreamStatus[]): string {
  const rows = all.map((u) => [
    u.name, u.state, u.lagSeconds === null ? '-' : `${u.lagSeconds} s`, String(u.recordsPulled), u.puller ?? '-',
    u.sets.map((s) => (s.upstream === s.local ? s.local : `${s.upstream}:${s.local}`)).join(','), u.auth.kind, u.lastError ?? '-', u.url,
  ]);
  return table(['upstream', 'state', 'lag', 'records', 'puller', 'sets', 'auth', 'last error', 'url'], rows);
}
