/**
 * Any RESO-shaped dictionary works end to end (docs/dictionary.md "Starting from your own dictionary"): for each dictionary, what
 * an operator does, as real processes in a copy of the project: the dictionary put in place of
 * csdl/reso-dictionary.xml, `npm run generate`, `npm run build` (which must succeed), `reso-server serve` on an empty
 * database that it seeds with demo data; then, over HTTP with the demo token, what a client does knowing nothing but
 * the metadata: every set declared (XML and JSON metadata, service document); in every set with records a key fetch,
 * a filter, and a walk of small pages by nextLink; the expansion of every navigation every entity type declares (or
 * the documented 501 where the metadata says the service cannot expand it, listed here with the reason); the change
 * log walked from its start, every event naming a record that fetches (or 404).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { XMLValidator } from 'fast-xml-parser';
import { DatabaseTarget, mariadbTarget, MYSQL_URL, sqliteTarget, TestDatabase } from './support/databases';
import { HttpResult, odataError, request } from './support/http';
import { pool } from './support/licence-http';
import { LOCAL, minimalDictionary, mlsSubsetDictionary } from './support/local-dictionaries';
import { Rec, walkPages } from './support/next-links';
import { OperatorProject, projectWithDictionary, ServedProject, serveProject } from './support/operator-project';
import { declaredSets, keyLiteral, ServedSet, servedSets } from './support/served-model';
import { hasShared, SHARED_DIR, sharedPath } from './support/shared';

const TOKEN = 'any-dictionary-token-0123456789abcdefghij';
const LISTINGS = 40;

interface DictionaryCase {
  readonly title: string;
  /** The dictionary's text; undefined when it cannot be had here (the case is skipped, saying why). */
  readonly dictionary: () => string | undefined;
  readonly databases: readonly DatabaseTarget[];
  /**
   * Navigations (`Set.Navigation`) the service says it cannot expand, each with the reason the dictionary gives it
   * no way to: nothing identifies the related record. The metadata must name exactly these. Left out (the extra
   * dictionaries, not known in advance): whatever the metadata names is listed in the closing line.
   */
  readonly closed?: Readonly<Record<string, string>>;
  /** Navigations (`Set.Navigation`) whose expansion must bring related records for some record. */
  readonly expandsSome: readonly string[];
  /**
   * Whether the dictionary makes EntityEvent the change log (Policy.ChangeLogOf, which `reso-server init` adds):
   * then the demo data's every record is logged. RESO's own files state no policy: their EntityEvent is served as
   * declared, a set with no records.
   */
  readonly changeLog: boolean;
  /** Given to `reso-server init` instead of put in place. */
  readonly init?: boolean;
  /** Checks of its own, run once served. */
  readonly more?: (served: () => Served) => void;
}

interface Served {
  readonly url: string;
  readonly sets: readonly ServedSet[];
  /** Every record of each set, as one walk of large pages read them. */
  readonly records: ReadonlyMap<string, readonly Rec[]>;
}

const get = (url: string, headers: Record<string, string> = {}) => request(url, { token: TOKEN, headers });
const pageOf = (size: number) => ({ Prefer: `odata.maxpagesize=${size}` });
const withoutAnnotations = (r: Rec) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.includes('@')));
const described = (r: HttpResult) => `${r.status} ${r.text.slice(0, 300)}`;

/** RESO's navigations to OUID: records name their system by OriginatingSystemID (OUID's OrganizationUniqueId, not its key). */
function ouidNavigations(sets: Record<string, readonly string[]>): Record<string, string> {
  const reason = 'leads to OUID, which the record names only by the system\'s OrganizationUniqueId (…SystemID), not by OUID\'s key; '
    + 'its …SystemKey is the record\'s own key in that system';
  return Object.fromEntries(Object.entries(sets).flatMap(([set, navs]) => navs.map((n) => [`${set}.${n}`, reason])));
}

