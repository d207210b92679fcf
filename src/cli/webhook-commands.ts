/** `reso-server webhooks add | list | remove | resume`: the operator's webhook subscriptions (src/webhooks/). */
import { Command } from 'commander';
import { ExitCode, OperatorError } from '../errors/operator-error';
import type { ListingService } from '../process/service';
import { SubscriptionInvalid, Subscriptions, SubscriptionStatus } from '../webhooks/subscriptions';
import { subscriptions } from '../webhooks/webhooks';
import { CommandContext, wholeNumber } from './command-line';
import { table } from './client-commands';

interface AddOptions {
  readonly client: string;
  readonly url: string;
  readonly token: string;
  readonly source?: string;
  readonly from?: number;
}

const FROM = ['--from <sequence>', 'deliver the events after this sequence number'] as const;

export function webhooksCommand(context: CommandContext): Command {
  const webhooks = new Command('webhooks').description('Push each client\'s EntityEvents to its consumer\'s URL: add, list, remove, resume');
  /** Runs `work` on the subscriptions; a refused input is a usage error (exit code 2). */
  const withSubscriptions = (work: (subs: Subscriptions, service: ListingService) => Promise<void>) => context.run(() => context.withService(async (service) => {
    await work(subscriptionsOf(service, context), service).catch((e: unknown) => {
      throw e instanceof SubscriptionInvalid ? new OperatorError(e.message, ExitCode.usage) : e;
    });
    return ExitCode.ok;
  }));
  webhooks.command('add').description('Subscribe a consumer\'s URL to a client\'s events (the events the client may see, nothing else)')
    .requiredOption('--client <id>', 'the client whose events are pushed')
    .requiredOption('--url <url>', 'the consumer\'s http or https URL')
    .requiredOption('--token <token>', 'the consumer\'s bearer token, sent with each POST')
    .option('--source <name>', 'the EntityEventSource header (default: the client id)')
    .option(FROM[0], `${FROM[1]} (default 0: the client's whole feed)`, wholeNumber(0))
    .action((options: AddOptions) => withSubscriptions(async (subs) => {
      const added = await subs.add(options);
      context.log(`webhook ${added.id}: client ${added.client}'s events go to ${added.url} (token ${added.token}, EntityEventSource ${added.source}) `
        + `after sequence ${added.cursor}`);
    }));
  webhooks.command('list').description('Every subscription: state, cursor, lag, failures, last error')
    .option('--json', 'as a JSON array (tokens masked)')
    .action((options: { json?: boolean }) => withSubscriptions(async (subs, service) => {
      const all = await subs.list();
      context.log(options.json ? JSON.stringify(all) : listing(all, new Map((await service.clients.list()).map((c) => [c.id, c.name]))));
    }));
  webhooks.command('remove').description('Remove a subscription').argument('<id>', 'the subscription id (see webhooks list)')
    .action((id: string) => withSubscriptions(async (subs) => {
      await subs.remove(id);
      context.log(`webhook ${id} removed`);
    }));
  webhooks.command('resume').description('Deliver a paused subscription again, its failures forgotten')
    .argument('<id>', 'the subscription id (see webhooks list)')
    .option(FROM[0], `${FROM[1]} (default: where it stopped)`, wholeNumber(0))
    .action((id: string, options: { from?: number }) => withSubscriptions(async (subs) => {
      const s = await subs.resume(id, options.from);
      context.log(`webhook ${id} is active: the next batch after sequence ${s.cursor} goes out at the next poll`);
    }));
  return webhooks;
}

function subscriptionsOf(service: ListingService, context: CommandContext): Subscriptions {
  const subs = subscriptions(service, context.config().feedScope);
  if (!subs) throw new Error('the data dictionary declares no event log (RCP-027): there are no events to push');
  return subs;
}

/** `names`: each client's name by id (JSON rows carry the id alone, as GET /admin/webhooks does). */
function listing(all: readonly SubscriptionStatus[], names: ReadonlyMap<string, string>): string {
  const rows = all.map((s) => [
    s.id, s.client, names.get(s.client) ?? '(removed)', s.state, String(s.cursor), s.lag ? String(s.lag.events) : `? (${s.lagError ?? 'no feed'})`,
    s.waitingSince ?? '-', String(s.failures), s.lastSuccess ?? '-', s.nextAttempt ?? '-', s.lastError ?? '-', s.url,
  ]);
  return table(['webhook', 'client', 'name', 'state', 'cursor', 'lag (events)', 'waiting since', 'failures', 'last success', 'next attempt', 'last error', 'url'], rows);
}
