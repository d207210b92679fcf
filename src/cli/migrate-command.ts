/**
 * `reso-server migrate`: brings the database to the dictionary this build was generated from (the start-up
 * work, without serving), or with `--dry-run` says what that would do: the schema migrations pending with their
 * statements, and for each set whose records must change, how many would be rewritten and how many would move
 * their ModificationTimestamp, or which records refuse the change.
 */
import { Command } from 'commander';
import { licenceProblems } from '../auth/licence';
import { ExitCode } from '../errors/operator-error';
import { MigrationPlan, planMigration } from '../storage/migrations/migrate';
import type { SetConversion } from '../storage/migrations/record-migration';
import type { CommandContext } from './command-line';

interface MigrateOptions {
  readonly dryRun?: boolean;
  readonly json?: boolean;
}

export function migrateCommand(context: CommandContext): Command {
  return new Command('migrate')
    .summary('Bring the database to the dictionary: schema migrations, then the records (what a start does, without serving)')
    .description('Apply the schema migrations the database has not had (generated/migrations/, under the start-up lock), '
      + 'then convert the stored records to the dictionary; a record whose value cannot be converted exactly refuses the change and '
      + 'nothing is changed (exit code 6). --dry-run changes nothing and prints the statements and the records affected')
    .usage('[--dry-run] [--json]')
    .option('--dry-run', 'print what a start would do (statements, records affected, refusals) and change nothing')
    .option('--json', 'print it as one JSON object')
    .action((options: MigrateOptions) => context.run(() => (options.dryRun ? dryRun(context, options) : apply(context, options))));
}

async function apply(context: CommandContext, options: MigrateOptions): Promise<number> {
  const said: string[] = [];
  return context.withService(async (service) => {
    const plan = await planMigration(service);
    const due = plan.pending.length > 0 || plan.records.some((r) => r.rewritten > 0);
    await service.prepare();
    if (options.json) context.log(JSON.stringify({ database: service.db.description, done: said }));
    else context.log(due ? `${service.db.description}: done` : `${service.db.description}: already at the dictionary; nothing to do`);
    return ExitCode.ok;
  }, {
    prepare: false,
    log: (line) => {
      said.push(line);
      if (!options.json) context.log(line);
    },
  });
}

async function dryRun(context: CommandContext, options: MigrateOptions): Promise<number> {
  return context.withService(async (service) => {
    const plan = await planMigration(service);
    // A database never started has no clients yet.
    const clients = plan.pending.some((m) => m.name.startsWith('service/')) ? [] : licenceProblems(service.model, await service.clients.list());
    if (options.json) context.log(JSON.stringify({ ...plan, clients }, (k, v: unknown) => (v instanceof Error ? v.message : v)));
    else for (const line of [...describePlan(service.db.description, plan), ...clients.map((c) => `${c}: its requests would be refused (403)`)]) context.log(line);
    return plan.records.some((r) => r.refusedCount > 0) ? ExitCode.migrationRefused : ExitCode.ok;
  }, { prepare: false });
}

/** The plan as an operator reads it. */
export function describePlan(database: string, plan: MigrationPlan): string[] {
  const lines: string[] = [];
  if (plan.pending.length === 0) lines.push(`${database}: no schema migration pending`);
  else lines.push(`${database}: ${plan.pending.length} schema migration(s) pending:`);
  for (const m of plan.pending) {
    lines.push(`  ${m.name}`);
    for (const c of m.changes) lines.push(`    - ${c}`);
    for (const s of m.statements) lines.push(`      ${s};`);
  }
  const records = plan.records.filter((r) => r.records > 0 || r.refusedCount > 0);
  if (records.length) lines.push('records:');
  for (const r of records) lines.push(`  ${recordLine(r)}`);
  const refused = plan.records.some((r) => r.refusedCount > 0);
  lines.push(refused
    ? 'refused: a start would stop here and change nothing; correct the records named above, or the dictionary'
    : plan.pending.length || records.some((r) => r.rewritten) ? 'a start (or `reso-server migrate`) would do this' : 'nothing to do');
  return lines;
}

function recordLine(r: SetConversion): string {
  if (r.refusedCount) return `${r.set}: ${r.refusedCount} of ${r.records} records refuse the change: ${r.refused.map((x) => x.message).join(' | ')}`;
  return `${r.set}: ${r.records} records, ${r.rewritten} rewritten, ${r.restamped} would move their change timestamp (one change-log event each)`;
}
