/** The operator's commands: `reso-server clients …` and `reso-server usage …` (and the parsing and tables `webhooks …` shares). */
import { CREDENTIAL_CHECK_MS, TOKEN_LIFETIME_SECONDS } from '../auth/clients';
import type { Client, ClientRegistry, Rotation } from '../auth/clients';
import { ExitCode, OperatorError } from '../exit-codes';
import type { Meter, UsageReport } from '../metering/meter';
import { USAGE_GRAINS, usageByPeriod, usageCsv, UsageGrain, UsagePeriodRow } from '../metering/usage-periods';
import { addClient as addChecked, changeScope, ClientAdmin, listClients as allClients, revokeClient, rotateClient } from './client-admin';
import { choiceOption, CommandArgs, HELP, hourOption, integerOption, OptionKinds, parseCommand, text, usageError } from './command-line';

export type { ClientAdmin } from './client-admin';

export { text } from './command-line';

/** Flags and positionals, for `webhooks …` (the other commands read theirs with parseCommand, which refuses unknown ones). */
export function options(args: string[]): { flags: Map<string, string | true>; positional: string[] } {
  const flags = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) { positional.push(a); continue; }
    const boolean = ['--admin', '--static-token', '--json', '--csv'].includes(a);
    if (boolean) flags.set(a, true);
    else if (args[i + 1] === undefined) throw new Error(`${a} needs a value`);
    else flags.set(a, args[++i]);
  }
  return { flags, positional };
}

/** Where a client asks for tokens, for the hint `clients add` prints (BASE_URL's origin, else localhost:$PORT). */
export interface TokenEndpoint {
  readonly tokenUrl: string;
}

const CLIENT_OPTIONS = {
  add: { name: { type: 'string' }, id: { type: 'string' }, scope: { type: 'string' }, hide: { type: 'string' }, rate: { type: 'string' },
    admin: { type: 'boolean' }, 'static-token': { type: 'boolean' } },
  list: { json: { type: 'boolean' } },
  show: { json: { type: 'boolean' } },
  scope: { scope: { type: 'string' } },
  revoke: {},
  rotate: {},
} satisfies Record<string, OptionKinds>;

type ClientCommand = keyof typeof CLIENT_OPTIONS;

/** A `clients …` command line, read and checked before the database is opened. */
export interface ClientsCommand {
  readonly sub: ClientCommand;
  readonly values: CommandArgs['values'];
  readonly id: string;
}

/** Reads `clients <sub> …`; HELP when help was asked for or no subcommand given. */
export function parseClients(args: string[]): ClientsCommand | typeof HELP {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') return HELP;
  if (!(sub in CLIENT_OPTIONS)) throw usageError('clients', `unknown subcommand ${sub}; one of ${Object.keys(CLIENT_OPTIONS).join(', ')}`);
  const parsed = parseCommand(`clients ${sub}`, rest, CLIENT_OPTIONS[sub as ClientCommand], sub === 'add' || sub === 'list' ? { names: [] } : { names: ['<id>'] });
  if (parsed === HELP) return HELP;
  if (sub === 'add' && !text(parsed.values.name)) throw usageError('clients add', 'missing --name');
  integerOption('clients add', 'rate', parsed.values.rate);
  return { sub: sub as ClientCommand, values: parsed.values, id: parsed.positionals[0] };
}

export async function runClients(admin: ClientAdmin, command: ClientsCommand, log: (l: string) => void, endpoint: TokenEndpoint): Promise<number> {
  const { values, id } = command;
  switch (command.sub) {
    case 'add': return addClient(admin, values, log, endpoint);
    case 'list': return listClients(admin, values.json === true, log);
    case 'show': return showClient(admin, id, values.json === true, log);
    case 'scope': {
      const scope = text(values.scope);
      await changeScope(admin, id, scope);
      log(`client ${id} now sees ${scope ? `listings where ${scope}` : 'all listings'}; its replication marks and nextLinks from before now `
        + 'are refused (ScopeChanged): it walks each set again');
      return ExitCode.ok;
    }
    case 'revoke':
      await revokeClient(admin, id);
      log(`client ${id} revoked: its secret and all its access tokens no longer work (on running servers within ${CREDENTIAL_CHECK_MS / 1000} s)`);
      return ExitCode.ok;
    case 'rotate':
      log(rotationReport(id, await rotateClient(admin, id)));
      return ExitCode.ok;
  }
}

async function addClient(admin: ClientAdmin, values: CommandArgs['values'], log: (l: string) => void, endpoint: TokenEndpoint): Promise<number> {
  const name = text(values.name)!;
  const { client, secret, staticToken } = await addChecked(admin, {
    id: text(values.id),
    name,
    scope: text(values.scope),
    hiddenFields: text(values.hide)?.split(',').map((f) => f.trim()).filter(Boolean),
    rateLimit: integerOption('clients add', 'rate', values.rate),
    admin: values.admin === true,
    staticToken: values['static-token'] === true,
  });
  log(`client_id:     ${client.id}\nclient_secret: ${secret}   (shown once; only its hash is stored)`);
  if (staticToken) log(`static token:  ${staticToken}   (does not expire; revoke the client to end it)`);
  log(`token URL:     ${endpoint.tokenUrl}   (client credentials grant; a token lasts ${TOKEN_LIFETIME_SECONDS / 60} minutes)\n\n`
    + `  curl -s -u '${client.id}:${secret}' -d grant_type=client_credentials ${endpoint.tokenUrl}`);
  return ExitCode.ok;
}