const SYSTEMS = ['OriginatingSystem', 'SourceSystem'];
/** What RESO's DD 2.0 (transport's files, both flavours) declares and no field of it identifies. */
const DD20_CLOSED = {
  ...ouidNavigations(Object.fromEntries(['Association', 'Contacts', 'HistoryTransactional', 'LockOrBox', 'Media', 'Member', 'MemberAssociation',
    'Office', 'OfficeAssociation', 'OpenHouse', 'Property', 'Queue', 'Rules', 'SavedSearch', 'TeamMembers', 'Teams'].map((s) => [s, SYSTEMS]))),
  ...ouidNavigations({
    InternetTracking: ['ActorOriginatingSystem', 'ActorSourceSystem', 'EventOriginatingSystem', 'EventSourceSystem', 'ObjectOriginatingSystem', 'ObjectSourceSystem'],
    Showing: ['AgentOriginatingSystem', 'AgentSourceSystem', 'ListingOriginatingSystem', 'ListingSourceSystem', 'ShowingOriginatingSystem', 'ShowingSourceSystem'],
  }),
  'Association.AssociationMember': 'no field names the member (there is no AssociationMemberKey; ExecutiveOfficerMemberKey is another role)',
  'ContactListings.ListingNotes': 'ContactListingNotes is keyed by ContactKey alone and carries no ContactListingsKey: no field ties a note to one contact listing',
  'LockOrBox.ShowingAgent': 'LockOrBox names the agent only by ShowingAgentMlsId/ShowingAgentId, not by MemberKey (there is no ShowingAgentKey)',
  'LockOrBox.ShowingOffice': 'LockOrBox names the office only by ShowingOfficeId, not by OfficeKey (there is no ShowingOfficeKey)',
};

const DD20_EXPANDING = ['Property.Media', 'Property.OpenHouses', 'Property.ListAgent', 'Property.Rooms', 'OpenHouse.Listing', 'Member.Office'];

/** The classic file declares the same, but for the navigations of sets it gives none (OpenHouse, HistoryTransactional, Queue). */
const CLASSIC_CLOSED = Object.fromEntries(Object.entries(DD20_CLOSED).filter(([n]) => !/^(OpenHouse|HistoryTransactional|Queue)\./.test(n)));

function shared(file: string): () => string | undefined {
  return () => (hasShared ? readFileSync(sharedPath(file), 'utf8') : undefined);
}

/** Made once: the case's dictionary and its checks read the same. */
const MLS_SUBSET = (() => {
  let made: ReturnType<typeof mlsSubsetDictionary> | undefined;
  return () => (made ??= mlsSubsetDictionary());
})();

const withMariaDb = MYSQL_URL ? [sqliteTarget, mariadbTarget] : [sqliteTarget];

const CASES: DictionaryCase[] = [
  {
    title: 'RESO DD 2.0, string lookups (dd-2.0-lookup-resource.xml)',
    dictionary: shared('reso/dd-2.0-lookup-resource.xml'),
    databases: [sqliteTarget],
    closed: DD20_CLOSED,
    expandsSome: DD20_EXPANDING,
    changeLog: false,
  },
  {
    title: 'RESO DD 2.0, string lookups, given to reso-server init (the policy defaults it adds)',
    dictionary: shared('reso/dd-2.0-lookup-resource.xml'),
    init: true,
    databases: [sqliteTarget],
    closed: DD20_CLOSED,
    expandsSome: DD20_EXPANDING,
    changeLog: true,
  },
  {
    title: 'RESO DD 2.0, EnumType lookups (dd-2.0-enum.xml)',
    dictionary: shared('reso/dd-2.0-enum.xml'),
    databases: [sqliteTarget],
    closed: DD20_CLOSED,
    expandsSome: DD20_EXPANDING,
    changeLog: false,
  },
  {
    title: 'RESO DD 2.0 classic (web-api-commander\'s RESODataDictionary-2.0.xml: EnumType lookups, one line, older navigation names)',
    dictionary: shared('reso/RESODataDictionary-2.0.xml'),
    databases: [sqliteTarget],
    closed: CLASSIC_CLOSED,
    expandsSome: ['Property.Media', 'Property.OpenHouse', 'Property.ListAgent', 'Property.Rooms'],
    changeLog: false,
  },
  {
    title: 'an MLS\'s subset of the shipped dictionary with local fields, a local lookup and a local resource',
    dictionary: () => MLS_SUBSET().xml,
    databases: withMariaDb,
    closed: {},
    expandsSome: ['Property.Media', `Property.${LOCAL.toNotes}`, `${LOCAL.set}.${LOCAL.toListing}`],
    changeLog: true,
    more: (served) => localChecks(served),
  },
  {
    title: 'a minimal dictionary: keys and ModificationTimestamp only, five sets, one navigation',
    dictionary: () => minimalDictionary(),
    databases: [sqliteTarget],
    closed: {},
    expandsSome: [],
    changeLog: false,
  },
  ...extraDictionaries(),
];

