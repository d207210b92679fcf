/**
 * Metering by transaction class (spec §1 item 6, §4 "Expansion rules for Property", §8): scripted mixes of
 * requests from several clients, sent concurrently, against usage as the service reports it (GET /admin/usage
 * and `reso-server usage --json`). Expected counts come from the script alone (support/licence-script.ts),
 * never from the service's meter. Also: counts are in the usage journal before the response, survive a restart
 * and a killed process, add up across two instances on one database, and the per-client rate limit answers 429
 * without charging. Each test charges clients of its own and expects the usage it found when it began plus
 * what its own requests cost, so it passes alone or in any order.
 */
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { usageJournalDirFor } from '../src/config/config';
import { Meter } from '../src/metering/meter';
import { UsageTable } from '../src/storage/tables/usage-table';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { request, startTestServer, TEST_TOKEN } from './support/http';
import { originOf, parseCredentials, runCli } from './support/licence-http';
import { ManualClock } from './support/manual-clock';
import { spawnServer } from './support/server-process';
import { CHILDREN, evaluate, Expr, Prng, readTable, render } from './support/licence-oracle';
import { Charge, expectedUsage, run, script, ScriptData, Sent } from './support/licence-script';

const CLIENTS = 3;
const PAGE = 10;
const LISTINGS = 40;
/** Requests in flight at once, several per client: each client's limit on requests in progress is raised to match. */
const CONCURRENCY = 32;
/** The third scripted client is licensed for part of the listings only: its out-of-scope fetches are 404s, not charged. */
const SCOPE: Expr = { k: 'or', a: { k: 'in', field: 'MlsStatus', values: ['Active', 'Pending'] }, b: { k: 'cmp', field: 'ListingKey', op: 'lt', value: 'L000010' } };

interface UsageRow { client: string; hour: string; class: string; count: number }
type Usage = Map<string, Charge>;

const zero = (): Charge[] => Array.from({ length: CLIENTS }, () => ({ A: 0, B: 0 }));

/** Usage `before` plus `charges` of the given clients (by index, as expectedUsage counts them). */
function plus(before: Usage, ids: readonly string[], charges: readonly Charge[]): Usage {
  const out: Usage = new Map([...before].map(([id, c]) => [id, { ...c }]));
  ids.forEach((id, i) => {
    const c = out.get(id) ?? out.set(id, { A: 0, B: 0 }).get(id)!;
    c.A += charges[i].A;
    c.B += charges[i].B;
  });
  return out;
}

