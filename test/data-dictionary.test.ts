/**
 * RESO Data Dictionary 2.0: every standard field the shipped dictionary serves is stated as DD 2.0 states it
 * (type, lookup name, length, precision and scale), checked against RESO's reference metadata in its string
 * lookup flavour (../shared/reso/dd-2.0-lookup-resource.xml). Local fields, absent from DD 2.0, are not compared.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { XMLParser } from 'fast-xml-parser';
import { serviceModel } from '../generated';
import { requireShared, sharedPath } from './support/shared';

interface FieldFacts {
  type: string;
  lookupName?: string;
  maxLength?: string;
  precision?: string;
  scale?: string;
}

/** Entity type → field → facts, from an EDMX document. */
function fieldsOf(xml: string): Map<string, Map<string, FieldFacts>> {
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true }).parse(xml);
  const types = new Map<string, Map<string, FieldFacts>>();
  for (const schema of [].concat(doc.Edmx.DataServices.Schema) as any[]) {
    for (const type of [].concat(schema.EntityType ?? []) as any[]) {
      const fields = new Map<string, FieldFacts>();
      for (const p of [].concat(type.Property ?? []) as any[]) {
        const lookup = ([].concat(p.Annotation ?? []) as any[]).find((a) => a['@Term'] === 'RESO.OData.Metadata.LookupName');
        fields.set(p['@Name'], {
          type: p['@Type'], lookupName: lookup?.['@String'], maxLength: p['@MaxLength'], precision: p['@Precision'], scale: p['@Scale'],
        });
      }
      types.set(type['@Name'], fields);
    }
  }
  return types;
}

/**
 * Where the two may differ, and why: DD 2.0 states no precision for timestamps (the service keeps and states
 * milliseconds, which replication marks need) and no length for the Lookup and Field resources' strings (the
 * service states the length its keys are stored and indexed with).
 */
function differences(ours: Map<string, Map<string, FieldFacts>>, dd: Map<string, Map<string, FieldFacts>>): string[] {
  const out: string[] = [];
  for (const [type, fields] of ours) {
    const standard = dd.get(type);
    if (!standard) continue;
    for (const [name, f] of fields) {
      const s = standard.get(name);
      if (!s) continue;
      const where = `${type}.${name}`;
      if (f.type !== s.type) out.push(`${where}: type ${f.type}, DD 2.0 ${s.type}`);
      if (f.lookupName !== s.lookupName) out.push(`${where}: LookupName ${f.lookupName ?? '(none)'}, DD 2.0 ${s.lookupName ?? '(none)'}`);
      if (s.maxLength !== undefined && f.maxLength !== s.maxLength) out.push(`${where}: MaxLength ${f.maxLength}, DD 2.0 ${s.maxLength}`);
      if (s.precision !== undefined && f.precision !== s.precision) out.push(`${where}: Precision ${f.precision}, DD 2.0 ${s.precision}`);
      if (s.scale !== undefined && f.scale !== s.scale) out.push(`${where}: Scale ${f.scale}, DD 2.0 ${s.scale}`);
    }
  }
  return out;
}

describe('Data Dictionary 2.0: standard fields as DD 2.0 states them', function () {
  let dd: Map<string, Map<string, FieldFacts>>;
  const ours = fieldsOf(serviceModel.metadataXml);

  before(function () {
    requireShared(this);
    dd = fieldsOf(readFileSync(sharedPath('reso/dd-2.0-lookup-resource.xml'), 'utf8'));
  });

  it('every served entity type is a DD 2.0 resource, and most of their fields are standard', () => {
    let compared = 0;
    for (const [type, fields] of ours) {
      expect(dd.has(type), type).to.equal(true);
      compared += [...fields.keys()].filter((f) => dd.get(type)!.has(f)).length;
    }
    expect(compared).to.be.greaterThan(250);
  });

  it('0 differences in type, LookupName, MaxLength, Precision and Scale', () => {
    expect(differences(ours, dd)).to.deep.equal([]);
  });

  it('the check finds a field that is not a lookup where DD 2.0 says it is (it can fail)', () => {
    const broken = serviceModel.metadataXml.replace(/(<Property Name="City"[^>]*)>\s*<Annotation[^>]*\/>\s*<\/Property>/, '$1/>');
    expect(broken).not.to.equal(serviceModel.metadataXml);
    expect(differences(fieldsOf(broken), dd)).to.deep.equal(['Property.City: LookupName (none), DD 2.0 City']);
  });
});
