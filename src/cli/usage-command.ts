/** `reso-server usage`: transactions by client, period and class, as a table with each client's name, JSON or CSV. */
import { Command, Option } from 'commander';
import type { ClientRegistry } from '../auth/clients';
import { ExitCode } from '../errors/operator-error';
import type { Meter, UsageReport } from '../metering/meter';
import { USAGE_GRAINS, usageByPeriod, usageCsv, UsageGrain, UsagePeriodRow } from '../metering/usage-periods';
import { CommandContext, usageError, utcHour } from './command-line';
import { table } from './client-commands';

export interface UsageCommand {
  readonly filter: { client?: string; from?: string; to?: string };
  readonly by: UsageGrain;
  readonly format: 'table' | 'json' | 'csv';
}

interface UsageOptions {
  readonly client?: string;
  readonly from?: string;
  readonly to?: string;
  readonly by: UsageGrain;
  readonly json?: boolean;
  readonly csv?: boolean;
}

export function usageCommand(context: CommandContext): Command {
  const usage: Command = new Command('usage')
    .summary('Transactions by client, period and class (A: fetch by key, B: query)')
    .description('Transactions by client, UTC period and class (A: fetch by key, B: query), with the client\'s name')
    .option('--client <id>', 'one client only')
    .option('--from <date>', 'from this UTC date (YYYY-MM-DD) or hour (YYYY-MM-DDTHH), inclusive', utcHour('from'))
    .option('--to <date>', 'to this UTC date or hour, inclusive (a date: to its last hour)', utcHour('to'))
    .addOption(new Option('--by <period>', 'the periods of the table or CSV').choices(USAGE_GRAINS).default('hour'))
    .addOption(new Option('--json', 'the usage table\'s rows (per hour) as JSON').conflicts('csv'))
    .option('--csv', 'the periods as CSV')
    .action((options: UsageOptions) => {
      // Checked before the database is opened, as each option's own value is.
      if (options.from && options.to && options.from > options.to) throw usageError(usage, `--from (${options.from}) is after --to (${options.to})`);
      const command: UsageCommand = {
        filter: { client: options.client, from: options.from, to: options.to },
        by: options.by,
        format: options.json ? 'json' : options.csv ? 'csv' : 'table',
      };
      return context.run(() => context.withService((service) => runUsage(service.meter, service.clients, command, context.log)));
    });
  return usage;
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

