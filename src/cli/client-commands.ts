/** `reso-server clients …`: the operator's API clients (and the table that `usage` and `webhooks` share). */
import { Command } from 'commander';
import { CREDENTIAL_CHECK_MS, TOKEN_LIFETIME_SECONDS } from '../auth/clients';
import type { Client, Rotation } from '../auth/clients';
import { ExitCode, OperatorError } from '../errors/operator-error';
import { addClient as addChecked, changeScope, ClientAdmin, listClients as allClients, revokeClient, rotateClient } from '../admin/client-admin';
import { CommandContext, repeatableList, wholeNumber } from './command-line';

/** Where a client asks for tokens, for the hint `clients add` prints (BASE_URL's origin, else localhost:$PORT). */
function tokenUrl(context: CommandContext): string {
  const config = context.config();
  const origin = config.baseUrl ? new URL(config.baseUrl).origin : `http://localhost:${config.port || 8080}`;
  return `${origin}/oauth2/token`;
}

const SCOPE = ['--scope <filter>', 'the listings the client sees: an OData filter on Property, e.g. "MlsStatus eq \'Active\'"'] as const;

export function clientsCommand(context: CommandContext): Command {
  const clients = new Command('clients')
    .description('Manage API clients: add, list, show, scope, revoke, rotate')
    .addHelpText('after', '\nAPI clients use OAuth2 client credentials: POST the id and secret to /oauth2/token for a bearer token '
      + '(clients add prints the command).\nrevoke and rotate take effect on running servers within seconds.');
  const withAdmin = (work: (admin: ClientAdmin) => Promise<number>) => context.run(() => context.withService(work));
  clients.command('add').description('Add a client and print its id, secret (shown once), token URL and the curl command that gets a token')
    .requiredOption('--name <name>', 'what the client is called, e.g. "IDX portal"')
    .option('--id <id>', 'its client id: letters, digits, . _ - (default: client-<12 random hex digits>)')
    .option(...SCOPE)
    .option('--hide <fields>', 'fields it never sees: <field> (a listing\'s) or <Set>.<field>; several separated by commas, or --hide repeated', repeatableList())
    .option('--rate <requests/minute>', 'its rate limit', wholeNumber())
    .option('--admin', 'an admin client: sees everything, may use the console and /admin')
    .option('--static-token', 'also issue a token that does not expire (until the client is revoked or rotated)')
    .action((options: AddOptions) => withAdmin((admin) => addClient(admin, options, context.log, tokenUrl(context))));
  clients.command('list').description('Every client: id, name, state, role, scope, hidden fields, rate')
    .option('--json', 'as a JSON array (never a secret)')
    .action((options: { json?: boolean }) => withAdmin((admin) => listClients(admin, options.json === true, context.log)));
  clients.command('show').description('One client, with when it was created').argument('<id>', 'its client id')
    .option('--json', 'as a JSON object (never a secret)')
    .action((id: string, options: { json?: boolean }) => withAdmin((admin) => showClient(admin, id, options.json === true, context.log)));
  clients.command('scope').description('Change the listings a client sees (no --scope: all listings); its replication marks and nextLinks end')
    .argument('<id>', 'its client id').option(...SCOPE)
    .action((id: string, options: { scope?: string }) => withAdmin(async (admin) => {
      await changeScope(admin, id, options.scope);
      context.log(`client ${id} now sees ${options.scope ? `listings where ${options.scope}` : 'all listings'}; its replication marks and nextLinks `
        + 'from before now are refused (ScopeChanged): it walks each set again');
      return ExitCode.ok;
    }));
  clients.command('revoke').description('End a client: its secret and all its tokens stop working').argument('<id>', 'its client id')
    .action((id: string) => withAdmin(async (admin) => {
      await revokeClient(admin, id);
      context.log(`client ${id} revoked: its secret and all its access tokens no longer work (on running servers within ${CREDENTIAL_CHECK_MS / 1000} s)`);
      return ExitCode.ok;
    }));
  clients.command('rotate').description('Give a client a new secret (and static token); the old ones and the tokens issued with them end')
    .argument('<id>', 'its client id')
    .action((id: string) => withAdmin(async (admin) => {
      context.log(rotationReport(id, await rotateClient(admin, id)));
      return ExitCode.ok;
    }));
  return clients;
}

interface AddOptions {
  readonly name: string;
  readonly id?: string;
  readonly scope?: string;
  readonly hide?: readonly string[];
  readonly rate?: number;
  readonly admin?: boolean;
  readonly staticToken?: boolean;
}

async function addClient(admin: ClientAdmin, options: AddOptions, log: (l: string) => void, tokenUrl: string): Promise<number> {
  const { client, secret, staticToken } = await addChecked(admin, {
    id: options.id,
    name: options.name,
    scope: options.scope,
    hiddenFields: options.hide,
    rateLimit: options.rate,
    admin: options.admin === true,
    staticToken: options.staticToken === true,
  });
  log(`client_id:     ${client.id}\nclient_secret: ${secret}   (shown once; only its hash is stored)`);
  if (staticToken) log(`static token:  ${staticToken}   (does not expire; revoke the client to end it)`);
  log(`token URL:     ${tokenUrl}   (client credentials grant; a token lasts ${TOKEN_LIFETIME_SECONDS / 60} minutes)\n\n`
    + `  curl -s -u '${client.id}:${secret}' -d grant_type=client_credentials ${tokenUrl}`);
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
