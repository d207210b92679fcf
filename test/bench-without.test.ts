/**
 * The bench knob RESO_BENCH_WITHOUT (src/foundation/bench-without.ts, docs/benchmarks.md): each mechanism it
 * turns off changes what a request costs and nothing else. A server with every mechanism off (and the record
 * cache off, RECORD_CACHE_MB=0) answers every request with the same records as one with all of them on, and still
 * writes its request lines.
 */
import { expect } from 'chai';
import { MECHANISMS, mechanismsOff } from '../src/foundation/bench-without';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { TEST_TOKEN } from './support/http';
import { runCli } from './support/licence-http';
import { ServerProcess, spawnServer } from './support/server-process';

const LISTINGS = 60;

describe('RESO_BENCH_WITHOUT: the mechanisms it names', function () {
  it('reads a comma-separated list of mechanisms, none when unset or empty', function () {
    expect([...mechanismsOff(undefined)]).to.deep.equal([]);
    expect([...mechanismsOff(' ')]).to.deep.equal([]);
    expect([...mechanismsOff('plan-cache, byte-pieces')]).to.deep.equal(['plan-cache', 'byte-pieces']);
  });

  it('refuses a name it does not know, naming the ones it does', function () {
    expect(() => mechanismsOff('plan-cache,record-cache')).to.throw(/record-cache is no mechanism \(expansion-cache, .*plan-cache\)/);
  });
});

describeEachDatabase('RESO_BENCH_WITHOUT: every mechanism off, the same answers', (target) => {
  let db: TestDatabase;
  let on: ServerProcess | undefined;
  let off: ServerProcess | undefined;
  before(async function () {
    this.timeout(180_000);
    db = await target.create();
    const seeded = await runCli(db.url, ['seed', '--listings', String(LISTINGS)], 170_000);
    expect(seeded.code, seeded.stderr).to.equal(0);
    on = await spawnServer(db.url, { DEMO_TOKEN: TEST_TOKEN, RESO_BENCH_WITHOUT: '', LOG_FORMAT: 'json' });
    off = await spawnServer(db.url, { DEMO_TOKEN: TEST_TOKEN, RESO_BENCH_WITHOUT: MECHANISMS.join(','), RECORD_CACHE_MB: '0', LOG_FORMAT: 'json' });
  });
  after(async () => {
    await Promise.all([on?.kill(), off?.kill()]);
    await db?.drop();
  });

  /** A response's records, without its control information (a context URL names the server's port). */
  async function records(server: ServerProcess, path: string): Promise<string> {
    const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${TEST_TOKEN}` } });
    expect(res.status, path).to.equal(200);
    const body = await res.json() as Record<string, unknown>;
    return JSON.stringify(body.value ?? Object.fromEntries(Object.entries(body).filter(([k]) => !k.startsWith('@'))));
  }

  it('answers keys, pages, filters and expansions alike, asked once and again (kept plans and records)', async function () {
    this.timeout(60_000);
    const keys = JSON.parse(await records(on!, '/Property?$select=ListingKey&$top=3')) as { ListingKey: string }[];
    expect(keys).to.have.length(3);
    const paths = [
      ...keys.map((k) => `/Property('${k.ListingKey}')`),
      '/Property',
      `/Property?$filter=${encodeURIComponent(`ListingKey gt '${keys[0].ListingKey}'`)}&$top=20`,
      '/Property?$expand=Media&$top=20',
      `/Property('${keys[1].ListingKey}')?$expand=Media,OpenHouse`,
    ];
    for (const round of [1, 2]) {
      for (const path of paths) {
        const [a, b] = await Promise.all([records(on!, path), records(off!, path)]);
        expect(b, `${path}, round ${round}`).to.equal(a);
        expect(a.length, path).to.be.above(100);
      }
    }
  });

  it('writes request lines through pino\'s transport when the log thread is off', async function () {
    this.timeout(30_000);
    await records(off!, '/Property?$top=1');
    await off!.waitFor(/"path":"\/odata\/Property\?\$top=1","status":200/, 10_000);
  });
});
