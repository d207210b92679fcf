/**
 * Spec §4 (metadata document) and §7/§8 policy as published: the generated $metadata is valid CSDL
 * (OASIS XSD for XML, OASIS JSON Schema for JSON) and states the filterable/sortable policy and $skip.
 */
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { expect } from 'chai';
import { XMLParser } from 'fast-xml-parser';
import { validateXML } from 'xmllint-wasm';
import { serviceModel } from '../generated';
import { renderMetadata } from '../src/metadata/render-metadata';
import { jsonView, MetadataView, xmlView } from './support/licence-metadata';
import { requireShared, sharedPath } from './support/shared';

const PROPERTY_QUERYABLE = ['ListingKey', 'ModificationTimestamp', 'PhotosChangeTimestamp', 'DocumentsChangeTimestamp', 'MlsStatus', 'PropertyType'];

/** A client's view used below: fields hidden in two sets, one of them a lookup field, one filterable. */
const MASK = new Map([['Property', new Set(['StandardStatus', 'PrivateRemarks', 'MlsStatus'])], ['Media', new Set(['MediaURL'])]]);

function validateAgainstXsd(xml: string) {
  return validateXML({
    xml: [{ fileName: 'metadata.xml', contents: xml }],
    schema: [readFileSync(sharedPath('odata/csdl-schemas/edmx.xsd'), 'utf8')],
    preload: [{ fileName: 'edm.xsd', contents: readFileSync(sharedPath('odata/csdl-schemas/edm.xsd'), 'utf8') }],
    initialMemoryPages: 512,
  });
}

describe('Metadata document: validity against the OASIS CSDL schemas', function () {
  before(function () { requireShared(this); });

  it('the XML metadata validates against edmx.xsd (with edm.xsd)', async () => {
    const result = await validateAgainstXsd(serviceModel.metadataXml);
    expect(result.errors, JSON.stringify(result.errors.slice(0, 5))).to.deep.equal([]);
    expect(result.valid).to.equal(true);
  });

  it("a client's view with hidden fields validates too, as XML and as JSON", async () => {
    const view = renderMetadata(serviceModel, MASK);
    const result = await validateAgainstXsd(view.xml);
    expect(result.errors, JSON.stringify(result.errors.slice(0, 5))).to.deep.equal([]);
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(JSON.parse(readFileSync(sharedPath('odata/csdl-schemas/csdl.schema.json'), 'utf8')));
    expect(validate(JSON.parse(view.json)), ajv.errorsText(validate.errors)).to.equal(true);
  });

  it('the validator does reject a broken document (the check can fail)', async () => {
    const broken = serviceModel.metadataXml.replace('<EntityType Name="Property">', '<EntityType Nome="Property">');
    expect((await validateAgainstXsd(broken)).valid).to.equal(false);
  });

  it('the JSON metadata validates against csdl.schema.json', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(JSON.parse(readFileSync(sharedPath('odata/csdl-schemas/csdl.schema.json'), 'utf8')));
    const doc = JSON.parse(serviceModel.metadataJson);
    expect(validate(doc), ajv.errorsText(validate.errors)).to.equal(true);
    expect(validate({ ...doc, $Version: '5.0' })).to.equal(false);
  });
});

