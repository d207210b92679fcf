/** `reso-server webhooks add | list | remove | resume`: the operator's webhook subscriptions (src/webhooks/). */
import { SubscriptionInvalid, Subscriptions, SubscriptionStatus } from '../webhooks/subscriptions';
import { options, table, text } from './operator-cli';

export const WEBHOOKS_USAGE = `reso-server webhooks add --client <id> --url <https://…> --token <consumer's bearer token>
                        [--source <EntityEventSource header; default: the client id>] [--from <sequence>]
reso-server webhooks list [--json]
reso-server webhooks remove <subscription id>
reso-server webhooks resume <subscription id> [--from <sequence>]
                        (a paused subscription is delivered again, its failures forgotten; --from: after that event)`;

/** Runs one `webhooks …` command; bad input throws an Error whose message is one line (SubscriptionInvalid). */
export async function runWebhooks(subs: Subscriptions | undefined, args: string[], log: (l: string) => void): Promise<number> {
  const [sub, ...rest] = args;
  const { flags, positional } = options(rest);
  if (!subs) throw new Error('the data dictionary declares no event log (RCP-027): there are no events to push');
  switch (sub) {
    case 'add': {
      for (const f of flags.keys()) if (!['--client', '--url', '--token', '--source', '--from'].includes(f)) throw new SubscriptionInvalid(`webhooks add: unknown option ${f}`);
      const from = text(flags.get('--from'));
      const added = await subs.add({
        client: required(flags, '--client'), url: required(flags, '--url'), token: required(flags, '--token'),
        source: text(flags.get('--source')), from: from === undefined ? undefined : Number(from),
      });
      log(`webhook ${added.id}: client ${added.client}'s events go to ${added.url} (token ${added.token}, EntityEventSource ${added.source}) after sequence ${added.cursor}`);
      return 0;
    }
    case 'list': {
      const all = await subs.list();
      log(flags.get('--json') ? JSON.stringify(all) : listing(all));
      return 0;
    }
    case 'remove':
    case 'resume': {
      const id = positional[0];
      if (!id) throw new SubscriptionInvalid(`webhooks ${sub} needs a subscription id (see reso-server webhooks list)`);
      if (sub === 'remove') {
        await subs.remove(id);
        log(`webhook ${id} removed`);
      } else {
        const from = text(flags.get('--from'));
        const s = await subs.resume(id, from === undefined ? undefined : Number(from));
        log(`webhook ${id} is active: the next batch after sequence ${s.cursor} goes out at the next poll`);
      }
      return 0;
    }
    default:
      throw new Error(WEBHOOKS_USAGE);
  }
}

function required(flags: Map<string, string | true>, name: string): string {
  const v = text(flags.get(name));
  if (v === undefined) throw new SubscriptionInvalid(`webhooks add needs ${name}`);
  return v;
}

function listing(all: readonly SubscriptionStatus[]): string {
  const rows = all.map((s) => [
    s.id, s.client, s.state, String(s.cursor), s.lag ? String(s.lag.events) : `? (${s.lagError ?? 'no feed'})`,
    s.waitingSince ?? '-', String(s.failures), s.lastSuccess ?? '-', s.nextAttempt ?? '-', s.lastError ?? '-', s.url,
  ]);
  return table(['webhook', 'client', 'state', 'cursor', 'lag (events)', 'waiting since', 'failures', 'last success', 'next attempt', 'last error', 'url'], rows);
}
