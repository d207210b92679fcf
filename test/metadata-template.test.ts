/**
 * Spec §4 (metadata document), the XML as one handlebars template renders it (src/metadata/templates/
 * metadata.xml.hbs). Its bytes for whole dictionaries are pinned by generated/metadata.xml (metadata.test.ts) and
 * the generator fixtures (test/fixtures/codegen/<case>/expected/metadata.xml); here, what those cannot show:
 * values that need escaping, the version a document declares, a client's view as served, and that rendering
 * leaves nothing global behind.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { serviceModel } from '../generated';
import { Licence } from '../src/auth/licence';
import type { Client } from '../src/auth/clients';
import type { FieldSpec } from '../src/model/service-model';
import { METADATA_TEMPLATE } from '../src/metadata/metadata-xml';
import { MetadataModel, MetadataViews, renderMetadata } from '../src/metadata/render-metadata';
import type { RunningServer } from '../src/process/server';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';
import { REPO_ROOT } from './support/shared';

/** Every character XML or handlebars' HTML escaping treats specially. */
const ODD = 'a&b<c>d"e\'f=g`h';
const MASK = new Map([['Property', new Set(['PrivateRemarks', 'StandardStatus'])], ['Media', new Set(['MediaURL'])]]);
const HIDDEN = ['PrivateRemarks', 'StandardStatus', 'Media.MediaURL'];

function field(name: string, more: Partial<FieldSpec> = {}): FieldSpec {
  return { name, type: 'Edm.String', collection: false, nullable: true, filterable: false, sortable: false, restricted: false, ...more };
}

/** One set whose field names, lookup name, navigation and header need escaping. */
const ODD_MODEL: MetadataModel = {
  namespace: 'test.odd',
  containerName: 'Default',
  metadataHeader: 'from odd--name.xml -- see',
  entitySets: [{
    name: 'Thing',
    entityType: 'test.odd.Thing',
    key: 'ThingKey',
    fields: [field('ThingKey', { nullable: false, filterable: true, sortable: true }), field(`Name${ODD}`, { lookupName: `Lookup${ODD}` })],
    navigations: [],
    navigationProperties: [{ name: `Other${ODD}`, type: 'test.odd.Thing' }],
    bindings: [],
  }],
};

const as4_01 = (xml: string) => xml.replace('<edmx:Edmx Version="4.0" ', '<edmx:Edmx Version="4.01" ');