describe('Metadata document: the query policy it states', () => {
  const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true }).parse(serviceModel.metadataXml);
  const schema = [].concat(xml.Edmx.DataServices.Schema).find((x: any) => x['@Namespace'] === 'org.reso.metadata') as any;
  const sets: any[] = schema.EntityContainer.EntitySet;
  const propertyType = schema.EntityType.find((t: any) => t['@Name'] === 'Property');
  const fieldNames: string[] = propertyType.Property.map((p: any) => p['@Name']);
  const restriction = (set: any, term: string) => {
    const a = [].concat(set.Annotation).find((x: any) => x['@Term'] === term) as any;
    return [].concat(a.Record.PropertyValue.Collection.PropertyPath ?? []) as string[];
  };
  const property = sets.find((s) => s['@Name'] === 'Property');

  it('Property is filterable exactly on the spec\'s six indexed fields', () => {
    const nonFilterable = restriction(property, 'Capabilities.FilterRestrictions');
    expect(fieldNames.filter((f) => !nonFilterable.includes(f))).to.have.members(PROPERTY_QUERYABLE).and.have.length(6);
  });

  it('Property is sortable exactly on the same six fields', () => {
    const nonSortable = restriction(property, 'Capabilities.SortRestrictions');
    expect(fieldNames.filter((f) => !nonSortable.includes(f))).to.have.members(PROPERTY_QUERYABLE).and.have.length(6);
  });

  it('declares $skip unsupported on every entity set, where the term applies', () => {
    const json = JSON.parse(serviceModel.metadataJson);
    for (const set of sets) {
      const skip = [].concat(set.Annotation).find((a: any) => a['@Term'] === 'Capabilities.SkipSupported') as any;
      expect(skip['@Bool'], set['@Name']).to.equal('false');
      expect(json['org.reso.metadata'].Default[set['@Name']]['@Capabilities.SkipSupported'], set['@Name']).to.equal(false);
    }
  });

  it('has Property with at least 150 fields covering every DD type, and the navigation names of the spec', () => {
    expect(fieldNames.length).to.be.at.least(150);
    const types = new Set(propertyType.Property.map((p: any) => p['@Type']));
    for (const t of ['Edm.String', 'Edm.Int64', 'Edm.Decimal', 'Edm.Boolean', 'Edm.Date', 'Edm.DateTimeOffset', 'Collection(Edm.String)']) {
      expect(types, t).to.include(t);
    }
    const navs = [].concat(propertyType.NavigationProperty).map((n: any) => `${n['@Name']}:${n['@Type']}`);
    expect(navs).to.have.members([
      'Media:Collection(org.reso.metadata.Media)',
      'OpenHouse:Collection(org.reso.metadata.OpenHouse)',
      'historyTransactional:Collection(org.reso.metadata.HistoryTransactional)',
      'PropertyRooms:Collection(org.reso.metadata.PropertyRooms)',
      'PropertyUnits:Collection(org.reso.metadata.PropertyUnitTypes)',
    ]);
  });

  it('every lookup field names its lookup, single-valued as Edm.String and multi-valued as Collection(Edm.String)', () => {
    const lookupFields = propertyType.Property.filter((p: any) => p.Annotation);
    expect(lookupFields.length).to.be.greaterThan(20);
    for (const p of lookupFields) {
      expect(p.Annotation['@Term']).to.equal('RESO.OData.Metadata.LookupName');
      expect(['Edm.String', 'Collection(Edm.String)']).to.include(p['@Type']);
    }
    const standardStatus = propertyType.Property.find((p: any) => p['@Name'] === 'StandardStatus');
    expect(standardStatus.Annotation['@String']).to.equal('StandardStatus');
  });

  it('uses the RESO standard entity set names, with navigation bindings', () => {
    expect(sets.map((s) => s['@Name'])).to.have.members(
      ['Property', 'Member', 'Office', 'OpenHouse', 'Media', 'HistoryTransactional', 'PropertyRooms', 'PropertyUnitTypes', 'Lookup', 'Field', 'EntityEvent']);
    const bindings = [].concat(property.NavigationPropertyBinding).map((b: any) => `${b['@Path']}->${b['@Target']}`);
    expect(bindings).to.have.members(['Media->Media', 'OpenHouse->OpenHouse', 'historyTransactional->HistoryTransactional',
      'PropertyRooms->PropertyRooms', 'PropertyUnits->PropertyUnitTypes']);
  });

  it('keeps the dictionary\'s private policy terms out of the published document', () => {
    expect(serviceModel.metadataXml).not.to.include('Policy.');
    expect(serviceModel.metadataJson).not.to.include('Policy.');
  });
});

describe("Metadata document: rendered from the runtime model, whole or as a client's view", () => {
  it('the runtime model renders the published documents byte for byte', () => {
    const rendered = renderMetadata(serviceModel);
    expect(rendered.xml).to.equal(serviceModel.metadataXml);
    expect(rendered.json).to.equal(serviceModel.metadataJson);
  });

  /** The full view less the masked fields, as the client's view should read. */
  function withoutMasked(full: MetadataView): MetadataView {
    const typeOf = (set: string) => full.setType.get(set)!;
    const drop = (m: Map<string, Set<string>>, name: string, hidden: Set<string>) =>
      m.set(name, new Set([...m.get(name)!].filter((f) => !hidden.has(f))));
    const properties = new Map(full.properties);
    const setPaths = new Map(full.setPaths);
    for (const [set, hidden] of MASK) {
      drop(properties, typeOf(set), hidden);
      drop(setPaths, set, hidden);
    }
    return { ...full, properties, setPaths };
  }

  it('leaves exactly the hidden fields out of their types and of their sets\' restrictions', () => {
    const view = renderMetadata(serviceModel, MASK);
    const xml = xmlView(view.xml);
    const json = jsonView(view.json);
    expect(xml).to.deep.equal(withoutMasked(xmlView(serviceModel.metadataXml)));
    expect(json).to.deep.equal(withoutMasked(jsonView(serviceModel.metadataJson)));
    expect(xml.properties.get('Property')!.has('ListPrice')).to.equal(true);
    expect(xml.properties.get('Property')!.has('MlsStatus')).to.equal(false);
    expect(json.properties.get('Media')!.has('MediaURL')).to.equal(false);
    expect(view.xml).not.to.include('String="StandardStatus"');
    expect(JSON.parse(view.json)['org.reso.metadata'].Default.Property['@Capabilities.FilterRestrictions'].NonFilterableProperties)
      .not.to.include('PrivateRemarks');
  });

  it('an empty mask, or one naming no field of a set, changes nothing', () => {
    expect(renderMetadata(serviceModel, new Map([['Office', new Set<string>()]]))).to.deep.equal(renderMetadata(serviceModel));
  });
});