/** Every *.xml in the folder RESO_EXTRA_DICTIONARIES names (none when it is not set): served and walked as any other. */
function extraDictionaries(): DictionaryCase[] {
  const folder = process.env.RESO_EXTRA_DICTIONARIES;
  if (!folder) return [];
  return readdirSync(folder).filter((f) => f.endsWith('.xml')).sort().map((f) => ({
    title: `${f} (from RESO_EXTRA_DICTIONARIES)`,
    dictionary: () => readFileSync(join(folder, f), 'utf8'),
    databases: [sqliteTarget],
    expandsSome: [],
    changeLog: false,
  }));
}

async function readAll(url: string, set: ServedSet): Promise<Rec[]> {
  return (await walkPages(`${url}/${set.name}`, { token: TOKEN, headers: pageOf(1000) })).records;
}

for (const c of CASES) {
  describe(`Any dictionary: ${c.title}`, function () {
    this.timeout(300_000);
    let project: OperatorProject | undefined;
    let dictionary: string | undefined;
    let began = 0;

    before(async function () {
      began = Date.now();
      dictionary = c.dictionary();
      if (dictionary === undefined) {
        console.log(`      (skipped: reads ../shared, which is not beside this checkout at ${SHARED_DIR})`);
        return this.skip();
      }
      project = await projectWithDictionary(dictionary, { init: c.init });
    });
    after(() => {
      if (project) console.log(`      (the whole case: ${((Date.now() - began) / 1000).toFixed(1)} s)`);
      project?.remove();
    });

    for (const target of c.databases) describe(`served on ${target.label}`, () => servedChecks(c, target, () => project!, () => dictionary!));
  });
}

