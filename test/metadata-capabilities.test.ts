/**
 * OData 4.01 and RESO Web API Core: the metadata document tells clients the truth about the service, so that
 * generated clients offer only what works: the version responses speak, every annotation term declared or
 * referenced, read-only entity sets, no $batch, and exactly the navigations the service expands and follows.
 */
import { expect } from 'chai';
import { XMLParser } from 'fast-xml-parser';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';

const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true }).parse(serviceModel.metadataXml);
const schemas: any[] = [].concat(parsed.Edmx.DataServices.Schema);
const dataSchema = schemas.find((s) => s['@Namespace'] === serviceModel.namespace);
const entitySets: any[] = [].concat(dataSchema.EntityContainer.EntitySet);
const annotationsOf = (node: any): any[] => [].concat(node.Annotation ?? []);
const annotation = (node: any, term: string) => annotationsOf(node).find((a) => a['@Term'] === term);
const json = JSON.parse(serviceModel.metadataJson);

/** Every Term="…" the XML uses, and every "@Term" key of the JSON. */
function termsUsed(): Set<string> {
  const terms = new Set<string>();
  for (const m of serviceModel.metadataXml.matchAll(/Term="([^"]+)"/g)) terms.add(m[1]);
  JSON.stringify(json, (key, value) => {
    if (key.startsWith('@')) terms.add(key.slice(1));
    return value;
  });
  return terms;
}

/** Declared navigations an entity set refuses, as its ExpandRestrictions and NavigationRestrictions state. */
function closedNavigations(set: any): { expand: string[]; navigate: string[] } {
  const expand = annotation(set, 'Capabilities.ExpandRestrictions');
  const navigate = annotation(set, 'Capabilities.NavigationRestrictions');
  const records: any[] = navigate ? [].concat(navigate.Record.PropertyValue.Collection.Record) : [];
  return {
    expand: expand ? [].concat(expand.Record.PropertyValue.Collection.NavigationPropertyPath) : [],
    navigate: records.map((r) => [].concat(r.PropertyValue).find((p: any) => p['@Property'] === 'NavigationProperty')!['@NavigationPropertyPath']),
  };
}

describe('Metadata document: version, vocabularies and what the service allows', () => {
  it('publishes the XML as a CSDL 4.0 document (what a saved EDMX is read as; 4.01 to a client that asks), the JSON as 4.01', () => {
    expect(parsed.Edmx['@Version']).to.equal('4.0');
    expect(json.$Version).to.equal('4.01');
  });

  it('declares or references every annotation term it uses (no unresolved term for a client to warn about)', () => {
    const aliases = new Set(['Core', 'Capabilities']);
    const declared = new Set(schemas.flatMap((s) => [].concat(s.Term ?? []).map((t: any) => `${s['@Namespace']}.${t['@Name']}`)));
    for (const term of termsUsed()) {
      const alias = term.split('.')[0];
      expect(aliases.has(alias) || declared.has(term), term).to.equal(true);
    }
    expect(declared).to.include('RESO.OData.Metadata.LookupName');
    expect(json['RESO.OData.Metadata'].LookupName).to.deep.equal({ $Kind: 'Term' });
  });

  it('states that every entity set is read-only and that the service has no $batch', () => {
    for (const set of entitySets) {
      for (const [term, property] of [['Insert', 'Insertable'], ['Update', 'Updatable'], ['Delete', 'Deletable']]) {
        const a = annotation(set, `Capabilities.${term}Restrictions`);
        expect(a?.Record.PropertyValue['@Property'], `${set['@Name']} ${term}`).to.equal(property);
        expect(a.Record.PropertyValue['@Bool'], `${set['@Name']} ${term}`).to.equal('false');
        expect(json[serviceModel.namespace].Default[set['@Name']][`@Capabilities.${term}Restrictions`]).to.deep.equal({ [property]: false });
      }
    }
    expect(annotation(dataSchema.EntityContainer, 'Capabilities.BatchSupported')['@Bool']).to.equal('false');
    expect(json[serviceModel.namespace].Default['@Capabilities.BatchSupported']).to.equal(false);
  });

  it('the XML and JSON documents close the same navigations; what cannot be followed cannot be expanded either', () => {
    for (const set of entitySets) {
      const closed = closedNavigations(set);
      expect(closed.expand, set['@Name']).to.include.members(closed.navigate);
      const inJson = json[serviceModel.namespace].Default[set['@Name']];
      expect(inJson['@Capabilities.ExpandRestrictions']?.NonExpandableProperties ?? [], set['@Name']).to.deep.equal(closed.expand);
      const restricted: { NavigationProperty: string }[] = inJson['@Capabilities.NavigationRestrictions']?.RestrictedProperties ?? [];
      expect(restricted.map((r) => r.NavigationProperty), set['@Name']).to.deep.equal(closed.navigate);
    }
  });

  it('opens every navigation the shipped dictionary declares, as a path and as an expansion (single-valued ones too)', () => {
    for (const set of entitySets) expect(closedNavigations(set), set['@Name']).to.deep.equal({ expand: [], navigate: [] });
  });
});

describeEachDatabase('Metadata document: the navigations it opens are exactly those the service serves', (target) => {
  let db: TestDatabase;
  let server: RunningServer;

  before(async function () {
    this.timeout(120_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
    await seedDemoData(server.service, { listings: 5 });
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  for (const spec of serviceModel.entitySets) {
    const set = entitySets.find((s) => s['@Name'] === spec.name);
    const closed = set ? closedNavigations(set) : { expand: [], navigate: [] };
    for (const nav of spec.navigationProperties) {
      const expandable = !closed.expand.includes(nav.name);
      const navigable = !closed.navigate.includes(nav.name);
      const says = `$expand ${expandable ? 200 : 501}, the path ${navigable ? 200 : 501}`;
      it(`${spec.name}/${nav.name} is ${expandable ? 'open' : navigable ? 'followed, not expanded' : 'closed'}: ${says}`, async () => {
        const first = await get(`${server.url}/${spec.name}?$top=1&$select=${spec.key}`);
        expect(first.status).to.equal(200);
        const key = first.json.value[0]?.[spec.key];
        expect(key, `${spec.name} has a record to navigate from`).to.be.a('string');
        const expand = await get(`${server.url}/${spec.name}?$top=1&$expand=${nav.name}`);
        const path = await get(`${server.url}/${spec.name}('${encodeURIComponent(key)}')/${nav.name}`);
        expect(expand.status, expand.text.slice(0, 200)).to.equal(expandable ? 200 : 501);
        expect(path.status, path.text.slice(0, 200)).to.equal(navigable ? 200 : 501);
      });
    }
  }
});
