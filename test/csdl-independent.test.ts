/**
 * The served $metadata read by an independent CSDL implementation: OASIS's own `odata-csdl` (the OData TC's
 * CSDL XML → CSDL JSON converter, strict mode) must convert the XML a client is served, for every version
 * and licence view, with no error and no message, into CSDL JSON that validates against OASIS's
 * csdl.schema.json; and the CSDL JSON the service serves must validate too and say what the conversion says.
 */
import { readFileSync } from 'node:fs';
import Ajv, { ValidateFunction } from 'ajv';
import { expect } from 'chai';
import { xml2json } from 'odata-csdl';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer } from './support/http';
import { requireShared, sharedPath } from './support/shared';

interface Converted {
  json: Record<string, unknown>;
  messages: unknown[];
}

/** Converted leniently, so every message is recorded; strict conversion (throws on an error) must agree. */
function convert(xml: string): Converted {
  const messages: unknown[] = [];
  const json = xml2json(xml, { annotations: true, messages }) as Record<string, unknown>;
  if (messages.length === 0) xml2json(xml, { strict: true, annotations: true });
  return { json, messages };
}

describeEachDatabase('$metadata read by an independent CSDL library (OASIS odata-csdl)', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  let validate: ValidateFunction;
  const ajv = new Ajv({ strict: false, allErrors: true });

  before(async function () {
    requireShared(this);
    this.timeout(120_000);
    validate = ajv.compile(JSON.parse(readFileSync(sharedPath('odata/csdl-schemas/csdl.schema.json'), 'utf8')));
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
    await server.service.clients.register({ id: 'hides-some', name: 'hides some', hiddenFields: ['PrivateRemarks', 'Media.MediaURL'] });
  });
  after(async () => {
    await server?.close();
    await db?.drop();
  });

  async function views(): Promise<{ name: string; headers: Record<string, string> }[]> {
    const token = await server.service.clients.issueToken('hides-some', 3600);
    return [
      { name: 'a client seeing everything', headers: {} },
      { name: 'a 4.0 client', headers: { 'OData-MaxVersion': '4.0' } },
      { name: 'a 4.01 client', headers: { 'OData-MaxVersion': '4.01' } },
      { name: 'a client leaving RESO\'s annotations out', headers: { Prefer: 'odata.include-annotations="*,-RESO.*"' } },
      { name: 'a client with hidden fields', headers: { Authorization: `Bearer ${token}` } },
    ];
  }

  it('converts the XML of every view with 0 errors and 0 warnings, into CSDL JSON valid against csdl.schema.json', async () => {
    for (const view of await views()) {
      const r = await get(`${server.url}/$metadata`, view.headers);
      expect(r.status, view.name).to.equal(200);
      const { json, messages } = convert(r.text);
      expect(messages, `${view.name}: ${JSON.stringify(messages.slice(0, 5))}`).to.deep.equal([]);
      expect(validate(json), `${view.name}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
      expect(json.$EntityContainer, view.name).to.be.a('string');
    }
  });

  it('the served CSDL JSON validates too, and declares the same types, properties and sets as the converted XML', async () => {
    for (const view of await views()) {
      const served = JSON.parse((await get(`${server.url}/$metadata?$format=json`, view.headers)).text) as Record<string, any>;
      expect(validate(served), `${view.name}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
      const converted = convert((await get(`${server.url}/$metadata`, view.headers)).text).json as Record<string, any>;
      const namespace = serviceModel.namespace;
      for (const [name, element] of Object.entries(converted[namespace] as Record<string, any>)) {
        if (name.startsWith('$') || typeof element !== 'object') continue;
        const mine = served[namespace][name];
        // A function's overloads (the digest's, one per set) are an array: the same overloads, member for member.
        if (Array.isArray(element)) {
          expect(mine, `${view.name}: ${name}`).to.deep.equal(element);
          continue;
        }
        expect(mine, `${view.name}: ${name}`).to.be.an('object');
        const members = (e: Record<string, unknown>) => Object.keys(e).filter((k) => !k.startsWith('$') && !k.includes('@')).sort();
        expect(members(mine), `${view.name}: ${name}`).to.deep.equal(members(element));
      }
    }
  });

  it('the check can fail: a broken document is reported', () => {
    const broken = serviceModel.metadataXml.replace('<Key>', '<Kee>').replace('</Key>', '</Kee>');
    let reported: unknown[] = [];
    try {
      reported = convert(broken).messages;
    } catch (e) {
      reported = [e];
    }
    expect(reported.length).to.be.greaterThan(0);
  });
});
