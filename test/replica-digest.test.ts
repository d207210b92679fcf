/**
 * Issue 41, point 2: a digest for replicas (docs/replication.md, "Digest"). A replica built by walking the service
 * with nextLinks, then changed at random (records missing, extra and stale), is reconciled by the reference client
 * (support/digest-client.ts, written from the documentation alone): it finds exactly those keys, in a number of
 * requests within c·d·log_P(n). The digest sees what the client's licence sees (a listing outside its scope is
 * never counted; a hidden timestamp leaves the client no digest), its parameters are checked with OData errors,
 * and $metadata declares it, in XML and JSON.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { seedDemoData } from '../src/demo/demo-data';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import type { RunningServer } from '../src/process/server';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { compareKeys, DigestClient, Key, recordHash, Replica } from './support/digest-client';
import type { UsageRow } from '../src/metering/meter';
import { get, odataError, request, startTestServer, TEST_TOKEN } from './support/http';
import { originOf } from './support/licence-http';
import { walkPages } from './support/next-links';

const LISTINGS = 300;
const SCOPE = "MlsStatus eq 'Active'";
const SCOPED_TOKEN = 'digest-scoped-token';
const NO_TIMESTAMP_TOKEN = 'digest-no-timestamp-token';
const NAMESPACE = serviceModel.namespace;

/** A small seeded generator, so a failure is repeated by its seed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

function sorted(keys: readonly Key[]): Key[] {
  return [...keys].sort(compareKeys);
}

describeEachDatabase('Issue 41: a digest for replicas', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let root: string;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
    await seedDemoData(server.service, { listings: LISTINGS });
    root = server.url;
    const scoped = await server.service.clients.add({ id: 'digest-scoped', name: 'Scoped', scope: SCOPE });
    await server.service.clients.issueToken(scoped.client.id, undefined, SCOPED_TOKEN);
    const blind = await server.service.clients.add({ id: 'digest-no-timestamp', name: 'No timestamp', hiddenFields: ['ModificationTimestamp'] });
    await server.service.clients.issueToken(blind.client.id, undefined, NO_TIMESTAMP_TOKEN);
  });

  after(async () => {
    await server?.close();
    await db?.drop();
  });

  /** The replica a client builds by walking the set's keys and timestamps with nextLinks. */
  async function walkedReplica(set: string, key: string, token = TEST_TOKEN): Promise<Map<Key, string>> {
    const { records } = await walkPages(`${root}/${set}?$select=${key},ModificationTimestamp&$orderby=${key}`, { token });
    return new Map(records.map((r) => [r[key] as Key, r.ModificationTimestamp as string]));
  }

  describe('a replica with random differences (missing, extra, stale) finds exactly them, in c·d·log_P(n) requests', () => {
    for (const [set, key, parts] of [['Property', 'ListingKey', 4], ['Property', 'ListingKey', 16], ['Media', 'MediaKey', 8]] as const) {
      it(`${set}, Parts=${parts}: 10 differences among every record`, async function () {
        this.timeout(60_000);
        const replica = await walkedReplica(set, key);
        const n = replica.size;
        expect(n, 'records to reconcile').to.be.greaterThan(100);
        const rng = random(41 * parts + n);
        const keys = [...replica.keys()];
        const expected = { missing: [] as Key[], extra: [] as Key[], stale: [] as Key[] };
        for (let i = 0; i < 10; i++) {
          const k = keys.splice(Math.floor(rng() * keys.length), 1)[0];
          const kind = i % 3;
          if (kind === 0) {
            replica.delete(k);
            expected.missing.push(k);
          } else if (kind === 1) {
            // A key the service never had, between its neighbours in key order.
            const extra = `${String(k)}~gone`;
            replica.set(extra, '2020-01-01T00:00:00Z');
            expected.extra.push(extra);
          } else {
            replica.set(k, '1999-12-31T23:59:59.999Z');
            expected.stale.push(k);
          }
        }
        const client = new DigestClient({ root, set, key, timestamp: 'ModificationTimestamp', headers: { Authorization: `Bearer ${TEST_TOKEN}` }, parts, leaf: 50 });
        const found = await client.differences(replica);
        expect({ missing: sorted(found.missing), extra: sorted(found.extra), stale: sorted(found.stale) })
          .to.deep.equal({ missing: sorted(expected.missing), extra: sorted(expected.extra), stale: sorted(expected.stale) });
        const bound = 2 * 10 * Math.ceil(Math.log(n) / Math.log(parts)) + 1;
        expect(client.requests, `requests for ${n} records, 10 differences, Parts=${parts} (bound ${bound})`).to.be.at.most(bound);
      });
    }

    it('an unchanged replica costs one request', async () => {
      const replica = await walkedReplica('Property', 'ListingKey');
      const client = new DigestClient({ root, set: 'Property', key: 'ListingKey', timestamp: 'ModificationTimestamp', headers: { Authorization: `Bearer ${TEST_TOKEN}` } });
      expect(await client.differences(replica)).to.deep.equal({ missing: [], extra: [], stale: [], served: new Map() });
      expect(client.requests).to.equal(1);
    });
  });

  describe('consistent with a nextLink walk: a replica kept by the digest alone stays equal to a walk', () => {
    it('listings moving in and out of the scoped client\'s licence and changing, reconciled after each round of changes', async function () {
      this.timeout(120_000);
      const replica = await walkedReplica('Property', 'ListingKey', SCOPED_TOKEN);
      const client = new DigestClient({ root, set: 'Property', key: 'ListingKey', timestamp: 'ModificationTimestamp', headers: { Authorization: `Bearer ${SCOPED_TOKEN}` }, parts: 8 });
      const listings = await server.service.store('Property').all();
      const rng = random(4102);
      let moved = 0;
      for (let round = 0; round < 5; round++) {
        const changed = Array.from({ length: 6 }, () => listings[Math.floor(rng() * listings.length)]).map((l, i) => ({
          ...l, MlsStatus: i % 3 === 2 ? l.MlsStatus : rng() < 0.5 ? 'Active' : 'Pending', PublicRemarks: `round ${round}`,
        }));
        const report = emptyReport();
        await ingestBatch(server.service, 'Property', changed.map((input, i) => ({ line: i + 1, input })), report);
        expect(report.errors, 'ingest').to.deep.equal([]);
        const found = await client.differences(replica);
        moved += found.missing.length + found.extra.length;
        for (const k of found.extra) replica.delete(k);
        for (const [k, t] of found.served) replica.set(k, t);
        expect(replica, `round ${round}`).to.deep.equal(await walkedReplica('Property', 'ListingKey', SCOPED_TOKEN));
      }
      expect(moved, 'listings that entered or left the scope').to.be.greaterThan(0);
    });
  });

  describe('the answer: a collection of DigestRange tiling [From, To), counts and hashes of the records served', () => {
    it('Parts sub-ranges of about equal count, consecutive, the first from From and the last to To', async () => {
      const replica = await walkedReplica('Property', 'ListingKey');
      const r = await get(`${root}/Property/${NAMESPACE}.Digest(From=null,To=null,Parts=7)`);
      expect(r.status).to.equal(200);
      expect(r.json['@odata.context']).to.equal(`${root}/$metadata#Collection(${NAMESPACE}.DigestRange)`);
      const ranges = r.json.value as { From: Key | null; To: Key | null; Count: number; Hash: string }[];
      expect(ranges).to.have.length(7);
      expect([ranges[0].From, ranges[6].To]).to.deep.equal([null, null]);
      for (let i = 1; i < 7; i++) expect(ranges[i].From).to.equal(ranges[i - 1].To);
      const total = ranges.reduce((s, x) => s + x.Count, 0);
      expect(total).to.equal(replica.size);
      for (const x of ranges) expect(x.Count).to.be.within(Math.floor(total / 7), Math.ceil(total / 7));
      // Each range's hash is the sum of its records' hashes, the keys compared as a $filter on the key compares them.
      const keys = sorted([...replica.keys()]);
      for (const x of ranges) {
        const inside = keys.filter((k) => (x.From === null || compareKeys(k, x.From) >= 0) && (x.To === null || compareKeys(k, x.To) < 0));
        let sum = 0n;
        for (const k of inside) sum = (sum + recordHash(k, replica.get(k)!)) & ((1n << 64n) - 1n);
        expect([inside.length, sum.toString(16).padStart(16, '0')]).to.deep.equal([x.Count, x.Hash]);
      }
    });

    it("the hashes of docs/replication.md's example", () => {
      const hex = (h: bigint) => h.toString(16).padStart(16, '0');
      const a = recordHash('3yd-A', '2026-11-02T10:14:03.120Z');
      const b = recordHash('3yd-B', '2026-11-02T10:14:03.121Z');
      expect([hex(a), hex(b), hex((a + b) & ((1n << 64n) - 1n))]).to.deep.equal(['214643c35e46e243', '2ba60e129c18cdc8', '4cec51d5fa5fb00b']);
    });

    it('a range of fewer records than Parts: one sub-range per record', async () => {
      const keys = sorted([...(await walkedReplica('Property', 'ListingKey')).keys()]);
      const r = await get(`${root}/Property/Digest(From='${keys[10]}',To='${keys[13]}',Parts=64)`);
      expect(r.json.value.map((x: { From: Key; To: Key; Count: number }) => [x.From, x.To, x.Count]))
        .to.deep.equal([[keys[10], keys[11], 1], [keys[11], keys[12], 1], [keys[12], keys[13], 1]]);
    });

    it('an empty range is one range of Count 0 and Hash 0000000000000000; the namespace may be left out, and the parentheses (OData 4.01: every parameter is optional); aliases carry values', async () => {
      const empty = await get(`${root}/Property/Digest(From='~~~~',To=null)`);
      expect(empty.json.value).to.deep.equal([{ From: '~~~~', To: null, Count: 0, Hash: '0000000000000000' }]);
      const qualified = await get(`${root}/Property/${NAMESPACE}.Digest(Parts=3)`);
      const bare = await get(`${root}/Property/Digest(Parts=3)`);
      expect(bare.json).to.deep.equal(qualified.json);
      const aliased = await get(`${root}/Property/Digest(From=@f,Parts=@p)?@f=null&@p=3`);
      expect(aliased.json).to.deep.equal(qualified.json);
      const whole = await get(`${root}/Property/Digest()`);
      const noParens = await get(`${root}/Property/Digest`);
      expect([noParens.status, noParens.json]).to.deep.equal([200, whole.json]);
    });

    it('is charged as a query (spec §8): one transaction of class B', async () => {
      const queries = async () => ((await request(`${originOf(root)}/admin/usage`, { token: TEST_TOKEN })).json.value as UsageRow[])
        .filter((u) => u.client === 'digest-scoped' && u.class === 'B').reduce((s, u) => s + u.count, 0);
      const before = await queries();
      expect((await get(`${root}/Property/Digest(Parts=2)`, { Authorization: `Bearer ${SCOPED_TOKEN}` })).status).to.equal(200);
      expect(await queries()).to.equal(before + 1);
    });
  });

  describe('licence-aware: it sees exactly what the client licence sees', () => {
    it("a listing outside the client's scope is never counted nor hashed", async function () {
      this.timeout(60_000);
      const all = await walkedReplica('Property', 'ListingKey');
      const visible = await walkedReplica('Property', 'ListingKey', SCOPED_TOKEN);
      expect(visible.size, 'the scope hides some listings').to.be.within(1, all.size - 1);
      const scoped = await get(`${root}/Property/Digest(Parts=1)`, { Authorization: `Bearer ${SCOPED_TOKEN}` });
      let sum = 0n;
      for (const [k, t] of visible) sum = (sum + recordHash(k, t)) & ((1n << 64n) - 1n);
      expect(scoped.json.value).to.deep.equal([{ From: null, To: null, Count: visible.size, Hash: sum.toString(16).padStart(16, '0') }]);
      // A replica of every listing, reconciled as the scoped client: exactly the hidden listings are extra.
      const client = new DigestClient({ root, set: 'Property', key: 'ListingKey', timestamp: 'ModificationTimestamp', headers: { Authorization: `Bearer ${SCOPED_TOKEN}` } });
      const found = await client.differences(all);
      expect({ missing: found.missing, stale: found.stale }).to.deep.equal({ missing: [], stale: [] });
      expect(sorted(found.extra)).to.deep.equal(sorted([...all.keys()].filter((k) => !visible.has(k))));
      // One hidden listing's own range: counted for the client that sees it, not for the scoped one.
      const hidden = [...all.keys()].find((k) => !visible.has(k)) as string;
      const range = `From='${hidden}',To='${hidden}%00'`;
      expect((await get(`${root}/Property/Digest(${range})`)).json.value[0].Count).to.equal(1);
      expect((await get(`${root}/Property/Digest(${range})`, { Authorization: `Bearer ${SCOPED_TOKEN}` })).json.value[0].Count).to.equal(0);
    });

    it('a client whose licence hides the timestamp has no digest: 404, and its $metadata declares none', async () => {
      const r = await get(`${root}/Property/Digest()`, { Authorization: `Bearer ${NO_TIMESTAMP_TOKEN}` });
      expect([r.status, odataError(r).code]).to.deep.equal([404, 'ResourceNotFound']);
      const xml = await get(`${root}/$metadata`, { Authorization: `Bearer ${NO_TIMESTAMP_TOKEN}` });
      expect(xml.text).not.to.include(`<Parameter Name="Records" Type="Collection(${NAMESPACE}.Property)"`);
      expect(xml.text, 'other sets keep theirs').to.include(`<Parameter Name="Records" Type="Collection(${NAMESPACE}.Member)"`);
    });
  });

  describe('parameters refused with OData errors', () => {
    const cases: [string, number, string, string?][] = [
      ['Property/Digest(Parts=0)', 400, 'ParameterInvalid', 'Parts'],
      ['Property/Digest(Parts=65)', 400, 'ParameterInvalid', 'Parts'],
      ['Property/Digest(Parts=x)', 400, 'ParameterInvalid', 'Parts'],
      ['Property/Digest(From=5)', 400, 'ParameterInvalid', 'From'],
      ["Property/Digest(From='a)", 400, 'ParameterInvalid'],
      ["Property/Digest(To='a'b')", 400, 'ParameterInvalid'],
      ['Property/Digest(Since=1)', 400, 'ParameterInvalid', 'Since'],
      ['Property/Digest(Parts=2,Parts=3)', 400, 'ParameterInvalid', 'Parts'],
      ['Property/Digest(Parts)', 400, 'ParameterInvalid'],
      ["Property/Digest()?$filter=ListingKey eq 'a'", 400, 'OptionNotApplicable', '$filter'],
      ['Property/Digest()?$top=1', 400, 'OptionNotApplicable', '$top'],
      ['Property/Digest()?$bogus=1', 400, 'OptionUnknown', '$bogus'],
      ['EntityEvent/Digest()', 404, 'ResourceNotFound'],
      ['Property/Other.Digest()', 404, 'ResourceNotFound'],
    ];
    for (const [path, status, code, targetName] of cases) {
      it(`${path} → ${status} ${code}`, async () => {
        const r = await get(`${root}/${path}`);
        const e = odataError(r);
        expect([r.status, e.code]).to.deep.equal([status, code]);
        if (targetName) expect(e.target).to.equal(targetName);
      });
    }
  });

  describe('$metadata declares it (XML and JSON) on every set with a replication timestamp', () => {
    it('a bound function per set returning Collection(DigestRange), and the complex type', async () => {
      const xml = (await get(`${root}/$metadata`)).text;
      expect(xml).to.include('<ComplexType Name="DigestRange">');
      expect(xml).to.include(`<Parameter Name="Records" Type="Collection(${NAMESPACE}.Property)" Nullable="false"/>`);
      expect(xml).not.to.include(`Type="Collection(${NAMESPACE}.EntityEvent)"`);
      // Unqualified calls are OData 4.01's default namespaces: the schema says it is one.
      expect(xml).to.include('<Annotation Term="Core.DefaultNamespace"/>');
      const json = (await get(`${root}/$metadata?$format=json`)).json;
      const overloads = json[NAMESPACE].Digest as { $IsBound: boolean; $Parameter: { $Type: string }[]; $ReturnType: { $Type: string } }[];
      const bound = overloads.map((o) => o.$Parameter[0].$Type);
      const timestamped = serviceModel.entitySets.filter((s) => s.changeTimestamp).map((s) => s.entityType);
      expect(bound).to.deep.equal(timestamped);
      expect(overloads.every((o) => o.$IsBound && o.$ReturnType.$Type === `${NAMESPACE}.DigestRange`)).to.equal(true);
      expect(json[NAMESPACE].DigestRange.$Kind).to.equal('ComplexType');
      expect(json[NAMESPACE]['@Core.DefaultNamespace']).to.equal(true);
    });
  });
});
