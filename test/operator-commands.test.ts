/**
 * docs/command-line.md "Command line": what the operator's commands print. clients list/show --json, the token URL and curl
 * command of clients add (and a token got with them), every --hide kept, rotate refusing a revoked client, client names beside ids in usage, ingest --on-error reject
 * counting the lines it read, seed's and ingest's progress on stderr and summaries on stdout (seed --json: only the
 * counts), and the first start's hint asking for five listings.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer, TEST_TOKEN } from './support/http';
import { parseCredentials, runCli } from './support/licence-http';
import { spawnServer } from './support/server-process';

describeEachDatabase('Operator commands', (target) => {
  let db: TestDatabase;
  let dir: string;
  before(async () => {
    db = await target.create();
    dir = mkdtempSync(join(tmpdir(), 'reso-operator-'));
    // The demo client (TEST_TOKEN) and a few charged requests: usage has rows to name.
    const server = await startTestServer(serviceModel, db.url);
    try {
      for (let i = 0; i < 3; i++) expect((await get(`${server.url}/Property?$top=1`, { Authorization: `Bearer ${TEST_TOKEN}` })).status).to.equal(200);
    } finally {
      await server.close();
    }
  });
  after(async () => {
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('clients add prints the token URL and the curl command that gets a token; the token it gets is served', async () => {
    const added = await runCli(db.url, ['clients', 'add', '--name', 'Portal One', '--id', 'portal-one'], 30_000, { PORT: '8123' });
    expect(added.code, added.stderr).to.equal(0);
    const { id, secret } = parseCredentials(added.stdout);
    expect(added.stdout).to.match(/^token URL:\s+http:\/\/localhost:8123\/oauth2\/token /m);
    const curl = new RegExp(`curl -s -u '${id}:${secret}' -d grant_type=client_credentials http://localhost:8123/oauth2/token$`, 'm');
    expect(added.stdout).to.match(curl);
    const server = await startTestServer(serviceModel, db.url);
    try {
      const origin = new URL(server.url).origin;
      const r = await fetch(`${origin}/oauth2/token`, {
        method: 'POST', body: 'grant_type=client_credentials',
        headers: { Authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(r.status).to.equal(200);
      const token = ((await r.json()) as { access_token: string }).access_token;
      expect((await get(`${server.url}/Property?$top=1`, { Authorization: `Bearer ${token}` })).status).to.equal(200);
    } finally {
      await server.close();
    }
  });

  it('clients list --json and clients show --json give the clients as JSON, never a secret', async () => {
    const list = await runCli(db.url, ['clients', 'list', '--json']);
    expect(list.code, list.stderr).to.equal(0);
    const clients = JSON.parse(list.stdout.trim().split('\n').pop()!) as { id: string; name: string; admin: boolean }[];
    expect(clients.map((c) => c.id)).to.include.members(['demo', 'portal-one']);
    expect(clients.find((c) => c.id === 'portal-one')).to.include({ name: 'Portal One', admin: false });
    expect(list.stdout).not.to.match(/secret|hash|scrypt/i);
    const show = await runCli(db.url, ['clients', 'show', 'portal-one', '--json']);
    expect(JSON.parse(show.stdout.trim().split('\n').pop()!)).to.deep.equal(clients.find((c) => c.id === 'portal-one'));
    const text = await runCli(db.url, ['clients', 'show', 'portal-one']);
    expect(text.stdout).to.match(/^name:\s+Portal One$/m);
    const absent = await runCli(db.url, ['clients', 'show', 'nobody']);
    expect(absent.code).to.equal(2);
    expect(absent.stderr.trim()).to.equal('reso-server: clients show: no client nobody (reso-server clients list shows them)');
  });

  it('clients add keeps every --hide: repeated, and several separated by commas', async () => {
    const added = await runCli(db.url, ['clients', 'add', '--name', 'Hides', '--id', 'hides', '--hide', 'PrivateRemarks', '--hide', 'ShowingInstructions, Media.LongDescription']);
    expect(added.code, added.stderr).to.equal(0);
    const show = await runCli(db.url, ['clients', 'show', 'hides', '--json']);
    expect(JSON.parse(show.stdout.trim().split('\n').pop()!).hiddenFields).to.deep.equal(['PrivateRemarks', 'ShowingInstructions', 'Media.LongDescription']);
  });

  it('clients rotate refuses a revoked client with one line and exit code 2, printing no secret', async () => {
    expect((await runCli(db.url, ['clients', 'add', '--name', 'Gone', '--id', 'gone'])).code).to.equal(0);
    expect((await runCli(db.url, ['clients', 'revoke', 'gone'])).code).to.equal(0);
    const rotate = await runCli(db.url, ['clients', 'rotate', 'gone']);
    expect(rotate.code).to.equal(2);
    expect(rotate.stdout).to.equal('');
    expect(rotate.stderr).to.match(/^reso-server: client gone was revoked at \d{4}-\d\d-\d\dT[\d:.]+Z and cannot be rotated: a revoked client's credentials are ended for good; add a new client instead\n$/);
    expect((await runCli(db.url, ['clients', 'show', 'gone'])).stdout).to.match(/^state:\s+revoked /m);
  });

  it('usage names each client beside its id', async () => {
    const r = await runCli(db.url, ['usage', '--client', 'demo']);
    expect(r.code, r.stderr).to.equal(0);
    const [head, , row] = r.stdout.trim().split('\n').slice(-4);
    expect(head.split(/\s{2,}/)).to.deep.equal(['hour (UTC)', 'client', 'name', 'class A', 'class B']);
    expect(row.split(/\s{2,}/).slice(1, 3)).to.deep.equal(['demo', 'Demo client']);
  });

  it('ingest --on-error reject reports the lines it read and that nothing was written (exit 5); --json the same counts', async () => {
    const file = join(dir, 'offices.ndjson');
    const good = (n: number) => JSON.stringify({ OfficeKey: `OPS${n}`, OfficeName: `Office ${n}` });
    writeFileSync(file, [good(1), good(2), '{not json', good(3), good(4)].join('\n'));
    const r = await runCli(db.url, ['ingest', 'Office', file, '--on-error', 'reject']);
    expect(r.code, r.stderr).to.equal(5);
    expect(r.stderr).to.match(/^line 3: not valid JSON/m);
    expect(r.stdout.trim().split('\n').pop()).to.equal(`REJECTED, nothing written: 1 bad of 5 lines read from ${file}`);
    const json = await runCli(db.url, ['ingest', 'Office', file, '--on-error', 'reject', '--json']);
    expect(JSON.parse(json.stdout.trim().split('\n').pop()!)).to.include({ lines: 5, rejected: true, errors: 1 });
    const skip = await runCli(db.url, ['ingest', 'Office', file]);
    expect(skip.code).to.equal(5);
    expect(skip.stdout.trim().split('\n').pop()).to.match(new RegExp(`^5 lines read from ${file}: .*4 .*; 1 bad lines skipped$`));
    // The time it took on stderr, beside the bad lines (a file this short shows no progress).
    expect(skip.stderr).to.match(/^ingest: 5 lines in [\d.]+ s, [\d,]+ lines\/s$/m);
  });

  it('ingest reports a deletion of a key it does not hold as a notice with its line, counted apart (exit 0)', async () => {
    const file = join(dir, 'office-deletions.ndjson');
    writeFileSync(file, [{ OfficeKey: 'DEL-OFFICE', OfficeName: 'Gone soon' }, { OfficeKey: 'DEL-OFFICE', '@delete': true }, { OfficeKey: 'NO-SUCH-OFFICE', '@delete': true }]
      .map((r) => JSON.stringify(r)).join('\n'));
    const r = await runCli(db.url, ['ingest', 'Office', file]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.match(/^line 3: notice: no Office with key "NO-SUCH-OFFICE": nothing to delete$/m);
    expect(r.stdout.trim().split('\n').pop()).to.equal(`3 lines read from ${file}: 1 created, 1 deleted, 1 not found`);
  });

  it('ingest lists every problem of a bad line with its JSON pointer, on one line', async () => {
    const file = join(dir, 'office-bad.ndjson');
    writeFileSync(file, `${JSON.stringify({ OfficeKey: 'BAD-OFFICE', OfficeName: 7, OfficeStatus: 'Open', Nickname: 'x' })}\n`);
    const r = await runCli(db.url, ['ingest', 'Office', file]);
    expect(r.code).to.equal(5);
    expect(r.stderr).to.match(/^line 1: \/Nickname is not a field of Office; \/OfficeName must be a string; \/OfficeStatus "Open" is not a value of lookup OfficeStatus$/m);
  });

  it('seed shows its progress on stderr and its summary on stdout', async () => {
    const r = await runCli(db.url, ['seed', '--listings', '150', '--seed', '7']);
    expect(r.code, r.stderr).to.equal(0);
    const progress = r.stderr.trim().split('\n');
    expect(progress.length).to.be.within(1, 10);
    expect(progress[progress.length - 1]).to.match(/^listings: 150\/150 \(100%\), [\d,]+\/s, 0 s left$/);
    expect(r.stdout).to.match(/^seeded \{"offices":\d+,"members":\d+,"listings":150,/m);
    // The human summary: counts and the time it took.
    expect(r.stdout).to.match(/^demo data \(seed 7\): 150 listings, \d+ media, .* in [\d.]+s on /m);
  });

  it('seed --json prints only the counts, as one JSON object, on stdout', async () => {
    const r = await runCli(db.url, ['seed', '--listings', '20', '--seed', '8', '--json']);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines, r.stdout).to.have.length(1);
    expect(JSON.parse(lines[0])).to.include({ listings: 20 }).and.have.keys('offices', 'members', 'listings', 'media', 'openHouses', 'history', 'rooms', 'units');
  });
});

describe('First start', () => {
  it('prints the demo token and a request for five listings with a few fields, not a whole page', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reso-first-'));
    const server = await spawnServer(`sqlite:${join(dir, 'first.sqlite')}`, { SEED_LISTINGS: '20' }, /curl -H/);
    try {
      await server.waitFor(/curl -H .*\n/);
      const curl = /curl -H 'Authorization: Bearer (\S+)' '(\S+)'/.exec(server.output());
      expect(curl, server.output()).to.not.equal(null);
      expect(curl![2]).to.match(/\/odata\/Property\?\$top=5&\$select=ListingKey,MlsStatus,PropertyType,ModificationTimestamp$/);
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