const clientRow = (c: Client) => [
  c.id, c.name, c.revokedAt ? `revoked ${c.revokedAt}` : 'active', c.admin ? 'admin' : '', c.scope ?? '(all listings)',
  c.hiddenFields.join(',') || '-', c.rateLimit ? `${c.rateLimit}/min` : '-',
];
const CLIENT_HEAD = ['client', 'name', 'state', 'role', 'scope', 'hidden fields', 'rate'];

async function listClients(admin: ClientAdmin, json: boolean, log: (l: string) => void): Promise<number> {
  const clients = await allClients(admin);
  log(json ? JSON.stringify(clients.map(publicClient)) : table(CLIENT_HEAD, clients.map(clientRow)));
  return ExitCode.ok;
}

async function showClient(admin: ClientAdmin, id: string, json: boolean, log: (l: string) => void): Promise<number> {
  const client = await admin.clients.get(id);
  if (!client) throw new OperatorError(`clients show: no client ${id} (reso-server clients list shows them)`, ExitCode.usage);
  if (json) { log(JSON.stringify(publicClient(client))); return ExitCode.ok; }
  const row = clientRow(client);
  log([...CLIENT_HEAD.map((h, i) => `${`${h}:`.padEnd(15)}${row[i]}`), `${'created:'.padEnd(15)}${client.createdAt}`].join('\n'));
  return ExitCode.ok;
}

/** A client as the command line shows it: what the operator set, never anything secret. */
function publicClient(c: Client): Record<string, unknown> {
  return {
    id: c.id, name: c.name, admin: c.admin, scope: c.scope ?? null, hiddenFields: c.hiddenFields, rateLimit: c.rateLimit ?? null,
    createdAt: c.createdAt, revokedAt: c.revokedAt ?? null,
  };
}

export interface UsageCommand {
  readonly filter: { client?: string; from?: string; to?: string };
  readonly by: UsageGrain;
  readonly format: 'table' | 'json' | 'csv';
}

/** Reads `usage …`, dates checked, before the database is opened. */
export function parseUsage(args: string[]): UsageCommand | typeof HELP {
  const parsed = parseCommand('usage', args, {
    client: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, by: { type: 'string' }, json: { type: 'boolean' }, csv: { type: 'boolean' },
  });
  if (parsed === HELP) return HELP;
  const { values } = parsed;
  const filter = { client: text(values.client), from: hourOption('usage', 'from', values.from), to: hourOption('usage', 'to', values.to) };
  if (filter.from && filter.to && filter.from > filter.to) throw usageError('usage', `--from ${String(values.from)} is after --to ${String(values.to)}`);
  if (values.json && values.csv) throw usageError('usage', '--json and --csv: one or the other');
  const by = choiceOption('usage', 'by', values.by, USAGE_GRAINS, 'hour');
  return { filter, by, format: values.json ? 'json' : values.csv ? 'csv' : 'table' };
}

/** `usage`: the report, after applying what processes that died left in their journals. */
export async function runUsage(
  meter: UsageReport & Pick<Meter, 'adoptAbandoned'>, clients: Pick<ClientRegistry, 'list'>, command: UsageCommand, log: (l: string) => void,
): Promise<number> {
  // Counts journaled by server processes that died are owed to the report: apply them first.
  await meter.adoptAbandoned();
  const rows = await meter.usage(command.filter);
  // JSON rows are those of GET /admin/usage (names: clients list --json); the table shows each client's name.
  if (command.format === 'json') {
    log(JSON.stringify(rows));
    return ExitCode.ok;
  }
  const periods = usageByPeriod(rows, command.by);
  if (command.format === 'csv') {
    process.stdout.write(usageCsv(periods, command.by));
    return ExitCode.ok;
  }
  log(usageTable(periods, command.by, new Map((await clients.list()).map((c) => [c.id, c.name]))));
  return ExitCode.ok;
}

function usageTable(periods: UsagePeriodRow[], by: UsageGrain, names: Map<string, string>): string {
  const lines = periods.map((r) => [by === 'hour' ? `${r.period}:00Z` : r.period, r.client, names.get(r.client) ?? '(removed)', String(r.A), String(r.B)]);
  lines.push(['total', '', '', String(periods.reduce((n, r) => n + r.A, 0)), String(periods.reduce((n, r) => n + r.B, 0))]);
  return table([`${by} (UTC)`, 'client', 'name', 'class A', 'class B'], lines);
}

/** What `clients rotate` prints: the new credentials, and what became of the old ones. */
function rotationReport(id: string, r: Rotation): string {
  const bound = `on running servers within ${CREDENTIAL_CHECK_MS / 1000} s`;
  const lines = [
    `client_id:     ${id}`,
    `client_secret: ${r.secret}   (shown once; the old secret no longer works)`,
    ...(r.staticToken ? [`static token:  ${r.staticToken}   (replaces the old static token, which no longer works)`] : []),
    `old tokens:    ${r.tokensEnded} access token${r.tokensEnded === 1 ? '' : 's'} issued before the rotation no longer work (${bound})`,
  ];
  return lines.join('\n');
}

export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
