/**
 * Webhook subscriptions (RCP-028) as the operator manages them: `reso-server webhooks add | list | remove |
 * resume` on a real database, the consumer's token never printed back in full, bad input refused in one line;
 * and the lease each subscription row carries, so that of several instances exactly one delivers a batch.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { runCommandLine } from '../src/cli/main';
import { configFromEnv } from '../src/config/config';
import { ListingService } from '../src/process/service';
import { openDatabase } from '../src/storage/db/open-database';
import { maskToken } from '../src/webhooks/subscriptions';
import { subscriptions } from '../src/webhooks/webhooks';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { runCli } from './support/licence-http';
import { ManualClock } from './support/manual-clock';

const CONSUMER_TOKEN = 'consumer-secret-token-0123456789';

describeEachDatabase('Webhooks: subscriptions and their commands', (target) => {
  let db: TestDatabase;
  let service: ListingService;
  const clock = new ManualClock(Date.UTC(2026, 10, 1));

  before(async () => {
    db = await target.create();
    service = new ListingService(serviceModel, openDatabase(db.url), { clock });
    await service.prepare();
    await service.clients.register({ id: 'idx', name: 'IDX portal' });
    await service.clients.register({ id: 'gone', name: 'Revoked' });
    await service.clients.revoke('gone');
  });

  after(async () => {
    await service?.close();
    await db?.drop();
  });

  /** Runs `webhooks <args>` in this process, on this suite's service; returns what it printed, or the error's message. */
  async function webhooks(...args: string[]): Promise<{ out: string; error?: string }> {
    const lines: string[] = [];
    try {
      await runCommandLine(['webhooks', ...args], { log: (l) => lines.push(l), config: () => configFromEnv({}), withService: (work) => work(service) });
      return { out: lines.join('\n') };
    } catch (e) {
      return { out: lines.join('\n'), error: (e as Error).message };
    }
  }

  it('add, then list (table and --json): state, cursor, failures, lag; the token shown only as its last characters', async () => {
    const added = await runCli(db.url, ['webhooks', 'add', '--client', 'idx', '--url', 'https://consumer.example/hooks', '--token', CONSUMER_TOKEN]);
    expect(added.code, added.stderr).to.equal(0);
    expect(added.stdout).to.match(/^webhook wh-[0-9a-f]{12}: client idx's events go to https:\/\/consumer\.example\/hooks/);
    expect(added.stdout).not.to.include(CONSUMER_TOKEN);
    expect(added.stdout).to.include(maskToken(CONSUMER_TOKEN));
    const listed = await runCli(db.url, ['webhooks', 'list', '--json']);
    expect(listed.code, listed.stderr).to.equal(0);
    const [s] = JSON.parse(listed.stdout);
    expect(s).to.include({ client: 'idx', url: 'https://consumer.example/hooks', state: 'active', cursor: 0, failures: 0, source: 'idx', token: '…6789' });
    const table = await runCli(db.url, ['webhooks', 'list']);
    expect(table.stdout).to.match(/^webhook\s+client\s+name\s+state\s+cursor\s+lag \(events\)/);
    const row = table.stdout.split('\n').find((l) => l.startsWith(s.id))!;
    expect(row.split(/\s{2,}/).slice(1, 3)).to.deep.equal(['idx', 'IDX portal']);
    expect(table.stdout).to.include(s.id).and.not.include(CONSUMER_TOKEN);
    await webhooks('remove', s.id);
  });

  it('bad input is refused with a clear one-line message, and nothing is stored', async () => {
    const cases: [string[], RegExp][] = [
      [['add', '--client', 'idx', '--url', 'ftp://consumer.example/x', '--token', CONSUMER_TOKEN], /^--url must be http or https \(got ftp\)$/],
      [['add', '--client', 'idx', '--url', 'consumer.example/x', '--token', CONSUMER_TOKEN], /^--url "consumer.example\/x" is not an absolute URL/],
      [['add', '--client', 'idx', '--url', 'https://u:p@consumer.example/', '--token', CONSUMER_TOKEN], /^--url must not carry credentials/],
      [['add', '--client', 'idx', '--url', 'https://consumer.example/'], /^webhooks add: required option '--token <token>' not specified \(see reso-server webhooks add --help\)$/],
      [['add', '--url', 'https://consumer.example/', '--token', CONSUMER_TOKEN], /^webhooks add: required option '--client <id>' not specified/],
      [['add', '--client', 'nobody', '--url', 'https://consumer.example/', '--token', CONSUMER_TOKEN], /^no client nobody \(see reso-server clients list\)$/],
      [['add', '--client', 'gone', '--url', 'https://consumer.example/', '--token', CONSUMER_TOKEN], /^client gone is revoked$/],
      [['add', '--client', 'idx', '--url', 'https://consumer.example/', '--token', 'two\nlines'], /^--token may hold only printable ASCII characters$/],
      [['add', '--client', 'idx', '--url', 'https://consumer.example/', '--token', CONSUMER_TOKEN, '--from', '-1'], /^webhooks add: option '--from <sequence>' argument '-1' is invalid\. Expected a whole number of at least 0\./],
      [['add', '--client', 'idx', '--url', 'https://consumer.example/', '--token', CONSUMER_TOKEN, '--bogus', 'x'], /^webhooks add: unknown option '--bogus' \(see reso-server webhooks add --help\)$/],
      [['remove', 'wh-nope'], /^no webhook subscription wh-nope \(see reso-server webhooks list\)$/],
      [['resume', 'wh-nope'], /^no webhook subscription wh-nope/],
      [['resume'], /^webhooks resume: missing required argument 'id'/],
      [['resume', 'wh-nope', '--from', 'latest'], /^webhooks resume: option '--from <sequence>' argument 'latest' is invalid\. Expected a whole number/],
    ];
    for (const [args, message] of cases) {
      const r = await webhooks(...args);
      expect(r.error, args.join(' ')).to.match(message);
      expect(r.error!.split('\n'), args.join(' ')).to.have.length(1);
    }
    expect(await service.webhooks.list()).to.deep.equal([]);
    const cli = await runCli(db.url, ['webhooks', 'add', '--client', 'idx', '--url', 'mailto:x@example.com', '--token', CONSUMER_TOKEN]);
    expect(cli.code, 'refused input: exit code 2 (README, Exit codes)').to.equal(2);
    expect(cli.stderr.trim()).to.equal('reso-server: --url must be http or https (got mailto)');
  });

  it('remove deletes a subscription; resume makes a paused one active and due, its failures forgotten', async () => {
    const out = (await webhooks('add', '--client', 'idx', '--url', 'http://127.0.0.1:9/hook', '--token', CONSUMER_TOKEN, '--source', 'IDX Feed 123', '--from', '42')).out;
    const id = /webhook (wh-\S+):/.exec(out)![1];
    expect((await service.webhooks.get(id))).to.include({ cursor: 42, source: 'IDX Feed 123', state: 'active' });
    await service.webhooks.update(id, { state: 'paused', failures: 10, next_attempt: clock.now() + 60_000, last_error: 'HTTP 500' });
    expect(await service.webhooks.due(clock.now())).to.deep.equal([]);
    const resumed = await webhooks('resume', id);
    expect(resumed.out).to.include(`webhook ${id} is active`);
    const row = (await service.webhooks.get(id))!;
    expect(row).to.include({ state: 'active', failures: 0, next_attempt: 0 });
    expect((await service.webhooks.due(clock.now())).map((r) => r.subscription_id)).to.deep.equal([id]);
    expect((await webhooks('remove', id)).out).to.equal(`webhook ${id} removed`);
    expect(await service.webhooks.get(id)).to.equal(undefined);
  });

  it('a lease: of two instances claiming one subscription at once exactly one wins; an expired lease is taken over and the old holder can no longer write', async () => {
    const other = new ListingService(serviceModel, openDatabase(db.url), { clock });
    try {
      await other.prepare();
      const { id } = await subscriptions(service, undefined).add({ client: 'idx', url: 'http://127.0.0.1:9/hook', token: CONSUMER_TOKEN });
      for (let round = 0; round < 5; round++) {
        const now = clock.now();
        const [seenA, seenB] = [(await service.webhooks.get(id))!, (await other.webhooks.get(id))!];
        const claims = await Promise.all([service.webhooks.claim(seenA, 'A', now, now + 1000), other.webhooks.claim(seenB, 'B', now, now + 1000)]);
        expect(claims.filter(Boolean), `round ${round}`).to.have.length(1);
        const winner = claims.find(Boolean)!;
        expect(await service.webhooks.due(now), 'a held lease is not due').to.deep.equal([]);
        expect(await service.webhooks.finish(winner, { cursor: round + 1 })).to.equal(true);
      }
      expect((await service.webhooks.get(id))!.cursor).to.equal(5);
      // A holder that never finishes: its lease runs out, and another instance takes the subscription over.
      const stuck = (await service.webhooks.claim((await service.webhooks.get(id))!, 'A', clock.now(), clock.now() + 1000))!;
      expect(await other.webhooks.claim((await other.webhooks.get(id))!, 'B', clock.now(), clock.now() + 1000)).to.equal(undefined);
      clock.advance(1001);
      const taken = await other.webhooks.claim((await other.webhooks.get(id))!, 'B', clock.now(), clock.now() + 1000);
      expect(taken?.lease_owner).to.equal('B');
      expect(await service.webhooks.finish(stuck, { cursor: 99 }), 'the old holder').to.equal(false);
      expect(await other.webhooks.finish(taken!, { cursor: 6 })).to.equal(true);
      expect((await service.webhooks.get(id))!).to.include({ cursor: 6, lease_owner: null });
      await service.webhooks.remove(id);
    } finally {
      await other.close();
    }
  });
});
