/**
 * The change log as a resource (RESO RCP-027, EntityEvent): every committed change appends one event in its own
 * transaction, numbered in commit order, children before their listing; `EntityEventSequence gt N` pages like
 * any query; a client sees the events of records it may see, and of records it could see just before they left
 * its view, never those of records it never could see. The end-to-end consumer is in replication.test.ts.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import type { EntitySetName, Lookups } from '../generated/entities';
import { bindQuery } from '../src/query/bind-query';
import { parseQueryOptions } from '../src/query/parse-options';
import { allOf } from '../src/query/predicates';
import { WHOLE_RECORD } from '../src/query/projection';
import { Visibility } from '../src/query/visibility';
import { RecordQueries } from '../src/storage/records/record-queries';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { ListingFixtures, listingFixtures } from './support/listing-fixtures';
import type { IngestLine } from './support/typed-records';
import { get, startTestServer, TEST_TOKEN } from './support/http';
import { walkPages } from './support/next-links';
import type { Rec } from './support/replication-paging';
import { storedRecords } from './support/replication-writer';

const SCOPED_TOKEN = 'events-scoped-token';
const HIDING_TOKEN = 'events-hiding-token';

interface Event { EntityEventSequence: number; ResourceName: string; ResourceRecordKey: string }

describeEachDatabase('EntityEvent (RCP-027)', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let fixtures: ListingFixtures;
  let seq = 0;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
    await seedDemoData(server.service, { listings: 4 });
    fixtures = await listingFixtures(server.service, 'E');
    const { client } = await server.service.clients.add({ id: 'events-scoped', name: 'Scoped', scope: "MlsStatus ne 'Withdrawn'" });
    await server.service.clients.issueToken(client.id, undefined, SCOPED_TOKEN);
    const hiding = await server.service.clients.add({ id: 'events-hiding', name: 'Hiding', hiddenFields: ['ListPrice'] });
    await server.service.clients.issueToken(hiding.client.id, undefined, HIDING_TOKEN);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  const ingest = <S extends EntitySetName>(set: S, ...inputs: IngestLine<S>[]) => fixtures.ingest(set, ...inputs);
  const listing = (key: string, status: Lookups.MlsStatus) => fixtures.listing(key, status);
  const photo = (listingKey: string, key: string) => fixtures.photo(listingKey, key);
  const as = (token: string) => (path: string) => get(`${server.url}/${path}`, { Authorization: `Bearer ${token}` });
  const asDemo = (path: string) => get(`${server.url}/${path}`);
  const asScoped = as(SCOPED_TOKEN);

  /** Every event after `after` the client sees, following nextLinks. */
  async function events(token: string, after: number): Promise<Event[]> {
    const walk = await walkPages(`${server.url}/EntityEvent?$filter=${encodeURIComponent(`EntityEventSequence gt ${after}`)}&$top=100000`, { token });
    return walk.records as Event[];
  }
  async function lastSequence(): Promise<number> {
    const r = await asDemo(`EntityEvent?$orderby=EntityEventSequence desc&$top=1`);
    expect(r.status, r.text).to.equal(200);
    return r.json.value[0]?.EntityEventSequence ?? 0;
  }
  const named = (list: readonly Event[], key: string) => list.filter((e) => e.ResourceRecordKey === key || e.ResourceRecordKey.startsWith(`${key}-`));

  describe('the resource', () => {
    it('is in the service document and $metadata, with RESO\'s fields, the sequence as its Edm.Int64 key', async () => {
      const root = await asDemo('');
      expect(root.json.value.map((s: Rec) => s.name)).to.include('EntityEvent');
      const md = await asDemo('$metadata');
      expect(md.text).to.match(/<EntityType Name="EntityEvent">\s*<Key>\s*<PropertyRef Name="EntityEventSequence"\/>\s*<\/Key>/);
      expect(md.text).to.include('<Property Name="EntityEventSequence" Type="Edm.Int64" Nullable="false"/>');
      for (const f of ['ResourceName', 'ResourceRecordKey']) expect(md.text).to.include(`<Property Name="${f}"`);
    });

    it('seeding logged every record once, in strictly increasing sequence, and each names a record that exists', async () => {
      const all = await events(TEST_TOKEN, 0);
      expect(all.length).to.be.greaterThan(0);
      for (let i = 1; i < all.length; i++) expect(all[i].EntityEventSequence).to.be.greaterThan(all[i - 1].EntityEventSequence);
      for (const set of ['Property', 'Media', 'OpenHouse', 'Member', 'Office']) {
        const keys = new Set(all.filter((e) => e.ResourceName === set).map((e) => e.ResourceRecordKey));
        const stored = await storedRecords(server.service, set);
        const keyName = serviceModel.entitySets.find((s) => s.name === set)!.key;
        expect(stored.filter((r) => !keys.has(String(r[keyName]))), `${set} records without an event`).to.deep.equal([]);
      }
      const one = all.find((e) => e.ResourceName === 'Property')!;
      expect((await asDemo(`EntityEvent(${one.EntityEventSequence})`)).json).to.include(one);
      expect((await asDemo(`Property('${one.ResourceRecordKey}')`)).status).to.equal(200);
    });

    it('pages by nextLink in sequence order with $top the total', async () => {
      const from = (await lastSequence()) - 5;
      const r = await get(`${server.url}/EntityEvent?$filter=${encodeURIComponent(`EntityEventSequence gt ${from}`)}&$top=4`, { Prefer: 'odata.maxpagesize=3' });
      expect(r.status, r.text).to.equal(200);
      expect(r.json.value.map((e: Event) => e.EntityEventSequence)).to.deep.equal([from + 1, from + 2, from + 3]);
      const next = await get(r.json['@odata.nextLink']);
      expect(next.json.value.map((e: Event) => e.EntityEventSequence)).to.deep.equal([from + 4]);
      expect(next.json['@odata.nextLink']).to.equal(undefined);
    });
  });

  describe('appending', () => {
    it('one event per changed record, in the change\'s transaction: a photo before its listing, which it moved', async () => {
      const key = `EV${++seq}`;
      await ingest('Property', listing(key, 'Active'));
      const before = await lastSequence();
      await ingest('Media', photo(key, `${key}-M1`), photo(key, `${key}-M2`));
      const added = await events(TEST_TOKEN, before);
      expect(added.map((e) => [e.ResourceName, e.ResourceRecordKey])).to.deep.equal([['Media', `${key}-M1`], ['Media', `${key}-M2`], ['Property', key]]);
      expect(added.map((e) => e.EntityEventSequence)).to.deep.equal([before + 1, before + 2, before + 3]);
    });

    it('a listing change restamps its photos: their events come first, then the listing\'s', async () => {
      const key = `EV${++seq}`;
      await ingest('Property', listing(key, 'Active'));
      await ingest('Media', photo(key, `${key}-M1`));
      const before = await lastSequence();
      await ingest('Property', listing(key, 'Pending'));
      expect((await events(TEST_TOKEN, before)).map((e) => e.ResourceRecordKey)).to.deep.equal([`${key}-M1`, key]);
    });

    it('an unchanged re-ingest appends nothing, and a failed transaction appends nothing', async () => {
      const key = `EV${++seq}`;
      await ingest('Property', listing(key, 'Active'));
      const before = await lastSequence();
      await ingest('Property', listing(key, 'Active'));
      expect(await lastSequence()).to.equal(before);
      const failure = await server.service.writer.transaction(async (tx) => {
        await tx.upsert('Property', [server.service.store('Property').encode({ ...listing(key, 'Pending'), ModificationTimestamp: await tx.modificationTime() })]);
        throw new Error('the batch fails after its write');
      }).catch((e: Error) => e);
      expect(String(failure)).to.include('the batch fails');
      expect(await lastSequence()).to.equal(before);
      expect((await asDemo(`Property('${key}')`)).json.MlsStatus).to.equal('Active');
    });

    it('a removed record gets an event (its fetch answers 404)', async () => {
      const key = `EV${++seq}`;
      await ingest('Property', listing(key, 'Active'));
      await ingest('Media', photo(key, `${key}-M1`));
      const before = await lastSequence();
      await ingest('Media', { MediaKey: `${key}-M1`, '@delete': true });
      const added = await events(TEST_TOKEN, before);
      expect(added.map((e) => e.ResourceRecordKey)).to.deep.equal([`${key}-M1`, key]);
      expect((await asDemo(`Media('${key}-M1')`)).status).to.equal(404);
    });
  });

  describe('visibility', () => {
    it('a client never sees an event of a listing its scope never admitted, nor of its media', async () => {
      const key = `EV${++seq}`;
      const before = await lastSequence();
      await ingest('Property', listing(key, 'Withdrawn'));
      await ingest('Media', photo(key, `${key}-M1`), photo(key, `${key}-M2`));
      await ingest('Property', { ...listing(key, 'Withdrawn'), ListPrice: 1 });
      await ingest('Media', { MediaKey: `${key}-M2`, '@delete': true });
      expect(named(await events(TEST_TOKEN, before), key).length).to.be.greaterThan(5);
      expect(named(await events(SCOPED_TOKEN, before), key)).to.deep.equal([]);
      const direct = await asScoped(`EntityEvent?$filter=${encodeURIComponent(`ResourceRecordKey eq '${key}-M1' or ResourceRecordKey eq '${key}'`)}`);
      expect(direct.json.value).to.deep.equal([]);
      expect((await asScoped(`EntityEvent/$count?$filter=${encodeURIComponent(`ResourceRecordKey eq '${key}'`)}`)).text).to.equal('0');
    });

    it('a listing leaving the scope shows the client its event and its photos\' (each fetch then 404), and coming back again', async () => {
      const key = `EV${++seq}`;
      await ingest('Property', listing(key, 'Active'));
      await ingest('Media', photo(key, `${key}-M1`));
      const before = await lastSequence();
      await ingest('Property', listing(key, 'Withdrawn'));
      const seen = named(await events(SCOPED_TOKEN, before), key);
      expect(seen.map((e) => e.ResourceRecordKey)).to.deep.equal([`${key}-M1`, key]);
      expect((await asScoped(`Property('${key}')`)).status).to.equal(404);
      expect((await asScoped(`Media('${key}-M1')`)).status).to.equal(404);
      // Changes while out of the scope are unseen; coming back shows the latest events again (and those of
      // the changes made meanwhile: their records are visible now).
      const out = await lastSequence();
      await ingest('Property', { ...listing(key, 'Withdrawn'), ListPrice: 2 });
      expect(named(await events(SCOPED_TOKEN, out), key)).to.deep.equal([]);
      const back = await lastSequence();
      await ingest('Property', listing(key, 'Active'));
      expect(named(await events(SCOPED_TOKEN, back), key).map((e) => e.ResourceRecordKey)).to.deep.equal([`${key}-M1`, key]);
    });

    it('a record removed while visible stays visible as an event; one removed while hidden does not', async () => {
      const key = `EV${++seq}`;
      await ingest('Property', listing(key, 'Active'));
      await ingest('Media', photo(key, `${key}-M1`), photo(key, `${key}-M2`));
      const before = await lastSequence();
      await ingest('Media', { MediaKey: `${key}-M1`, '@delete': true });
      await ingest('Property', listing(key, 'Withdrawn'));
      const hidden = await lastSequence();
      await ingest('Media', { MediaKey: `${key}-M2`, '@delete': true });
      const seen = named(await events(SCOPED_TOKEN, before), key).map((e) => e.ResourceRecordKey);
      expect(seen).to.deep.equal([`${key}-M1`, key, `${key}-M2`, key]);
      expect(named(await events(SCOPED_TOKEN, hidden), key)).to.deep.equal([]);
    });

    it('history naming a field hidden from the client is never an event for it', async () => {
      const all = await events(TEST_TOKEN, 0);
      const history = await storedRecords(server.service, 'HistoryTransactional');
      const price = history.filter((h) => h.FieldName === 'ListPrice').map((h) => String(h.HistoryTransactionalKey));
      expect(price.length, 'the demo data has ListPrice history').to.be.greaterThan(0);
      expect(all.filter((e) => price.includes(e.ResourceRecordKey)).length).to.be.greaterThan(0);
      const seen = await events(HIDING_TOKEN, 0);
      expect(seen.filter((e) => e.ResourceName === 'HistoryTransactional' && price.includes(e.ResourceRecordKey))).to.deep.equal([]);
      expect(seen.length).to.be.greaterThan(all.length / 2);
    });

    it('a scoped client\'s page reads the log in sequence order from its mark and seeks each record by key (query plan)', async () => {
      const log = serviceModel.entitySets.find((s) => s.changeLog)!;
      const where = allOf(new Visibility(serviceModel, ["MlsStatus ne 'Withdrawn'"]).of(log), bindQuery(log, parseQueryOptions({ $filter: 'EntityEventSequence gt 5' })).filter);
      const db = server.service.db;
      const queries = new RecordQueries(db.knex, db.dialect, log.table, log.key);
      const page = queries.page({ condition: queries.condition(where), orderBy: bindQuery(log, parseQueryOptions({})).orderBy, limit: 1000, projection: WHOLE_RECORD });
      const plan = (await server.service.db.all(`${target.label === 'SQLite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN'} ${page.sql}`, page.params)).map((r) => JSON.stringify(r));
      const logRows = plan.filter((r) => r.includes(log.table) && !r.includes('_q'));
      // One read of the log, by its key from the mark, in order: no index per resource name, no sort of the rest.
      expect(logRows, plan.join('\n')).to.have.length(1);
      expect(plan.join('\n')).not.to.match(/TEMP B-TREE|MULTI-INDEX|filesort|index_merge/i);
      // Every other table is reached by a seek per event (SQLite: SEARCH … (key=?); MariaDB: a dependent subquery
      // through an index, never a scan nor a materialised whole).
      const seeks = plan.filter((r) => r.includes('_q'));
      expect(seeks.length, plan.join('\n')).to.be.greaterThan(5);
      const seek = target.label === 'SQLite' ? /SEARCH _q\d USING (INDEX|PRIMARY KEY)[^"]*=\?/ : /"DEPENDENT SUBQUERY".*"type":"(eq_ref|ref|range)"/;
      for (const row of seeks) expect(row, plan.join('\n')).to.match(seek);
    });
  });
});
