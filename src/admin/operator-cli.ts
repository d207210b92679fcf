/** The operator's commands: `reso-server clients …` and `reso-server usage …` (and the parsing and tables `webhooks …` shares). */
import { CREDENTIAL_CHECK_MS } from '../auth/clients';
import type { Rotation } from '../auth/clients';
import type { Meter, UsageReport } from '../metering/meter';
import { isUsageGrain, USAGE_GRAINS, usageByPeriod, usageCsv } from '../metering/usage-periods';
import { addClient, changeScope, ClientAdmin, listClients, revokeClient, rotateClient } from './client-admin';

export type { ClientAdmin } from './client-admin';

export const CLIENTS_USAGE = `reso-server clients add --name <name> [--id <id>] [--scope "<OData filter on the listings>"]
                       [--hide <field>,<Set>.<field>] [--rate <requests/minute>] [--admin] [--static-token]
reso-server clients list
reso-server clients scope <id> [--scope "<OData filter on the listings>"]   (no --scope: all listings)
reso-server clients revoke <id>
reso-server clients rotate <id>`;

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

export const text = (v: string | true | undefined) => (typeof v === 'string' ? v : undefined);

export async function runClients(admin: ClientAdmin, args: string[], log: (l: string) => void): Promise<number> {
  const [sub, ...rest] = args;
  const { flags, positional } = options(rest);
  const id = positional[0];
  if (['scope', 'revoke', 'rotate'].includes(sub) && !id) throw new Error(`clients ${sub} needs a client id\n\n${CLIENTS_USAGE}`);
  switch (sub) {
    case 'add': {
      const name = text(flags.get('--name'));
      if (!name) throw new Error(`clients add needs --name\n\n${CLIENTS_USAGE}`);
      const rate = text(flags.get('--rate'));
      const added = await addClient(admin, {
        id: text(flags.get('--id')),
        name,
        scope: text(flags.get('--scope')),
        hiddenFields: text(flags.get('--hide'))?.split(',').map((f) => f.trim()).filter(Boolean),
        rateLimit: rate === undefined ? undefined : Number(rate),
        admin: flags.get('--admin') === true,
        staticToken: flags.get('--static-token') === true,
      });
      log(`client_id:     ${added.client.id}\nclient_secret: ${added.secret}   (shown once; only its hash is stored)`);
      if (added.staticToken) log(`static token:  ${added.staticToken}   (does not expire; revoke the client to end it)`);
      return 0;
    }
    case 'list': {
      const rows = (await listClients(admin)).map((c) => [
        c.id, c.name, c.revokedAt ? `revoked ${c.revokedAt}` : 'active', c.admin ? 'admin' : '', c.scope ?? '(all listings)',
        c.hiddenFields.join(',') || '-', c.rateLimit ? `${c.rateLimit}/min` : '-',
      ]);
      log(table(['client', 'name', 'state', 'role', 'scope', 'hidden fields', 'rate'], rows));
      return 0;
    }
    case 'scope': {
      const scope = text(flags.get('--scope'));
      await changeScope(admin, id, scope);
      log(`client ${id} now sees ${scope ? `listings where ${scope}` : 'all listings'}; its replication marks and nextLinks from before now `
        + 'are refused (ScopeChanged): it walks each set again');
      return 0;
    }
    case 'revoke':
      await revokeClient(admin, id);
      log(`client ${id} revoked: its secret and all its access tokens no longer work (on running servers within ${CREDENTIAL_CHECK_MS / 1000} s)`);
      return 0;
    case 'rotate':
      log(rotationReport(id, await rotateClient(admin, id)));
      return 0;
    default:
      throw new Error(CLIENTS_USAGE);
  }
}

/** `usage`: the report, after applying what processes that died left in their journals. */
export async function runUsage(meter: UsageReport & Pick<Meter, 'adoptAbandoned'>, args: string[], log: (l: string) => void): Promise<number> {
  const { flags } = options(args);
  const by = text(flags.get('--by')) ?? 'hour';
  if (!isUsageGrain(by)) throw new Error(`--by takes ${USAGE_GRAINS.join(', ')}`);
  // Counts journaled by server processes that died are owed to the report: apply them first.
  await meter.adoptAbandoned();
  const rows = await meter.usage({ client: text(flags.get('--client')), from: text(flags.get('--from')), to: text(flags.get('--to')) });
  if (flags.get('--json')) {
    log(JSON.stringify(rows));
    return 0;
  }
  const periods = usageByPeriod(rows, by);
  if (flags.get('--csv')) {
    process.stdout.write(usageCsv(periods, by));
    return 0;
  }
  const lines = periods.map((r) => [by === 'hour' ? `${r.period}:00Z` : r.period, r.client, String(r.A), String(r.B)]);
  lines.push(['total', '', String(periods.reduce((n, r) => n + r.A, 0)), String(periods.reduce((n, r) => n + r.B, 0))]);
  log(table([`${by} (UTC)`, 'client', 'class A', 'class B'], lines));
  return 0;
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