function servedChecks(c: DictionaryCase, target: DatabaseTarget, project: () => OperatorProject, dictionary: () => string): void {
  let db: TestDatabase | undefined;
  let server: ServedProject | undefined;
  let served: Served;
  let began = 0;
  /** Navigations whose expansion brought related records, and (for a dictionary not known in advance) those closed: for the closing line. */
  const brought = new Set<string>();
  const closedSeen: string[] = [];

  before(async () => {
    began = Date.now();
    db = await target.create();
    server = await serveProject(project(), db.url, TOKEN, LISTINGS);
    const metadata = await get(`${server.url}/$metadata?$format=json`);
    expect(metadata.status, described(metadata)).to.equal(200);
    const sets = servedSets(metadata.json);
    const records = new Map<string, Rec[]>();
    for (const set of sets) records.set(set.name, await readAll(server.url, set));
    served = { url: server.url, sets, records };
  });
  after(async () => {
    await server?.stop();
    await db?.drop();
    const p = project();
    if (server) {
      const made = 'init' in p.seconds ? `init ${p.seconds.init.toFixed(1)} s` : `generate ${p.seconds.generate.toFixed(1)} s, build ${p.seconds.build.toFixed(1)} s`;
      console.log(`      [${target.label}] ${made}, serving after ${server.seconds.toFixed(1)} s, `
        + `checks ${((Date.now() - began) / 1000 - server.seconds).toFixed(1)} s; ${served.sets.length} sets, ${[...served.records.values()].reduce((n, r) => n + r.length, 0)} records, `
        + `${served.sets.reduce((n, s) => n + s.navigations.length, 0)} navigations (${brought.size} brought records: ${[...brought].join(' ')})`
        + `${closedSeen.length ? `; closed: ${closedSeen.join(' ')}` : ''}`);
    }
  });

  const withRecords = () => served.sets.filter((s) => served.records.get(s.name)!.length > 0);

  it('$metadata in XML and in JSON, and the service document, declare every set the dictionary declares', async () => {
    const expected = declaredSets(dictionary()).sort();
    expect(expected.length).to.be.greaterThan(2);
    const xml = await get(`${served.url}/$metadata`);
    expect(xml.status).to.equal(200);
    expect(xml.headers.get('content-type')).to.match(/^application\/xml/);
    expect(XMLValidator.validate(xml.text)).to.equal(true);
    expect(declaredSets(xml.text).sort()).to.deep.equal(expected);
    expect(served.sets.map((s) => s.name).sort()).to.deep.equal(expected);
    const root = await get(`${served.url}/`);
    expect(root.status).to.equal(200);
    expect((root.json.value as Rec[]).filter((v) => v.kind === 'EntitySet').map((v) => v.name).sort()).to.deep.equal(expected);
    // Demo data in most sets (not in the change log, nor in the rows that describe the dictionary where they are empty).
    expect(withRecords().length, withRecords().map((s) => s.name).join()).to.be.greaterThan(expected.length / 2);
  });

  it('in every set with records, a key fetch answers the record the collection holds', async () => {
    for (const set of withRecords()) {
      const records = served.records.get(set.name)!;
      const record = records[Math.floor(records.length / 2)];
      const r = await get(`${served.url}/${set.name}(${keyLiteral(set, record[set.key])})`);
      expect(r.status, `${set.name}: ${described(r)}`).to.equal(200);
      expect(withoutAnnotations(r.json), set.name).to.deep.equal(withoutAnnotations(record));
    }
  });

  it('in every set with records, a filter on ModificationTimestamp (on the key where there is none) selects exactly the records it holds for', async () => {
    for (const set of withRecords()) {
      const records = served.records.get(set.name)!;
      const byStamp = set.properties.get('ModificationTimestamp') === 'Edm.DateTimeOffset' && !set.nonFilterable.has('ModificationTimestamp');
      let filter: string;
      let holds: (r: Rec) => boolean;
      if (byStamp) {
        const stamps = records.map((r) => r.ModificationTimestamp as string).sort();
        const after = stamps[Math.floor(stamps.length / 2)];
        filter = `ModificationTimestamp gt ${after}`;
        holds = (r) => Date.parse(r.ModificationTimestamp) > Date.parse(after);
      } else {
        const key = records[0][set.key];
        filter = `${set.key} eq ${decodeURIComponent(keyLiteral(set, key))}`;
        holds = (r) => r[set.key] === key;
      }
      const found = (await walkPages(`${served.url}/${set.name}?$filter=${encodeURIComponent(filter)}`, { token: TOKEN, headers: pageOf(1000) })).records;
      for (const r of found) expect(holds(r), `${set.name} ${filter}: ${JSON.stringify(r[set.key])}`).to.equal(true);
      expect(found.map((r) => r[set.key]).sort(), `${set.name} ${filter}`).to.deep.equal(records.filter(holds).map((r) => r[set.key]).sort());
    }
  });

  it('in every set with records, a walk of small pages by nextLink sees every key exactly once, as many as $count says', async () => {
    for (const set of withRecords()) {
      const keys = served.records.get(set.name)!.map((r) => r[set.key]);
      // Pages of 7, or of a hundredth of the set where it is large (the dictionary's own rows: thousands).
      const size = Math.max(7, Math.ceil(keys.length / 100));
      const walk = await walkPages(`${served.url}/${set.name}?$count=true&$select=${set.key}`, { token: TOKEN, headers: pageOf(size) });
      const seen = walk.records.map((r) => r[set.key]);
      expect(walk.pages[0].json['@odata.count'], set.name).to.equal(seen.length);
      expect(new Set(seen).size, `${set.name}: no key twice`).to.equal(seen.length);
      expect([...seen].sort(), set.name).to.deep.equal([...keys].sort());
      if (keys.length > size) expect(walk.pages.length, set.name).to.equal(Math.ceil(keys.length / size));
    }
  });

  it('$expand of each navigation each entity type declares: an array or a record (or null) as its kind is; the documented 501 only where nothing identifies the related record', async () => {
    const declaredClosed = served.sets.flatMap((s) => s.nonExpandable.map((n) => `${s.name}.${n}`)).sort();
    if (c.closed) expect(declaredClosed).to.deep.equal(Object.keys(c.closed).sort());
    else closedSeen.push(...declaredClosed);
    for (const set of served.sets) {
      for (const nav of set.navigations) {
        const name = `${set.name}.${nav.name}`;
        const url = `${served.url}/${set.name}?$expand=${nav.name}`;
        if (declaredClosed.includes(name)) {
          const r = await get(url);
          expect([r.status, odataError(r).code], name).to.deep.equal([501, 'NavigationNotExpandable']);
          const one = served.records.get(set.name)![0];
          if (one) {
            const path = await get(`${served.url}/${set.name}(${keyLiteral(set, one[set.key])})/${nav.name}`);
            expect([path.status, odataError(path).code], `${name} as a path`).to.deep.equal([501, 'NavigationNotFollowable']);
          }
          continue;
        }
        const target = served.sets.find((s) => s.name === nav.target);
        expect(target, `${name} leads to a set`).to.not.equal(undefined);
        const targetKeys = new Set(served.records.get(target!.name)!.map((t) => t[target!.key]));
        const samples: { parent: Rec; related: Rec[] }[] = [];
        for (const record of (await walkPages(url, { token: TOKEN, headers: pageOf(200) })).records) {
          const value = record[nav.name];
          const related: Rec[] = nav.collection ? value : value === null ? [] : [value];
          if (nav.collection) expect(value, name).to.be.an('array');
          else expect(value === null || (typeof value === 'object' && !Array.isArray(value)), `${name}: ${JSON.stringify(value)}`).to.equal(true);
          // What is expanded is a record of the set the navigation leads to.
          for (const t of related) expect(targetKeys.has(t[target!.key]), `${name}: ${JSON.stringify(t[target!.key])} is a ${target!.name}`).to.equal(true);
          if (related.length > 0) brought.add(name);
          if (samples.filter((x) => (x.related.length > 0) === (related.length > 0)).length < (related.length > 0 ? 3 : 1)) samples.push({ parent: record, related });
        }
        // The same related records as the navigation's path gives, for a few parents: expanded with the right parent.
        if (set.nonNavigable.includes(nav.name)) continue;
        for (const { parent, related } of samples) {
          const path = `${served.url}/${set.name}(${keyLiteral(set, parent[set.key])})/${nav.name}`;
          const keys = (rs: Rec[]) => rs.map((t) => t[target!.key]).sort();
          if (nav.collection) {
            expect(keys((await walkPages(path, { token: TOKEN, headers: pageOf(1000) })).records), path).to.deep.equal(keys(related));
          } else {
            const one = await get(path);
            expect([one.status, one.status === 200 ? one.json[target!.key] : undefined], path).to.deep.equal(related.length ? [200, related[0][target!.key]] : [204, undefined]);
          }
        }
      }
    }
    for (const name of c.expandsSome) expect(brought.has(name), `${name} brings related records`).to.equal(true);
  });

  it('EntityEvent, where the dictionary has it, walked from sequence 0 to the end: every event names a set and a key that fetches (or 404); none where the dictionary does not make it the change log', async function () {
    const events = served.sets.find((s) => s.name === 'EntityEvent');
    if (!events) return this.skip();
    const walk = await walkPages(`${served.url}/EntityEvent?$filter=${encodeURIComponent('EntityEventSequence gt 0')}`, { token: TOKEN, headers: pageOf(1000) });
    const sequences = walk.records.map((e) => e.EntityEventSequence as number);
    if (!c.changeLog) {
      // generate said so.
      expect(project().said).to.include('note: EntityEvent is served as an ordinary set, which no change appends to');
      return expect(sequences).to.deep.equal([]);
    }
    expect(sequences.length).to.be.greaterThan(0);
    for (let i = 1; i < sequences.length; i++) expect(sequences[i], 'sequences increase').to.be.greaterThan(sequences[i - 1]);
    const setsByName = new Map(served.sets.map((s) => [s.name, s]));
    const named = new Map<string, { set: ServedSet; key: string }>();
    for (const e of walk.records) {
      const set = setsByName.get(e.ResourceName);
      expect(set, `event ${e.EntityEventSequence} names ${e.ResourceName}`).to.not.equal(undefined);
      named.set(`${e.ResourceName} ${e.ResourceRecordKey}`, { set: set!, key: e.ResourceRecordKey });
    }
    const answers = await pool([...named.values()].map(({ set, key }) => async () => {
      const r = await get(`${served.url}/${set.name}(${keyLiteral(set, key)})?$select=${set.key}`);
      return { set: set.name, key, status: r.status, found: r.json?.[set.key] };
    }), 6);
    for (const a of answers) {
      expect([200, 404], `${a.set}(${a.key})`).to.include(a.status);
      if (a.status === 200) expect(String(a.found), `${a.set}(${a.key})`).to.equal(a.key);
    }
  });

  if (c.more) c.more(() => served);
}

