/**
 * Demo data from the dictionary alone: whatever the dictionary (the shipped one with fields removed or retyped, RESO's
 * DD 2.0 in both lookup flavours, one with nothing but keys and change timestamps), every set the demo may write gets
 * records, seeded through the real record stores on a real database; every record passes the store's encoder and its
 * set's generated schema; keys are unique; records that hang off others point at records that exist, by the model's
 * joins (that no hand-written file the build compiles names a field: test/build-independence.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { generate } from '../codegen/generate';
import type { SeedSummary } from '../src/demo/demo-data';
import { SeededRandom } from '../src/demo/random';
import { PLACES } from '../src/demo/vocabulary';
import { RECORD_COLUMN, ServiceModel } from '../src/model/service-model';
import { ListingService } from '../src/process/service';
import { openDatabase } from '../src/storage/db/open-database';
import { compile } from '../src/storage/sql/query-builder';
import { DatabaseTarget, describeEachDatabase, sqliteTarget, TestDatabase } from './support/databases';
import { schemaProblems, seedCapturing } from './support/demo-records';
import { DictionaryVersions, editProperty, namedFields, typeOf, within, withoutField } from './support/dictionary-versions';
import { loadGenerated } from './support/generated-folder';
import type { Rec } from './support/next-links';
import { requireShared, sharedPath } from './support/shared';

const NOT_DEMO = ['Lookup', 'Field', 'EntityEvent'];

interface Seeded {
  readonly summary: SeedSummary;
  /** Records as the demo handed them to the stores, and as stored (parsed), by set. */
  readonly written: Map<string, Rec[]>;
  readonly stored: Map<string, Rec[]>;
}

/** Seeds `listings` demo listings of `model` into a fresh database of `target`, capturing what was written. */
async function seedModel(model: ServiceModel, target: DatabaseTarget, listings: number, cleanup: (() => Promise<void>)[]): Promise<Seeded> {
  const db: TestDatabase = await target.create();
  const service = new ListingService(model, openDatabase(db.url));
  cleanup.push(async () => { await service.close(); await db.drop(); });
  await service.prepare();
  const { summary, written } = await seedCapturing(service, { listings, seed: 3 });
  const stored = new Map<string, Rec[]>();
  const storedJson = new Map<string, string[]>();
  for (const set of model.entitySets) {
    const q = compile(service.db.knex(set.table).select(RECORD_COLUMN).orderBy(set.key));
    const json = (await service.db.all(q.sql, q.params)).map((r) => r[RECORD_COLUMN] as string);
    storedJson.set(set.name, json);
    stored.set(set.name, json.map((j) => JSON.parse(j) as Rec));
  }
  // Every record the store took is stored, under a key of its own.
  for (const [name, records] of written) expect(stored.get(name)!.length, `${name}: records written and stored`).to.equal(records.length);
  // The encoder takes the stored form back unchanged.
  for (const set of model.entitySets) {
    const store = service.store(set);
    for (const json of storedJson.get(set.name)!) expect(store.encode(JSON.parse(json)).json, set.name).to.equal(json);
  }
  return { summary, written, stored };
}

/** Records, written or stored, that the set's generated schema refuses (the first ten). */
function schemaRefusals(model: ServiceModel, seeded: Seeded): string[] {
  return schemaProblems(model, [...seeded.written, ...seeded.stored]).slice(0, 10);
}

/**
 * Records that say they belong to another set's record (by a navigation's join: the discriminator names that set, or,
 * for the listings' own children, by the join alone) but name none that exists. Also: how many records of each
 * navigation of the listings point at a listing.
 */
function joinProblems(model: ServiceModel, stored: Map<string, Rec[]>, listings?: string): { problems: string[]; children: Record<string, number> } {
  const problems: string[] = [];
  const children: Record<string, number> = {};
  for (const parent of model.entitySets) {
    for (const n of parent.navigations) {
      if (!n.collection || !n.join || !stored.get(n.target)?.length) continue;
      const d = n.join.discriminator;
      if (!(d?.on === 'target' || (!d && parent.name === listings))) continue;
      const keys = new Set(stored.get(parent.name)!.map((p) => p[n.join!.referencedKey]));
      const related = stored.get(n.target)!.filter((r) => !d || r[d.field] === d.value);
      for (const r of related) if (!keys.has(r[n.join.foreignKey])) problems.push(`${n.target} ${JSON.stringify(r[n.join.foreignKey])} names no ${parent.name}`);
      if (parent.name === listings) children[n.name] = related.length;
    }
  }
  return { problems: problems.slice(0, 10), children };
}

function demoSetNames(model: ServiceModel): string[] {
  return model.entitySets.filter((s) => !s.dictionaryRows && !s.changeLog && !NOT_DEMO.includes(s.name)).map((s) => s.name);
}