describeEachDatabase('Metering by transaction class', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let data: ScriptData;
  let databaseId: string;
  const startHour = new Date().toISOString().slice(0, 13);
  /** The server's clock for rate-limit windows: the rate-limit test moves it instead of waiting a minute. */
  const clock = new ManualClock();
  let clientSets = 0;

  /** CLIENTS fresh clients (the last licensed for part of the listings, with a hidden field) and their static tokens. */
  const scriptedClients = async (): Promise<{ ids: string[]; tokens: string[] }> => {
    const set = ++clientSets;
    const ids = Array.from({ length: CLIENTS }, (_, i) => `meter-${set}-${i}`);
    const tokens: string[] = [];
    for (const [i, id] of ids.entries()) {
      const licence = i === CLIENTS - 1 ? { scope: render(SCOPE), hiddenFields: ['PublicRemarks'] } : {};
      await server.service.clients.add({ id, name: `Metered ${id}`, ...licence });
      tokens.push(await server.service.clients.issueToken(id, undefined));
    }
    return { ids, tokens };
  };

  const byClient = (rows: readonly UsageRow[]) => {
    const out = new Map<string, Charge>();
    for (const r of rows) {
      const c = out.get(r.client) ?? out.set(r.client, { A: 0, B: 0 }).get(r.client)!;
      expect(['A', 'B'], `class of ${JSON.stringify(r)}`).to.include(r.class);
      c[r.class as 'A' | 'B'] += r.count;
    }
    return out;
  };
  const adminUsage = async (root: string, query = ''): Promise<UsageRow[]> => {
    const r = await request(`${originOf(root)}/admin/usage${query}`, { token: TEST_TOKEN });
    expect(r.status, r.text.slice(0, 200)).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^application\/json/);
    return r.json.value;
  };
  const cliUsage = async (): Promise<UsageRow[]> => {
    const r = await runCli(db.url, ['usage', '--json']);
    expect(r.code, r.stderr).to.equal(0);
    const line = r.stdout.trim().split('\n').filter((l) => l.startsWith('[')).pop();
    return JSON.parse(line ?? 'null');
  };
  /** A client's counts in the usage table itself, over all hours. */
  const tableUsage = async (client: string) => {
    const got = { A: 0, B: 0 };
    for (const row of await server.service.db.all('SELECT `class`, `count` FROM `reso_usage` WHERE `client_id` = ?', [client])) {
      got[row.class as 'A' | 'B'] += Number(row.count);
    }
    return got;
  };
  /**
   * Usage journal files of this suite's database (read as text: a header naming the database and the writing
   * process, then seq, client, hour, A, B per line); `of`: those written by this process, or by others.
   */
  const journalFiles = (of: 'this process' | 'others' = 'others') => {
    const dir = usageJournalDirFor(db.url);
    if (!existsSync(dir)) return [];
    return readdirSync(dir).map((name) => join(dir, name)).filter((path) => {
      const [, , database, , pid] = readFileSync(path, 'utf8').split('\n', 1)[0].split('\t');
      return database === databaseId && (Number(pid) === process.pid) === (of === 'this process');
    });
  };
  const journaled = async (client: string) => {
    const got = { A: 0, B: 0 };
    for (const path of journalFiles('this process')) {
      for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
        const [, who, , a, b] = line.split('\t');
        if (who === client) { got.A += Number(a); got.B += Number(b); }
      }
    }
    return got;
  };
  /** Usage by client as this server reports it now: where a test begins. */
  const usageNow = async (): Promise<Usage> => byClient(await adminUsage(server.url));
  /** Asserts usage (per client and class, summed over hours) equals `want`: what the test began with plus what it cost. */
  const expectUsage = (rows: readonly UsageRow[], label: string, want: Usage) => {
    const now = new Date().toISOString().slice(0, 13);
    for (const r of rows) {
      expect(r.hour, `${label}: hour of ${JSON.stringify(r)}`).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}$/);
      expect(r.hour >= startHour && r.hour <= now, `${label}: hour ${r.hour} outside the test's hours`).to.equal(true);
      expect(r.count, `${label}: ${JSON.stringify(r)}`).to.be.above(0);
    }
    const got = byClient(rows);
    const charged = new Map([...want].filter(([, c]) => c.A !== 0 || c.B !== 0));
    expect(Object.fromEntries(got), `${label}: usage by client and class`).to.deep.equal(Object.fromEntries(charged));
  };
  /** Responses with another status than scripted, as lines. */
  const statusProblems = (sent: readonly Sent[]) => sent.filter((s) => s.status !== s.expect)
    .map((s) => `${s.kind} ${s.url}: ${s.status}, expected ${s.expect}`);
  /** Checks the usage reports and the statuses, and fails once with everything that is wrong. */
  const verify = async (sent: readonly Sent[], want: Usage, reports: [string, () => Promise<UsageRow[]>][]) => {
    const problems: string[] = [];
    for (const [label, read] of reports) {
      try {
        expectUsage(await read(), label, want);
      } catch (e) {
        const { actual, expected: wanted } = e as { actual?: unknown; expected?: unknown };
        problems.push(`${(e as Error).message}${actual === undefined ? '' : `: got ${JSON.stringify(actual)}, expected ${JSON.stringify(wanted)}`}`);
      }
    }
    const wrong = statusProblems(sent);
    if (wrong.length) problems.push(`${wrong.length} response(s) with an unexpected status, e.g.\n    ${wrong.slice(0, 8).join('\n    ')}`);
    if (problems.length) expect.fail(problems.join('\n  '));
  };
  const summary = (sent: readonly Sent[]) => {
    const kinds = new Map<string, number>();
    for (const s of sent) kinds.set(s.kind, (kinds.get(s.kind) ?? 0) + 1);
    return kinds;
  };

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url, { pageSize: PAGE, maxConcurrentRequests: CONCURRENCY }, { clock });
    await seedDemoData(server.service, { listings: LISTINGS });
    const children = new Map(await Promise.all(CHILDREN.map(async (c) => [c.set, await readTable(server.service.db, c.set)] as const)));
    const listings = await readTable(server.service.db, 'Property');
    const scoped = new Set(listings.filter((r) => evaluate(SCOPE, r)).map((r) => r.ListingKey as string));
    expect(scoped.size).to.be.within(5, LISTINGS - 5);
    data = {
      listingKeys: listings.map((r) => r.ListingKey as string),
      children,
      members: (await readTable(server.service.db, 'Member')).map((r) => r.MemberKey as string),
      visible: Array.from({ length: CLIENTS }, (_, i) => (i === CLIENTS - 1 ? scoped : undefined)),
    };
    // Journals name the database they belong to (created once, by whoever needs it first).
    databaseId = await server.service.settings.getOrCreate('database-id', () => randomUUID());
  });
  after(async function () {
    this.timeout(60_000);
    await server?.close();
    await db?.drop();
  });

  it('a count is in the usage journal before its response is sent (read right after each response), and in the usage table within USAGE_APPLY_MS', async function () {
    this.timeout(60_000);
    const { ids, tokens } = await scriptedClients();
    const items = script(new Prng(11), data, 1, 40);
    const running = { A: 0, B: 0 };
    for (const s of items) {
      const r = await request(`${server.url}/${s.url}`, { token: tokens[0] });
      expect(r.status, `${s.url}: ${r.text.slice(0, 200)}`).to.equal(s.expect);
      if (s.expect < 400) { running.A += s.charge.A; running.B += s.charge.B; }
      expect(await journaled(ids[0]), `journaled after ${s.kind} ${s.url}`).to.deep.equal(running);
    }
    // Nobody asks for the usage: the meter applies its journal by itself (USAGE_APPLY_MS, 1 s by default).
    const applied = server.service.meter;
    for (let ticks = 0; ticks < 3 && JSON.stringify(await tableUsage(ids[0])) !== JSON.stringify(running); ticks++) await once(applied, 'applied');
    expect(await tableUsage(ids[0]), 'the usage table, without any report asking for it').to.deep.equal(running);
  });

  it('a server process killed (SIGKILL) after answering loses no count: its journal is applied by the next `reso-server usage`, once', async function () {
    this.timeout(120_000);
    const { ids, tokens } = await scriptedClients();
    const begun = await usageNow();
    const before = await tableUsage(ids[1]);
    // The killed process never applies its journal itself: its timer would wait a minute.
    const child = await spawnServer(db.url, { USAGE_APPLY_MS: '60000', MAX_CONCURRENT_REQUESTS: String(CONCURRENCY) });
    let sent: Sent[];
    try {
      sent = await run(script(new Prng(31337), data, CLIENTS, 300), tokens, [child.url], CONCURRENCY, new Prng(5));
    } finally {
      await child.kill();
    }
    expect(statusProblems(sent), child.output()).to.deep.equal([]);
    expect(await tableUsage(ids[1]), 'nothing was applied before the kill: the counts were only in the journal').to.deep.equal(before);
    expect(journalFiles().length, 'the killed process left its journal').to.equal(1);
    const want = plus(begun, ids, expectedUsage(sent, CLIENTS));
    // Two processes find the journal abandoned at once: each entry still counts once.
    const both = await Promise.all([cliUsage(), cliUsage()]);
    await verify(sent, want, [['usage --json, one of two at once', async () => both[0]], ['the other', async () => both[1]], ['usage --json once more', cliUsage]]);
    expect(journalFiles(), 'the journal, applied, is removed').to.deep.equal([]);
  });

  it('a journal left on another host sharing the directory, untouched for minutes, is applied by its complete, well-formed lines; one of another database is left alone', async function () {
    this.timeout(60_000);
    const dir = usageJournalDirFor(db.url);
    mkdirSync(dir, { recursive: true });
    const hour = new Date().toISOString().slice(0, 13);
    const client = `left-behind-${randomBytes(4).toString('hex')}`;
    const write = (id: string, database: string, lines: string[]) => {
      const path = join(dir, `${id}.usage-journal`);
      writeFileSync(path, [`reso-usage-journal 1\t${id}\t${database}\telsewhere.example\t4242`, ...lines].join('\n'));
      const old = new Date(Date.now() - 10 * 60_000);
      utimesSync(path, old, old);
      return path;
    };
    const ours = randomBytes(16).toString('hex');
    const theirs = randomBytes(16).toString('hex');
    // Its owner registered it before writing entries, as every owner does.
    await server.service.db.run('INSERT INTO `reso_usage_journals` (`journal_id`, `applied_seq`) VALUES (?, 0)', [ours]);
    write(ours, databaseId, [
      `1\t${client}\t${hour}\t2\t1`,
      'garbage that is not an entry',
      `2\t${client}\t${hour}\t3\t0`,
      // Torn: the process died writing it, before any response it counts was sent.
      `3\t${client}\t${hour}\t1`,
    ]);
    const foreign = write(theirs, 'another-database', [`1\t${client}\t${hour}\t7\t7`, '']);
    try {
      const rows = (await cliUsage()).filter((r) => r.client === client);
      expect(byClient(rows).get(client)).to.deep.equal({ A: 5, B: 1 });
      expect(existsSync(join(dir, `${ours}.usage-journal`)), 'the applied journal is removed').to.equal(false);
      expect(existsSync(foreign), "another database's journal stays").to.equal(true);
    } finally {
      rmSync(foreign, { force: true });
    }
  });

  it('a journal past its size limit is replaced once applied, while counting goes on: nothing lost or doubled (meter with a 256-byte limit)', async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'reso-journal-'));
    const meter = new Meter(new UsageTable(server.service.db, server.service.settings), { journalDir: dir, applyEveryMs: 5, rotateAtBytes: 256 });
    meter.start();
    const counted = new Map<string, Charge>();
    const files = new Set<string>();
    const rotors = randomBytes(4).toString('hex');
    try {
      for (let round = 0; round < 60; round++) {
        await Promise.all(Array.from({ length: 12 }, (_, i) => {
          const client = `rotor-${rotors}-${i % 3}`;
          const c = counted.get(client) ?? counted.set(client, { A: 0, B: 0 }).get(client)!;
          c.A += 1;
          c.B += i % 2;
          return meter.record(client, { A: 1, B: i % 2 });
        }));
        for (const f of readdirSync(dir)) files.add(f);
        // Now and then the journal is applied (and past 256 bytes replaced) between rounds, not only beside them.
        if (round % 6 === 0) await once(meter, 'applied');
      }
    } finally {
      await meter.close();
    }
    expect(files.size, 'journals written (one per rotation and the first)').to.be.above(2);
    expect(readdirSync(dir), 'journals left after close').to.deep.equal([]);
    for (const [client, c] of counted) expect(await tableUsage(client), client).to.deep.equal(c);
  });

  it('under counting that never pauses, each application of the journal ends (it takes what was journaled when it began), and nothing is lost', async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'reso-journal-'));
    const table = new UsageTable(server.service.db, server.service.settings);
    const client = `steady-${randomBytes(4).toString('hex')}`;
    let recorded = 0;
    let counting = true;
    const more = async () => {
      if (!counting) return;
      await meter.record(client, { A: 1 });
      recorded++;
    };
    // Every batch the table takes, a request finishes meanwhile: an application that chased the journal's end
    // would find a new line after each batch, apply it, and never end.
    const steady: typeof table = Object.create(table, {
      apply: { value: async (id: string, entries: Parameters<typeof table.apply>[1]) => { await table.apply(id, entries); await more(); } },
    });
    const meter = new Meter(steady, { journalDir: dir, applyEveryMs: 5 });
    meter.start();
    try {
      await more();
      for (let i = 0; i < 5; i++) await once(meter, 'applied', { signal: AbortSignal.timeout(10_000) });
      expect(meter.lag().bytes, 'journaled and not yet applied: what finished during the last application, at most').to.be.below(1000);
    } finally {
      counting = false;
      await meter.close();
    }
    expect(await tableUsage(client)).to.deep.equal({ A: recorded, B: 0 });
  });

  it('a journal that cannot be written: 503 with Retry-After and an OData body, and the request is not served uncounted', async function () {
    this.timeout(30_000);
    const blocker = join(mkdtempSync(join(tmpdir(), 'reso-journal-')), 'a-file');
    writeFileSync(blocker, '');
    const { ids, tokens } = await scriptedClients();
    const broken = await startTestServer(serviceModel, db.url, { pageSize: PAGE, maxConcurrentRequests: CONCURRENCY, usageJournalDir: join(blocker, 'journal') });
    try {
      const before = await tableUsage(ids[0]);
      const r = await request(`${broken.url}/Property('${data.listingKeys[0]}')`, { token: tokens[0] });
      expect(r.status, r.text).to.equal(503);
      expect(Number(r.headers.get('retry-after'))).to.be.above(0);
      expect(r.json?.error?.code).to.be.a('string');
      expect(r.json?.error?.message).to.match(/counted/);
      expect(r.json?.value, 'no data in the answer').to.equal(undefined);
      expect(await tableUsage(ids[0])).to.deep.equal(before);
    } finally {
      await broken.close();
    }
  });

  it('a server process killed in the middle of a load: every answered request is counted, and none that was not sent', async function () {
    this.timeout(120_000);
    const { ids, tokens } = await scriptedClients();
    const child = await spawnServer(db.url, { USAGE_APPLY_MS: '50', MAX_CONCURRENT_REQUESTS: String(CONCURRENCY) });
    const key = data.listingKeys[1];
    let issued = 0;
    let answered = 0;
    let killing: Promise<void> | undefined;
    const worker = async () => {
      while (!killing) {
        issued++;
        try {
          const r = await request(`${child.url}/Property('${key}')`, { token: tokens[1] });
          if (r.status === 200) answered++;
          else throw new Error(`status ${r.status}: ${r.text.slice(0, 200)}`);
        } catch (e) {
          if (!killing) throw e;
        }
        if (answered >= 400) killing ??= child.kill();
      }
    };
    const before = byClient(await cliUsage()).get(ids[1]) ?? { A: 0, B: 0 };
    await Promise.all(Array.from({ length: 16 }, worker));
    await killing;
    const after = byClient(await cliUsage()).get(ids[1]) ?? { A: 0, B: 0 };
    expect(after.B, 'class B').to.equal(before.B);
    expect(after.A - before.A, `class A against ${answered} answered and ${issued} sent`).to.be.within(answered, issued);
    expect(journalFiles()).to.deep.equal([]);
  });

  it('≥ 1,000 concurrent requests from 3 clients (key fetches, queries with and without $expand, nextLink walks, /$count, navigation paths, errors): usage equals the script exactly', async function () {
    this.timeout(120_000);
    const { ids, tokens } = await scriptedClients();
    const begun = await usageNow();
    const sent = await run(script(new Prng(12345), data, CLIENTS, 760), tokens, [server.url], CONCURRENCY, new Prng(1));
    const kinds = summary(sent);
    expect(sent.length, JSON.stringify(Object.fromEntries(kinds))).to.be.at.least(1000);
    for (const k of ['key', 'key+expand', 'query', 'query+expand', 'walk', 'count', 'nav', 'related', 'error 400', 'error 403', 'error 404', 'error 501',
      'key (out of scope)', 'nav (out of scope)']) {
      expect(kinds.get(k) ?? 0, `requests of kind ${k}`).to.be.at.least(5);
    }
    expect(sent.filter((s) => s.kind === 'walk').length, 'walks follow nextLink').to.be.above(kinds.size);
    const want = plus(begun, ids, expectedUsage(sent, CLIENTS));
    await verify(sent, want, [['GET /admin/usage', () => adminUsage(server.url)], ['usage --json', cliUsage]]);
    expect(await cliUsage(), 'the CLI and /admin/usage report the same rows').to.deep.equal(await adminUsage(server.url));
  });

  it('GET /admin/usage?client= and from/to narrow the rows; a non-admin client gets 403', async function () {
    this.timeout(30_000);
    const { ids, tokens } = await scriptedClients();
    const sent = await run(script(new Prng(99), data, CLIENTS, 60), tokens, [server.url], CONCURRENCY, new Prng(4));
    expect(statusProblems(sent)).to.deep.equal([]);
    const one = await adminUsage(server.url, `?client=${ids[1]}`);
    expect(one.length).to.be.above(0);
    expect(new Set(one.map((r) => r.client))).to.deep.equal(new Set([ids[1]]));
    const hour = new Date().toISOString().slice(0, 13);
    const window = await adminUsage(server.url, `?from=${startHour}&to=${hour}`);
    expect(window).to.deep.equal(await adminUsage(server.url));
    expect(await adminUsage(server.url, '?from=2000-01-01T00&to=2000-01-01T23')).to.deep.equal([]);
    const denied = await request(`${originOf(server.url)}/admin/usage`, { token: tokens[0] });
    expect(denied.status).to.equal(403);
    const cli = await runCli(db.url, ['usage', '--json', '--client', ids[2]]);
    expect(cli.code, cli.stderr).to.equal(0);
    expect(JSON.parse(cli.stdout.trim().split('\n').pop()!)).to.deep.equal(await adminUsage(server.url, `?client=${ids[2]}`));
  });

  it('after a restart on the same database, another batch adds up exactly (nothing lost, nothing doubled)', async function () {
    this.timeout(120_000);
    const { ids, tokens } = await scriptedClients();
    const begun = await usageNow();
    const first = await run(script(new Prng(778), data, CLIENTS, 150), tokens, [server.url], CONCURRENCY, new Prng(6));
    let want = plus(begun, ids, expectedUsage(first, CLIENTS));
    await server.close();
    expectUsage(await cliUsage(), 'usage --json while no server runs', want);
    server = await startTestServer(serviceModel, db.url, { pageSize: PAGE, maxConcurrentRequests: CONCURRENCY }, { clock });
    expectUsage(await adminUsage(server.url), 'right after the restart', want);
    const sent = await run(script(new Prng(777), data, CLIENTS, 300), tokens, [server.url], CONCURRENCY, new Prng(2));
    want = plus(want, ids, expectedUsage(sent, CLIENTS));
    await verify([...first, ...sent], want, [['GET /admin/usage after the second batch', () => adminUsage(server.url)], ['usage --json after the second batch', cliUsage]]);
  });

  it('two instances on one database at once (walks continue on either): counts add up exactly', async function () {
    this.timeout(120_000);
    const { ids, tokens } = await scriptedClients();
    const begun = await usageNow();
    let want = begun;
    const second = await startTestServer(serviceModel, db.instanceUrl(1), { pageSize: PAGE, maxConcurrentRequests: CONCURRENCY });
    try {
      const sent = await run(script(new Prng(4242), data, CLIENTS, 600), tokens, [server.url, second.url], CONCURRENCY, new Prng(3));
      want = plus(begun, ids, expectedUsage(sent, CLIENTS));
      // Each instance applies its own journal (within USAGE_APPLY_MS; flush: now); its report flushes only its own.
      await second.service.meter.flush();
      await verify(sent, want, [
        ['GET /admin/usage on the first instance', () => adminUsage(server.url)],
        ['GET /admin/usage on the second instance', () => adminUsage(second.url)],
      ]);
    } finally {
      await second.close();
    }
    expectUsage(await cliUsage(), 'usage --json after the second instance stopped', want);
  });

  it('two instances committing the same usage rows in opposite orders: no request fails (e.g. a deadlock as 503), counts add up', async function () {
    this.timeout(120_000);
    const { ids, tokens } = await scriptedClients();
    const begun = await usageNow();
    const second = await startTestServer(serviceModel, db.instanceUrl(1), { pageSize: PAGE, maxConcurrentRequests: CONCURRENCY });
    const sent: Sent[] = [];
    try {
      const key = data.listingKeys[0];
      for (let round = 0; round < 120; round++) {
        // Each instance gets the clients' requests in the other's reverse order, all at once.
        const plan = ids.flatMap((_, i) => [[server.url, i], [second.url, CLIENTS - 1 - i]] as const);
        const replies = await Promise.all(plan.map(([root, i]) => request(`${root}/Property('${key}')`, { token: tokens[i] })));
        replies.forEach((r, n) => sent.push({
          client: plan[n][1], kind: 'key', url: `Property('${key}') on instance ${plan[n][0] === server.url ? 1 : 2}`,
          status: r.status, expect: 200, charge: { A: 1, B: 0 },
        }));
      }
      const want = plus(begun, ids, expectedUsage(sent, CLIENTS));
      await second.service.meter.flush();
      await verify(sent, want, [['GET /admin/usage', () => adminUsage(server.url)]]);
    } finally {
      await second.close();
    }
  });

  it('rate limit (clients add --rate 5): the 6th request within a minute gets 429 with Retry-After and RateLimit-*, uncharged; others are unaffected', async function () {
    this.timeout(60_000);
    const { ids, tokens } = await scriptedClients();
    const begun = await usageNow();
    const limited = `limited-${clientSets}`;
    const added = await runCli(db.url, ['clients', 'add', '--name', 'Limited', '--id', limited, '--rate', '5', '--static-token']);
    expect(added.code, added.stderr).to.equal(0);
    const { token } = parseCredentials(added.stdout);
    const key = data.listingKeys[0];
    const allowed = [`Property('${key}')`, `Property('${key}')?$expand=Media,PropertyRooms`, 'Property?$top=3', 'Property/$count', `Property('${key}')/OpenHouse`];
    for (let i = 0; i < allowed.length; i++) {
      const r = await request(`${server.url}/${allowed[i]}`, { token });
      expect(r.status, `request ${i + 1}: ${r.text.slice(0, 200)}`).to.equal(200);
      expect(r.headers.get('ratelimit-limit'), `request ${i + 1}`).to.equal('5');
      expect(r.headers.get('ratelimit-remaining'), `request ${i + 1}`).to.equal(String(4 - i));
      expect(Number(r.headers.get('ratelimit-reset')), `request ${i + 1}`).to.be.within(1, 60);
    }
    for (const url of [`Property('${key}')`, 'Property?$top=3', 'Property/$count', `Property('${key}')?$expand=Media`]) {
      const r = await request(`${server.url}/${url}`, { token });
      expect(r.status, `${url} past the limit: ${r.text.slice(0, 200)}`).to.equal(429);
      const retry = Number(r.headers.get('retry-after'));
      expect(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${r.headers.get('retry-after')}`).to.equal(true);
      expect(r.headers.get('ratelimit-limit')).to.equal('5');
      expect(r.headers.get('ratelimit-remaining')).to.equal('0');
      expect(Number(r.headers.get('ratelimit-reset'))).to.be.within(1, 60);
      expect(r.json?.error?.code).to.be.a('string');
    }
    // Other clients are unaffected, and so is the demo client.
    for (let i = 0; i < 8; i++) {
      const r = await request(`${server.url}/Property('${key}')`, { token: tokens[1] });
      expect(r.status).to.equal(200);
      expect(r.headers.get('ratelimit-remaining')).to.equal(null);
    }
    // Charged: the five answered requests (A, A+1B for Media, B, B, B); none of the 429s.
    const charges = zero();
    charges[1].A += 8;
    expectUsage(await adminUsage(server.url), 'after the rate-limited requests', plus(plus(begun, ids, charges), [limited], [{ A: 2, B: 4 }]));
  });

  it('rate limit: a new window a minute after the first request of the last one serves the client again', async function () {
    this.timeout(30_000);
    const added = await runCli(db.url, ['clients', 'add', '--name', 'Windowed', '--id', `windowed-${++clientSets}`, '--rate', '2', '--static-token']);
    expect(added.code, added.stderr).to.equal(0);
    const { token } = parseCredentials(added.stdout);
    const url = `${server.url}/Property/$count`;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await request(url, { token })).status);
    expect(statuses, 'two served, the third refused').to.deep.equal([200, 200, 429]);
    clock.advance(59_999);
    const still = await request(url, { token });
    expect(still.status, 'the window is not over yet').to.equal(429);
    expect(still.headers.get('retry-after')).to.equal('1');
    clock.advance(1);
    const fresh = await request(url, { token });
    expect(fresh.status, fresh.text.slice(0, 200)).to.equal(200);
    expect(fresh.headers.get('ratelimit-remaining')).to.equal('1');
    expect(fresh.headers.get('ratelimit-reset')).to.equal('60');
  });

  it('/$count is one class B whatever else the request names ($expand there expands nothing); an error on it costs nothing', async function () {
    this.timeout(30_000);
    const counter = `counter-${++clientSets}`;
    await server.service.clients.add({ id: counter, name: 'Counter' });
    const token = await server.service.clients.issueToken(counter, undefined);
    const usage = async () => byClient(await adminUsage(server.url, `?client=${counter}`)).get(counter) ?? { A: 0, B: 0 };
    const cases: [string, number][] = [
      ['Property/$count', 1],
      ["Property/$count?$filter=MlsStatus%20eq%20'Active'", 1],
      ['Property/$count?$expand=Media,OpenHouse,historyTransactional', 1],
      ['Property/$count?$expand=Media', 1],
      ['Property/$count?$filter=OwnerName%20eq%20%27x%27', 0],
    ];
    const wrong: string[] = [];
    for (const [url, b] of cases) {
      const before = await usage();
      const r = await request(`${server.url}/${url}`, { token });
      const after = await usage();
      const want = r.status === 200 ? b : 0;
      if (after.A !== before.A || after.B - before.B !== want) wrong.push(`${url} → ${r.status} ${r.text.slice(0, 60)}: charged A ${after.A - before.A}, B ${after.B - before.B}; expected B ${want}`);
    }
    expect(wrong).to.deep.equal([]);
  });
}, { cluster: true });