/** The MLS's local additions, as a client sees them. */
function localChecks(served: () => Served): void {
  it('Property has lost the fields the MLS removed and has its local ones, as declared', () => {
    const property = served().sets.find((s) => s.name === 'Property')!;
    const { removed } = MLS_SUBSET();
    // About half of what could go: a third of all its fields or more.
    expect(removed.length / (removed.length + property.properties.size)).to.be.greaterThan(1 / 3);
    expect(removed.filter((f) => property.properties.has(f))).to.deep.equal([]);
    expect(property.properties.get(LOCAL.lookupField)).to.equal('Edm.String');
    expect(property.properties.get(LOCAL.decimalField)).to.equal('Edm.Decimal');
    expect(property.navigations.find((n) => n.name === LOCAL.toNotes)).to.deep.equal({ name: LOCAL.toNotes, collection: true, target: LOCAL.set });
    for (const r of served().records.get('Property')!) expect(removed.filter((f) => f in r), String(r.ListingKey)).to.deep.equal([]);
  });

  it('its local lookup field holds its declared values, filters by them, and its local resource hangs off its listings both ways', async () => {
    const { url, records } = served();
    const listings = records.get('Property')!;
    const views = listings.map((l) => l[LOCAL.lookupField]).filter((v) => v !== null);
    expect(views.length, 'listings with a view').to.be.greaterThan(0);
    for (const v of views) expect(LOCAL.lookupValues as readonly string[]).to.include(v);
    expect(listings.some((l) => typeof l[LOCAL.decimalField] === 'number')).to.equal(true);
    const value = views[0] as string;
    const filtered = await get(`${url}/Property?$filter=${encodeURIComponent(`${LOCAL.lookupField} eq '${value}'`)}&$select=ListingKey,${LOCAL.lookupField}`, pageOf(1000));
    expect(filtered.status, described(filtered)).to.equal(200);
    expect((filtered.json.value as Rec[]).map((l) => l.ListingKey).sort()).to.deep.equal(listings.filter((l) => l[LOCAL.lookupField] === value).map((l) => l.ListingKey).sort());

    const notes = records.get(LOCAL.set)!;
    expect(notes.length).to.be.greaterThan(0);
    const keys = new Set(listings.map((l) => l.ListingKey));
    for (const n of notes) expect(keys.has(n.ListingKey), `note ${n.ListingNoteKey} names a listing`).to.equal(true);
    const note = notes[0];
    const owner = await get(`${url}/Property('${note.ListingKey}')?$select=ListingKey&$expand=${LOCAL.toNotes}($select=ListingNoteKey,ListingKey)`);
    expect(owner.status, described(owner)).to.equal(200);
    expect((owner.json[LOCAL.toNotes] as Rec[]).map((n) => n.ListingNoteKey).sort())
      .to.deep.equal(notes.filter((n) => n.ListingKey === note.ListingKey).map((n) => n.ListingNoteKey).sort());
    const back = await get(`${url}/${LOCAL.set}('${note.ListingNoteKey}')/${LOCAL.toListing}?$select=ListingKey`);
    expect([back.status, back.json?.ListingKey], described(back)).to.deep.equal([200, note.ListingKey]);
  });
}