/** The sets the demo wrote records of (the service writes the dictionary's rows and the change log itself). */
function setsWithRecords(seeded: Seeded): string[] {
  return [...seeded.written].filter(([, r]) => r.length > 0).map(([n]) => n);
}

describe('Demo data from the dictionary alone', function () {
  this.timeout(180_000);
  const cleanup: (() => Promise<void>)[] = [];
  let versions: DictionaryVersions;
  before(() => { versions = new DictionaryVersions(); });
  after(async () => {
    for (const c of cleanup.reverse()) await c();
    versions.remove();
  });

  describe('the shipped dictionary with 30 to 60% of each set\'s removable fields removed at random', () => {
    let model: ServiceModel;
    let removed: Map<string, string[]>;
    let seeded: Seeded;

    before(async () => {
      const base = versions.base.model;
      const named = namedFields(base);
      const rng = new SeededRandom(20261207);
      removed = new Map();
      const version = versions.next((xml) => {
        let out = xml;
        for (const set of base.entitySets) {
          if (set.dictionaryRows || set.changeLog) continue;
          const removable = set.fields.map((f) => f.name).filter((f) => !named.has(`${set.name}.${f}`));
          const gone = rng.sample(removable, Math.round(removable.length * rng.between(0.3, 0.6)));
          removed.set(set.name, gone);
          for (const f of gone) out = withoutField(out, typeOf(set), set.name, f);
        }
        return out;
      });
      model = version.model;
      seeded = await seedModel(model, sqliteTarget, 40, cleanup);
    });

    it('removes what it says: fields of every demo set, from the model and from every record', () => {
      expect([...removed.keys()]).to.have.members(demoSetNames(versions.base.model));
      for (const [set, fields] of removed) {
        expect(fields.length, set).to.be.greaterThan(0);
        for (const f of fields) expect(model.entitySets.find((s) => s.name === set)!.fieldsByName, `${set}.${f}`).to.not.have.property(f);
        for (const r of seeded.stored.get(set)!) for (const f of fields) expect(r, `${set}.${f}`).to.not.have.property(f);
      }
    });

    it('every demo set gets records, each valid for the store and the schema, children pointing at their listings', () => {
      expect(setsWithRecords(seeded)).to.have.members(demoSetNames(model));
      expect(seeded.summary.listings).to.equal(40);
      expect(schemaRefusals(model, seeded)).to.deep.equal([]);
      const joins = joinProblems(model, seeded.stored, 'Property');
      expect(joins.problems).to.deep.equal([]);
      expect(joins.children.Media).to.equal(seeded.summary.media).and.be.greaterThan(0);
    });
  });

  describeEachDatabase('the shipped dictionary with fields retyped and lookups changed', (target) => {
    let model: ServiceModel;
    let listings: Rec[];
    let seeded: Seeded;

    before(async () => {
      const version = versions.next((xml) => {
        let out = editProperty(xml, 'Property', 'BedroomsTotal', () => '<Property Name="BedroomsTotal" Type="Edm.Decimal" Precision="5" Scale="1"/>');
        out = editProperty(out, 'Property', 'PostalCode', () => '<Property Name="PostalCode" Type="Edm.Int32"/>');
        out = editProperty(out, 'Property', 'ListPrice', () => '<Property Name="ListPrice" Type="Edm.String" MaxLength="5"/>');
        out = within(out, 'EntityType', 'Property', (text) => text.replace(
          /<Property Name="City" Type="Edm.String" MaxLength="50">\s*<Annotation Term="RESO.OData.Metadata.LookupName" String="City"\/>\s*<\/Property>/,
          '<Property Name="City" Type="Edm.String" MaxLength="50"/>'));
        return within(out, 'EnumType', 'MlsStatus', (text) => text.replace(
          '<Member Name="Active" Value="0"><Annotation Term="RESO.OData.Metadata.StandardName" String="Active"/></Member>',
          '<Member Name="ActiveListing" Value="0"><Annotation Term="RESO.OData.Metadata.StandardName" String="Active Listing"/></Member>'));
      });
      model = version.model;
      const property = model.entitySets.find((s) => s.name === 'Property')!;
      expect(property.fieldsByName.BedroomsTotal).to.include({ type: 'Edm.Decimal', precision: 5, scale: 1 });
      expect(property.fieldsByName.PostalCode).to.include({ type: 'Edm.Int32' });
      expect(property.fieldsByName.ListPrice).to.include({ type: 'Edm.String', maxLength: 5 });
      expect(property.fieldsByName.City).to.not.have.property('lookupName');
      seeded = await seedModel(model, target, 40, cleanup);
      listings = seeded.stored.get('Property')!;
    });

    it('every demo set gets records, each valid for the store and the schema, children pointing at their listings', () => {
      expect(setsWithRecords(seeded)).to.have.members(demoSetNames(model));
      expect(schemaRefusals(model, seeded)).to.deep.equal([]);
      expect(joinProblems(model, seeded.stored, 'Property').problems).to.deep.equal([]);
    });

    it('a value the field can still hold is kept: bedrooms as decimals, cities without their lookup', () => {
      const beds = listings.map((l) => l.BedroomsTotal).filter((b) => b !== null);
      expect(beds.length).to.be.greaterThan(listings.length / 2);
      for (const b of beds) expect(b).to.be.within(1, 15);
      const cities = new Set(PLACES.map((p) => p.city));
      for (const l of listings) expect(cities.has(l.City), String(l.City)).to.equal(true);
    });

    it('a value the field cannot hold is not forced into it: the field gets a value of its own type, or none', () => {
      // Not the story's postal code as a number, nor its price as text.
      const zips = (n: number) => PLACES.some((p) => n >= p.zip && n < p.zip + p.zips);
      for (const l of listings) {
        if (l.PostalCode !== null) expect(Number.isInteger(l.PostalCode) && !zips(l.PostalCode), String(l.PostalCode)).to.equal(true);
        if (l.ListPrice !== null) expect(l.ListPrice).to.be.a('string').with.length.at.most(5).and.not.match(/^\d+$/);
      }
      expect(listings.some((l) => l.ListPrice !== null)).to.equal(true);
      const mls = new Set(listings.map((l) => l.MlsStatus));
      expect(mls.has('Active')).to.equal(false);
      const values = new Set(model.lookups.find((l) => l.name === 'MlsStatus')!.values.map((v) => v.value));
      for (const v of mls) if (v !== null) expect(values.has(v), v).to.equal(true);
      // The story is not bound by MlsStatus: its listings are still mostly Active.
      expect(listings.filter((l) => l.StandardStatus === 'Active').length).to.be.greaterThan(listings.length / 3);
      expect(listings.filter((l) => l.StandardStatus !== 'Active').every((l) => l.MlsStatus === l.StandardStatus)).to.equal(true);
    });
  });

  const FLAVOURS = [
    { label: 'string lookups', file: 'reso/dd-2.0-lookup-resource.xml', databases: describeEachDatabase },
    { label: 'EnumType lookups', file: 'reso/dd-2.0-enum.xml', databases: (title: string, fn: (t: DatabaseTarget) => void) => describe(`${title} (SQLite)`, () => fn(sqliteTarget)) },
  ];
  for (const flavour of FLAVOURS) {
    flavour.databases(`RESO's DD 2.0 (${flavour.label})`, (target) => {
      let model: ServiceModel;
      let seeded: Seeded;
      before(async function () {
        requireShared(this);
        const dir = mkdtempSync(join(tmpdir(), 'reso-demo-dd-'));
        cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
        generate({ dictionary: sharedPath(flavour.file), outDir: dir });
        model = loadGenerated(dir);
        seeded = await seedModel(model, target, 30, cleanup);
      });

      it('every one of its 41 sets but Field and EntityEvent gets records, each valid for the store and the schema', () => {
        expect(model.entitySets).to.have.length(41);
        const names = model.entitySets.map((s) => s.name).filter((n) => !NOT_DEMO.includes(n));
        expect(names).to.have.length(38);
        // Its Lookup set does not describe the dictionary (RESO's file states no policy): its rows are data, written too.
        expect(setsWithRecords(seeded)).to.have.members([...names, 'Lookup']);
        expect(schemaRefusals(model, seeded)).to.deep.equal([]);
        expect(seeded.summary.listings).to.equal(30);
      });

      it('its Lookup rows are the lookup values the records hold: each once, under its lookup\'s name', () => {
        const held = new Set<string>();
        for (const set of model.entitySets) {
          for (const f of set.fields.filter((x) => x.lookupName && x.type === 'Edm.String')) {
            for (const r of seeded.stored.get(set.name)!) for (const v of [r[f.name]].flat()) if (typeof v === 'string') held.add(`${f.lookupName} ${v}`);
          }
        }
        const rows = seeded.stored.get('Lookup')!;
        expect(held.size).to.be.greaterThan(20);
        expect(rows.map((r) => `${r.LookupName} ${r.LookupValue}`).sort()).to.deep.equal([...held].sort());
        for (const r of rows) expect([r.LookupKey, r.StandardLookupValue]).to.deep.equal([`${r.LookupName}.${r.LookupValue}`, r.LookupValue]);
      });

      it('children of Property reached through their conventional joins point at real listings; discriminated records at their own parents', () => {
        const joins = joinProblems(model, seeded.stored, 'Property');
        expect(joins.problems).to.deep.equal([]);
        expect(Object.keys(joins.children)).to.have.members(
          ['GreenBuildingVerifications', 'HistoryTransactional', 'Media', 'OpenHouses', 'PowerProduction', 'Rooms', 'SocialMedia', 'UnitTypes']);
        for (const [nav, n] of Object.entries(joins.children)) expect(n, nav).to.be.greaterThan(0);
        expect(joins.children.Media).to.equal(seeded.summary.media);
        // OtherPhone hangs off members and contacts, not listings: its records name existing ones.
        const phones = seeded.stored.get('OtherPhone')!;
        expect(phones.every((p) => ['Member', 'Contacts'].includes(p.ResourceName))).to.equal(true);
      });

      it('the listing story is told in Property by RESO\'s names: statuses, agents who are members, media counted', () => {
        const listings = seeded.stored.get('Property')!;
        const members = new Set(seeded.stored.get('Member')!.map((m) => m.MemberKey));
        for (const l of listings) expect(members.has(l.ListAgentKey), l.ListingKey).to.equal(true);
        expect(listings.some((l) => l.StandardStatus === 'Active')).to.equal(true);
        const photos = new Map<string, number>();
        for (const m of seeded.stored.get('Media')!) if (m.MediaCategory === 'Photo') photos.set(m.ResourceRecordKey, (photos.get(m.ResourceRecordKey) ?? 0) + 1);
        for (const l of listings) expect(l.PhotosCount, l.ListingKey).to.equal(photos.get(l.ListingKey) ?? 0);
      });
    });
  }

  describe('a dictionary of keys and change timestamps only, without a declared listing root', () => {
    let model: ServiceModel;
    let seeded: Seeded;

    /** Every set of the shipped dictionary, with its key (as declared) and ModificationTimestamp, nothing else. */
    function bareDictionary(base: ServiceModel): string {
      const types = base.entitySets.map((s) => {
        const key = s.fieldsByName[s.key];
        const keyType = `Type="${key.type}"${key.maxLength ? ` MaxLength="${key.maxLength}"` : ''}`;
        const stamp = s.fieldsByName.ModificationTimestamp ? '\n        <Property Name="ModificationTimestamp" Type="Edm.DateTimeOffset" Precision="3" Nullable="false"/>' : '';
        return `      <EntityType Name="${typeOf(s)}">\n        <Key><PropertyRef Name="${s.key}"/></Key>\n        <Property Name="${s.key}" ${keyType} Nullable="false"/>${stamp}\n      </EntityType>`;
      });
      const sets = base.entitySets.map((s) => `        <EntitySet Name="${s.name}" EntityType="test.bare.${typeOf(s)}"/>`);
      return `<?xml version="1.0" encoding="UTF-8"?>
<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx">
  <edmx:DataServices>
    <Schema Namespace="test.bare" xmlns="http://docs.oasis-open.org/odata/ns/edm">
${types.join('\n')}
      <EntityContainer Name="Default">
${sets.join('\n')}
      </EntityContainer>
    </Schema>
  </edmx:DataServices>
</edmx:Edmx>
`;
    }

    before(async () => {
      model = versions.next(() => bareDictionary(versions.base.model)).model;
      seeded = await seedModel(model, sqliteTarget, 30, cleanup);
    });

    it('Property tells the story (keys L000001…), the roster is seeded, every other set gets records of its own', () => {
      expect(model.entitySets.some((s) => s.listingRoot)).to.equal(false);
      expect(setsWithRecords(seeded)).to.have.members(demoSetNames(model));
      expect(seeded.stored.get('Property')!.map((l) => l.ListingKey).slice(0, 2)).to.deep.equal(['L000001', 'L000002']);
      expect(seeded.summary).to.include({ listings: 30, offices: 3, members: 10 });
      expect(seeded.summary.others).to.include({ Media: 3, OpenHouse: 3 });
      expect(schemaRefusals(model, seeded)).to.deep.equal([]);
      for (const l of seeded.stored.get('Property')!) expect(l.ModificationTimestamp <= '2026-06-01T00:00:00.000Z').to.equal(true);
    });

    it('a server starting on an empty database seeds it, and a second start finds it seeded', async () => {
      const db = await sqliteTarget.create();
      cleanup.push(() => db.drop());
      const start = async () => {
        const service = new ListingService(model, openDatabase(db.url), { seedListings: 12 });
        await service.prepare();
        const counts = await Promise.all(['Property', 'Media', 'Member'].map((s) => service.store(s).count()));
        await service.close();
        return counts;
      };
      const first = await start();
      expect(first[0]).to.equal(12);
      expect(first[1]).to.be.greaterThan(0);
      expect(await start()).to.deep.equal(first);
    });
  });
});
