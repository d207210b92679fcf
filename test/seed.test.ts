/**
 * The demo-data generator: deterministic (same options, byte-identical records), valid for the store and for
 * the generated record schemas, and internally consistent (children belong to listings, agents to offices, timestamps in order).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { EntitySetSpec, FieldSpec, RECORD_COLUMN, ServiceModel } from '../src/model/service-model';
import { compile } from '../src/storage/sql/query-builder';
import { seedDemoData, SeedSummary } from '../src/demo/demo-data';
import { ListingService } from '../src/process/service';
import { openDatabase } from '../src/storage/db/open-database';

import { schemaProblems, seedCapturing } from './support/demo-records';
import type { Rec } from './support/next-links';

const SEEDED_SETS = ['Office', 'Member', 'Property', 'Media', 'OpenHouse', 'HistoryTransactional', 'PropertyRooms', 'PropertyUnitTypes'];

interface Seeded {
  readonly service: ListingService;
  readonly summary: SeedSummary;
  readonly lines: string[];
  /** Stored JSON texts per entity set, ordered by key. */
  readonly json: Record<string, string[]>;
  readonly records: Record<string, Rec[]>;
}

describe('Demo data', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  const services: ListingService[] = [];

  async function storedJson(service: ListingService, setName: string): Promise<string[]> {
    const set = service.model.entitySets.find((s) => s.name === setName)!;
    const db = service.db;
    const q = compile(db.knex(set.table).select(RECORD_COLUMN).orderBy(set.key));
    const rows = await db.all(q.sql, q.params);
    return rows.map((r) => r[RECORD_COLUMN] as string);
  }

  async function seeded(listings: number, seed?: number, children?: boolean): Promise<Seeded> {
    const dir = mkdtempSync(join(tmpdir(), 'reso-seed-'));
    dirs.push(dir);
    const service = new ListingService(serviceModel, openDatabase(`sqlite:${join(dir, 'demo.sqlite')}`));
    services.push(service);
    await service.prepare();
    const lines: string[] = [];
    const summary = await seedDemoData(service, { listings, seed, children }, (l) => lines.push(l));
    const json: Record<string, string[]> = {};
    const records: Record<string, Rec[]> = {};
    for (const name of SEEDED_SETS) {
      json[name] = await storedJson(service, name);
      // The values a record has: a stored null (a field without a value) is left out, as the checks below expect.
      records[name] = json[name].map((j) => JSON.parse(j, (_k, v) => (v === null ? undefined : v)));
    }
    return { service, summary, lines, json, records };
  }

  function groupBy(records: Rec[], field: string): Map<string, Rec[]> {
    const m = new Map<string, Rec[]>();
    for (const r of records) {
      const k = r[field];
      if (!m.has(k)) m.set(k, []);
      m.get(k)!.push(r);
    }
    return m;
  }

  let a: Seeded;
  let b: Seeded;
  let listings: Rec[];
  let listingKeys: Set<string>;

  before(async () => {
    a = await seeded(60);
    b = await seeded(60);
    listings = a.records.Property;
    listingKeys = new Set(listings.map((l) => l.ListingKey));
  });

  after(async () => {
    for (const s of services) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the same options give byte-identical stored records', () => {
    for (const name of SEEDED_SETS) {
      expect(a.json[name].length, name).to.be.greaterThan(0);
      expect(b.json[name], name).to.deep.equal(a.json[name]);
    }
    expect(b.summary).to.deep.equal(a.summary);
  });

  it('without children: the same listings, offices and members, and no child records', async () => {
    const bare = await seeded(60, undefined, false);
    for (const name of ['Office', 'Member', 'Property']) expect(bare.json[name], name).to.deep.equal(a.json[name]);
    for (const name of ['Media', 'OpenHouse', 'HistoryTransactional', 'PropertyRooms', 'PropertyUnitTypes']) expect(bare.json[name], name).to.deep.equal([]);
    expect(bare.summary).to.deep.equal({ ...a.summary, media: 0, openHouses: 0, history: 0, rooms: 0, units: 0 });
  });

  it('the summary counts what was stored, with the requested number of listings and a bounded roster', () => {
    const s = a.summary;
    expect(s.listings).to.equal(60);
    expect(a.records.Property).to.have.length(s.listings);
    expect(a.records.Office).to.have.length(s.offices);
    expect(a.records.Member).to.have.length(s.members);
    expect(a.records.Media).to.have.length(s.media);
    expect(a.records.OpenHouse).to.have.length(s.openHouses);
    expect(a.records.HistoryTransactional).to.have.length(s.history);
    expect(a.records.PropertyRooms).to.have.length(s.rooms);
    expect(a.records.PropertyUnitTypes).to.have.length(s.units);
    expect(s.offices).to.equal(3);
    expect(s.members).to.equal(15);
    expect(a.lines.length).to.be.greaterThan(0);
    expect(a.lines[a.lines.length - 1]).to.match(/60 listings/);
  });

  it('every stored record passes the store encoder unchanged (lookups, lengths, formats)', () => {
    for (const name of SEEDED_SETS) {
      const store = a.service.store(name);
      for (const json of a.json[name]) expect(store.encode(JSON.parse(json)).json, name).to.equal(json);
    }
  });

  it('every record the demo data writes, and every record as stored, validates against its set\'s generated schema', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reso-seed-'));
    dirs.push(dir);
    const service = new ListingService(serviceModel, openDatabase(`sqlite:${join(dir, 'schemas.sqlite')}`));
    services.push(service);
    await service.prepare();
    // The records as the seed hands them to the stores, before the codec normalises them.
    const { written } = await seedCapturing(service, { listings: 60 });
    expect([...written.keys()].sort()).to.deep.equal([...SEEDED_SETS].sort());
    const stored = SEEDED_SETS.map((name) => [name, a.json[name].map((j) => JSON.parse(j) as Rec)] as const);
    expect(schemaProblems(serviceModel, [...written, ...stored])).to.deep.equal([]);
  });

  it('media belong to listings: 5 to 30 each, ordered 1..n, summarised by PhotosCount and the change timestamps', () => {
    for (const m of a.records.Media) {
      expect(m.ResourceName).to.equal('Property');
      expect(listingKeys.has(m.ResourceRecordKey), m.MediaKey).to.equal(true);
      expect(m.MediaURL).to.match(/^https:\/\//);
    }
    const byListing = groupBy(a.records.Media, 'ResourceRecordKey');
    const categories = new Set(a.records.Media.map((m) => m.MediaCategory));
    expect([...categories]).to.include('Photo');
    for (const l of listings) {
      const media = byListing.get(l.ListingKey) ?? [];
      expect(media.length, l.ListingKey).to.be.within(5, 30);
      expect(media.map((m) => m.Order).sort((x, y) => x - y)).to.deep.equal(media.map((_, i) => i + 1));
      const photos = media.filter((m) => m.MediaCategory === 'Photo');
      const documents = media.filter((m) => m.MediaCategory === 'Document');
      const latest = (rs: Rec[]) => rs.map((r) => r.ModificationTimestamp as string).sort().pop();
      expect(l.PhotosCount, l.ListingKey).to.equal(photos.length);
      expect(photos.length / media.length).to.be.greaterThan(0.5);
      expect(l.PhotosChangeTimestamp).to.equal(latest(photos));
      expect(l.DocumentsChangeTimestamp).to.equal(latest(documents));
    }
  });

  it('agents are members, members belong to offices, and names and ids agree', () => {
    const members = new Map(a.records.Member.map((m) => [m.MemberKey, m]));
    const offices = new Map(a.records.Office.map((o) => [o.OfficeKey, o]));
    for (const m of members.values()) {
      const office = offices.get(m.OfficeKey);
      expect(office, m.MemberKey).to.not.equal(undefined);
      expect(m.OfficeMlsId).to.equal(office!.OfficeMlsId);
      expect(m.OfficeName).to.equal(office!.OfficeName);
    }
    for (const o of offices.values()) expect(a.records.Member.some((m) => m.OfficeKey === o.OfficeKey), o.OfficeKey).to.equal(true);
    const sides = [
      ['ListAgentKey', 'ListAgentMlsId', 'ListAgentFullName', 'ListOfficeKey', 'ListOfficeMlsId', 'ListOfficeName'],
      ['CoListAgentKey', 'CoListAgentMlsId', 'CoListAgentFullName', 'CoListOfficeKey', 'CoListOfficeMlsId', 'CoListOfficeName'],
      ['BuyerAgentKey', 'BuyerAgentMlsId', 'BuyerAgentFullName', 'BuyerOfficeKey', 'BuyerOfficeMlsId', 'BuyerOfficeName'],
    ];
    let buyers = 0;
    for (const l of listings) {
      expect(l.ListAgentKey, l.ListingKey).to.be.a('string');
      for (const [key, mlsId, fullName, officeKey, officeMlsId, officeName] of sides) {
        if (l[key] === undefined) continue;
        if (key === 'BuyerAgentKey') buyers++;
        const m = members.get(l[key]);
        expect(m, `${l.ListingKey} ${key}`).to.not.equal(undefined);
        expect(l[mlsId]).to.equal(m!.MemberMlsId);
        expect(l[fullName]).to.equal(m!.MemberFullName);
        expect(l[officeKey]).to.equal(m!.OfficeKey);
        expect(l[officeMlsId]).to.equal(m!.OfficeMlsId);
        expect(l[officeName]).to.equal(m!.OfficeName);
      }
      if (l.CoBuyerAgentKey !== undefined) expect(members.get(l.CoBuyerAgentKey)!.OfficeKey).to.equal(l.CoBuyerOfficeKey);
    }
    expect(buyers).to.be.greaterThan(0);
  });

  it('statuses: Active dominant, at least one Active Under Contract, a few percent Delete, MlsStatus equal to StandardStatus', () => {
    const count = (s: string) => listings.filter((l) => l.StandardStatus === s).length;
    for (const l of listings) expect(l.MlsStatus, l.ListingKey).to.equal(l.StandardStatus);
    expect(count('Active Under Contract')).to.be.at.least(1);
    expect(count('Delete')).to.be.within(1, 3);
    expect(listings.filter((l) => l.MlsStatus === 'Delete').length).to.equal(count('Delete'));
    const statuses = new Set(listings.map((l) => l.StandardStatus));
    for (const s of statuses) expect(count('Active'), s).to.be.at.least(count(s));
    for (const s of ['Pending', 'Closed']) expect([...statuses]).to.include(s);
    const types = listings.map((l) => l.PropertyType);
    expect(types.filter((t) => t === 'Residential').length).to.be.greaterThan(listings.length / 2);
  });

  it('values in range: bedrooms, prices, closing only when closed, dates in order, contract dates on both sides of 2019', () => {
    for (const l of listings) {
      if (l.BedroomsTotal !== undefined) expect(l.BedroomsTotal, l.ListingKey).to.be.within(1, 15);
      if (l.PropertyType === 'Residential') expect(l.BedroomsTotal, l.ListingKey).to.be.a('number');
      expect(l.ListPrice, l.ListingKey).to.be.greaterThan(0);
      const closed = l.StandardStatus === 'Closed';
      expect(l.ClosePrice !== undefined, `${l.ListingKey} ClosePrice`).to.equal(closed);
      expect(l.CloseDate !== undefined, `${l.ListingKey} CloseDate`).to.equal(closed);
      if (closed) expect(l.CloseDate >= l.ListingContractDate).to.equal(true);
      expect(l.OriginalEntryTimestamp <= l.ModificationTimestamp, l.ListingKey).to.equal(true);
      expect(l.ModificationTimestamp <= '2026-06-01T00:00:00.000Z', l.ListingKey).to.equal(true);
      expect(l.ListingContractDate, l.ListingKey).to.match(/^\d{4}-\d{2}-\d{2}$/);
    }
    expect(listings.some((l) => l.ListingContractDate <= '2019-12-31')).to.equal(true);
    expect(listings.some((l) => l.ListingContractDate > '2019-12-31')).to.equal(true);
  });

  it('AccessibilityFeatures: empty for most, single-valued and multi-valued for some', () => {
    const sizes = listings.map((l) => (l.AccessibilityFeatures as string[]).length);
    expect(sizes.filter((n) => n === 0).length).to.be.greaterThan(listings.length / 2);
    expect(sizes.filter((n) => n === 1).length).to.be.at.least(1);
    expect(sizes.filter((n) => n > 1).length).to.be.at.least(1);
  });

  it('child records belong to listings, in the expected numbers, never modified after their listing', () => {
    const byKey = new Map(listings.map((l) => [l.ListingKey, l]));
    const children: [string, string, number, number][] = [
      ['Media', 'ResourceRecordKey', 5, 30],
      ['OpenHouse', 'ListingKey', 0, 3],
      ['HistoryTransactional', 'ResourceRecordKey', 1, 5],
      ['PropertyRooms', 'ListingKey', 2, 10],
      ['PropertyUnitTypes', 'ListingKey', 0, 4],
    ];
    for (const [name, field, min, max] of children) {
      const grouped = groupBy(a.records[name], field);
      for (const [key, records] of grouped) {
        const listing = byKey.get(key);
        expect(listing, `${name} -> ${key}`).to.not.equal(undefined);
        for (const r of records) expect(r.ModificationTimestamp <= listing!.ModificationTimestamp, `${name} of ${key}`).to.equal(true);
      }
      for (const l of listings) expect((grouped.get(l.ListingKey) ?? []).length, `${name} of ${l.ListingKey}`).to.be.within(min, max);
    }
    for (const h of a.records.HistoryTransactional) expect(h.ResourceName).to.equal('Property');
    for (const o of a.records.OpenHouse) expect(o.ListingId).to.equal(byKey.get(o.ListingKey)!.ListingId);
  });

  it('restricted fields are filled for most listings; display flags mostly true, some false', () => {
    for (const field of ['PrivateRemarks', 'ShowingInstructions', 'OwnerName', 'LockBoxSerialNumber']) {
      expect(listings.filter((l) => l[field] !== undefined).length, field).to.be.greaterThan(listings.length * 0.6);
    }
    for (const field of ['InternetEntireListingDisplayYN', 'InternetAddressDisplayYN', 'InternetAutomatedValuationDisplayYN']) {
      expect(listings.filter((l) => l[field] === true).length, field).to.be.greaterThan(listings.length * 0.85);
    }
  });

  it('keeps working when the dictionary adds or drops fields: unknown fields get valid generic values', async () => {
    const field = (name: string, type: FieldSpec['type'], more: Partial<FieldSpec> = {}): FieldSpec =>
      ({ name, type, collection: false, nullable: false, filterable: false, sortable: false, restricted: false, ...more });
    const added = [
      field('DemoGuid', 'Edm.Guid'),
      field('DemoShowingTime', 'Edm.TimeOfDay'),
      field('DemoRatio', 'Edm.Double'),
      field('DemoSmallDecimal', 'Edm.Decimal', { precision: 3, scale: 2 }),
      field('DemoCode', 'Edm.String', { maxLength: 3 }),
      field('DemoCount', 'Edm.Int16'),
      field('DemoDate', 'Edm.Date'),
      field('DemoStamp', 'Edm.DateTimeOffset'),
      field('DemoStatus', 'Edm.String', { maxLength: 25, lookupName: 'StandardStatus' }),
      field('DemoFeatures', 'Edm.String', { collection: true, nullable: true, maxLength: 1024, lookupName: 'Appliances' }),
      field('DemoUnknownLookup', 'Edm.String', { collection: true, nullable: true, lookupName: 'NoSuchLookup' }),
    ];
    const dropped = new Set(['BedroomsTotal', 'OwnerName']);
    const reshape = (s: EntitySetSpec): EntitySetSpec => {
      if (s.name !== 'Property') return s;
      const fields = [...s.fields.filter((f) => !dropped.has(f.name)), ...added];
      return { ...s, fields, fieldsByName: Object.fromEntries(fields.map((f) => [f.name, f])) };
    };
    const model: ServiceModel = { ...serviceModel, entitySets: serviceModel.entitySets.map(reshape) };
    const dir = mkdtempSync(join(tmpdir(), 'reso-seed-'));
    dirs.push(dir);
    const service = new ListingService(model, openDatabase(`sqlite:${join(dir, 'demo.sqlite')}`));
    services.push(service);
    await service.prepare();
    await seedDemoData(service, { listings: 20 });
    const stored = (await storedJson(service, 'Property')).map((j) => JSON.parse(j));
    expect(stored).to.have.length(20);
    const statuses = new Set(serviceModel.lookups.find((l) => l.name === 'StandardStatus')!.values.map((v) => v.value));
    for (const l of stored) {
      for (const name of dropped) expect(l).to.not.have.property(name);
      expect(l.DemoGuid).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(l.DemoShowingTime).to.match(/^\d{2}:\d{2}:\d{2}$/);
      expect(l.DemoRatio).to.be.a('number');
      expect(Math.abs(l.DemoSmallDecimal)).to.be.lessThan(10);
      expect(l.DemoCode.length).to.be.at.most(3);
      expect(l.DemoCount).to.be.a('number');
      expect(l.DemoDate).to.match(/^\d{4}-\d{2}-\d{2}$/);
      expect(l.DemoStamp).to.match(/Z$/);
      expect(statuses.has(l.DemoStatus)).to.equal(true);
      expect(l.DemoFeatures).to.be.an('array').with.length.at.most(4);
      expect(l.DemoUnknownLookup).to.deep.equal([]);
    }
  });

  it('small sets keep the guarantees, and another seed gives other data', async () => {
    const one = await seeded(1);
    expect(one.records.Property.map((l) => l.StandardStatus)).to.deep.equal(['Active Under Contract']);
    const ten = await seeded(10, 7);
    const sizes = ten.records.Property.map((l) => (l.AccessibilityFeatures as string[]).length);
    expect(sizes.some((n) => n === 0) && sizes.some((n) => n === 1) && sizes.some((n) => n > 1)).to.equal(true);
    const dates = ten.records.Property.map((l) => l.ListingContractDate as string);
    expect(dates.some((d) => d <= '2019-12-31') && dates.some((d) => d > '2019-12-31')).to.equal(true);
    const other = await seeded(60, 2);
    expect(other.json.Property).to.not.deep.equal(a.json.Property);
  });
});
