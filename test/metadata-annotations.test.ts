/**
 * OData 4.01 Part 1 §8.2.8.4: the include-annotations preference applies to a request for metadata too. A client
 * that cannot use RESO's vocabulary (SAP CAP's `cds import` warns once per annotation of a vocabulary it does not
 * know, declared or referenced) asks for `*,-RESO.*` and gets the same document without RESO's LookupName
 * annotations and term; without the preference every annotation is there (RESO's tools need LookupName).
 */
import { expect } from 'chai';
import { XMLValidator } from 'fast-xml-parser';
import { serviceModel } from '../generated';
import { ALL_ANNOTATIONS, annotationChoice } from '../src/metadata/annotation-choice';
import type { RunningServer } from '../src/process/server';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';

describe('Metadata document: the include-annotations preference, read', () => {
  const choice = (prefer: string) => annotationChoice(prefer)?.choice;

  it('no preference: every annotation; "*,-RESO.*": all but RESO\'s; "-*": none; a namespace: only it', () => {
    expect(annotationChoice(undefined)).to.equal(undefined);
    expect(annotationChoice('odata.maxpagesize=5')).to.equal(undefined);
    expect(choice('odata.include-annotations="*,-RESO.*"')).to.deep.equal({ capabilities: true, core: true, lookupNames: false });
    expect(choice('include-annotations="*,-RESO.OData.Metadata.LookupName"')).to.deep.equal({ capabilities: true, core: true, lookupNames: false });
    expect(choice('odata.include-annotations="-*"')).to.deep.equal({ capabilities: false, core: false, lookupNames: false });
    expect(choice('odata.include-annotations="Capabilities.*"')).to.deep.equal({ capabilities: true, core: false, lookupNames: false });
    expect(choice('odata.include-annotations="Org.OData.*,-Org.OData.Core.V1.*"')).to.deep.equal({ capabilities: true, core: false, lookupNames: false });
    expect(choice('odata.include-annotations=*')).to.deep.equal(ALL_ANNOTATIONS);
  });

  it('the most specific item wins, whatever the order; an item about a vocabulary the documents do not use changes nothing', () => {
    expect(choice('odata.include-annotations="-RESO.*,*"')).to.deep.equal({ capabilities: true, core: true, lookupNames: false });
    expect(choice('odata.include-annotations="-*,RESO.OData.Metadata.LookupName"')).to.deep.equal({ capabilities: false, core: false, lookupNames: true });
    expect(choice('odata.include-annotations="*,-display.*"')).to.deep.equal(ALL_ANNOTATIONS);
  });

  it('a preference it cannot apply as asked (one Capabilities term of several) is not applied at all', () => {
    expect(annotationChoice('odata.include-annotations="Capabilities.FilterRestrictions"')).to.equal(undefined);
  });
});

describeEachDatabase('Metadata document: the include-annotations preference, served', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  const WITHOUT_RESO = { Prefer: 'odata.include-annotations="*,-RESO.*"' };

  before(async () => {
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  it('"*,-RESO.*": the XML and JSON without RESO\'s annotations or term, all else as published; Preference-Applied says so', async () => {
    const xml = await get(`${server.url}/$metadata`, WITHOUT_RESO);
    expect(xml.status).to.equal(200);
    expect(xml.headers.get('preference-applied')).to.equal('odata.include-annotations="*,-RESO.*"');
    expect(xml.headers.get('vary')).to.include('Prefer');
    expect(XMLValidator.validate(xml.text)).to.equal(true);
    expect(xml.text).not.to.include('RESO.OData.Metadata');
    const stripped = serviceModel.metadataXml
      .replace(/>\n\s*<Annotation Term="RESO\.OData\.Metadata\.LookupName" String="[^"]*"\/>\n\s*<\/Property>/g, '/>')
      .replace(/ {4}<Schema Namespace="RESO\.OData\.Metadata"[^]*?<\/Schema>\n/, '');
    expect(xml.text === stripped, 'the published document less RESO\'s annotations and term').to.equal(true);
    const json = await get(`${server.url}/$metadata?$format=json`, WITHOUT_RESO);
    expect(json.text).not.to.include('RESO.OData.Metadata');
    const published = JSON.parse(serviceModel.metadataJson);
    delete published['RESO.OData.Metadata'];
    const expected = JSON.parse(JSON.stringify(published, (k, v) => (k === '@RESO.OData.Metadata.LookupName' ? undefined : v)));
    expect(json.json).to.deep.equal(expected);
  });

  it('"-*": no annotation at all; no preference, or one it cannot apply: the published document, no Preference-Applied', async () => {
    const none = await get(`${server.url}/$metadata`, { Prefer: 'odata.include-annotations="-*"' });
    expect(none.text).not.to.match(/<Annotation /);
    expect(XMLValidator.validate(none.text)).to.equal(true);
    for (const headers of [{}, { Prefer: 'odata.include-annotations="Capabilities.FilterRestrictions"' }] as Record<string, string>[]) {
      const r = await get(`${server.url}/$metadata`, headers);
      expect(r.text === serviceModel.metadataXml).to.equal(true);
      expect(r.headers.get('preference-applied')).to.equal(null);
    }
  });
});