describe('Metadata document: the XML template', () => {
  it("escapes for XML only: &, < and > in text, \" too in attributes; ', = and ` as they are; -- out of the header comment", () => {
    const xml = renderMetadata(ODD_MODEL).xml;
    expect(xml).to.include('<!-- from odd- -name.xml - - see -->\n');
    expect(xml).to.include('        <Property Name="Namea&amp;b&lt;c&gt;d&quot;e\'f=g`h" Type="Edm.String">\n'
      + '          <Annotation Term="RESO.OData.Metadata.LookupName" String="Lookupa&amp;b&lt;c&gt;d&quot;e\'f=g`h"/>\n'
      + '        </Property>\n');
    expect(xml).to.include('                  <PropertyPath>Namea&amp;b&lt;c&gt;d"e\'f=g`h</PropertyPath>\n');
    expect(xml).to.include('                  <NavigationPropertyPath>Othera&amp;b&lt;c&gt;d"e\'f=g`h</NavigationPropertyPath>\n');
  });

  it('what it escapes reads back as the names given', () => {
    const xml = renderMetadata(ODD_MODEL).xml;
    expect(XMLValidator.validate(xml)).to.equal(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true, htmlEntities: false }).parse(xml);
    const schema = [].concat(doc.Edmx.DataServices.Schema)[0] as any;
    const property = [].concat(schema.EntityType.Property)[1] as any;
    expect(property['@Name']).to.equal(`Name${ODD}`);
    expect(property.Annotation['@String']).to.equal(`Lookup${ODD}`);
    expect(schema.EntityType.NavigationProperty['@Name']).to.equal(`Other${ODD}`);
  });

  it('declares the version asked for: the 4.01 document is the published 4.0 one but for its Version, whole or masked', () => {
    const published = new MetadataViews(serviceModel, undefined, { xml: serviceModel.metadataXml, json: serviceModel.metadataJson });
    expect(published.xml('4.0')).to.equal(serviceModel.metadataXml);
    expect(published.xml('4.01')).to.equal(as4_01(serviceModel.metadataXml));
    const masked = new MetadataViews(serviceModel, MASK);
    expect(masked.xml('4.0')).to.equal(renderMetadata(serviceModel, MASK).xml);
    expect(masked.xml('4.01')).to.equal(as4_01(masked.xml('4.0')));
    expect(masked.json()).to.equal(renderMetadata(serviceModel, MASK).json);
  });

  it("a licence keeps its client's documents; licences hiding nothing share the published ones", () => {
    const client = (id: string, hiddenFields: string[]): Client => ({ id, name: id, hiddenFields, admin: false, createdAt: '' });
    const hiding = new Licence(serviceModel, undefined, client('hiding', HIDDEN));
    expect(hiding.metadata()).to.equal(hiding.metadata());
    expect(hiding.metadata().xml('4.0')).to.equal(renderMetadata(serviceModel, MASK).xml);
    const open = new Licence(serviceModel, undefined, client('open', []));
    expect(open.metadata()).to.equal(new Licence(serviceModel, undefined).metadata());
    expect(open.metadata().xml('4.0')).to.equal(serviceModel.metadataXml);
  });

  it('renders in a handlebars environment of its own: the global one gains no helper', () => {
    renderMetadata(ODD_MODEL);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const global = require('handlebars') as typeof import('handlebars');
    expect(Object.keys(global.helpers)).not.to.include.any.members(['text', 'attr', 'comment']);
  });

  it('the build ships the template beside the module that renders with it', () => {
    expect(readFileSync(METADATA_TEMPLATE, 'utf8')).to.equal(readFileSync(join(REPO_ROOT, 'src/metadata/templates/metadata.xml.hbs'), 'utf8'));
  });
});

describeEachDatabase('Metadata document: a client\'s view as served, in the version the client asks for', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let hidingToken: string;
  before(async () => {
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
    const { client } = await server.service.clients.add({ name: 'Hiding Realty', hiddenFields: HIDDEN });
    hidingToken = await server.service.clients.issueToken(client.id, 3600);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  it('a client hiding fields: its view; a client hiding nothing: the published document; 4.01 only to a client that asks', async () => {
    const masked = renderMetadata(serviceModel, MASK).xml;
    const published = serviceModel.metadataXml;
    // [token, OData-MaxVersion sent, OData-Version answered, document]
    const cases = [
      [hidingToken, '4.01', '4.01', as4_01(masked)], [hidingToken, '4.0', '4.0', masked], [hidingToken, undefined, '4.01', masked],
      [undefined, '4.01', '4.01', as4_01(published)], [undefined, '4.0', '4.0', published], [undefined, undefined, '4.01', published],
    ] as const;
    const tags = new Set<string>();
    for (const [token, max, version, body] of cases) {
      const r = await get(`${server.url}/$metadata`, { ...(max ? { 'OData-MaxVersion': max } : {}), ...(token ? { Authorization: `Bearer ${token}` } : {}) });
      expect(r.status, max).to.equal(200);
      expect(r.headers.get('odata-version')).to.equal(version);
      expect(r.headers.get('vary')).to.include('OData-MaxVersion');
      expect(r.headers.get('content-type')).to.equal('application/xml; charset=utf-8');
      expect(r.text === body, `${token ? 'hiding' : 'demo'} client, OData-MaxVersion ${max ?? 'not sent'}`).to.equal(true);
      tags.add(r.headers.get('etag')!);
    }
    expect(tags.size, 'each document its own tag').to.equal(4);
  });
});
