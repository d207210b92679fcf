/**
 * Every listed client as its users run it (docs/clients.md): the generators read the `$metadata` a developer saves
 * (fetched without OData headers, as curl or a browser does), their generated code compiles, and the clients read,
 * page, count, fetch by key and filter against a running server with 300 demo listings:
 * - SAP Cloud SDK: `generate-odata-client` builds a typed client (it reads only Version="4.0" EDMX as OData V4);
 * - SAP CAP: `cds import` without a warning on the document without RESO's annotations (`Prefer:
 *   odata.include-annotations="*,-RESO.*"`), and only RESO's LookupName warnings on the full one; its remote service
 *   asks `$top=250` and gets 250 (it follows no nextLink);
 * - odata2ts: its generated service, with collection properties and navigations as services of their own;
 * - OASIS odata-openapi: the OpenAPI description it makes of the document, every GET path of which answers.
 * The tools are installed outside the repository (support/client-tools.ts); absent, this suite skips, but in CI.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { serviceModel } from '../generated';
import type { RunningServer } from '../src/process/server';
import { seedDemoData } from '../src/demo/demo-data';
import { CAP_PROGRAM, ODATA2TS_PROGRAM, SAP_SDK_PROGRAM } from './support/client-programs';
import { bin, ClientProject, lastJson, requireClientTools, run, tsconfig } from './support/client-tools';
import { describeEachDatabase, TestDatabase } from './support/databases';
import { get, startTestServer, TEST_TOKEN } from './support/http';

const LISTINGS = 300;
const WITHOUT_RESO = 'odata.include-annotations="*,-RESO.*"';
const LOOKUP_ANNOTATION = /<Annotation Term="RESO\.OData\.Metadata\.LookupName"/g;

describeEachDatabase('Clients as their users run them: SAP Cloud SDK, SAP CAP, odata2ts, OASIS odata-openapi', (target) => {
  let db: TestDatabase;
  let server: RunningServer;
  const projects: ClientProject[] = [];
  const env = () => ({ URL: server.url, TOKEN: TEST_TOKEN });

  before(async function () {
    requireClientTools(this);
    this.timeout(300_000);
    db = await target.create();
    server = await startTestServer(serviceModel, db.url);
    await seedDemoData(server.service, { listings: LISTINGS });
  });
  after(async () => {
    for (const p of projects) p.remove();
    await server?.close();
    await db?.drop();
  });

  const project = (name: string) => {
    const p = new ClientProject(name);
    projects.push(p);
    return p;
  };
  /** `$metadata` as a developer saves it: no OData headers, only the token. */
  const savedMetadata = async (headers: Record<string, string> = {}) => {
    const r = await get(`${server.url}/$metadata`, headers);
    expect(r.status).to.equal(200);
    return r.text;
  };
  const ok = (label: string, r: { code: number; stdout: string; stderr: string }) =>
    expect(r.code, `${label} failed:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`).to.equal(0);

  it('SAP Cloud SDK: the generator builds a typed client from the saved EDMX; it compiles, reads 250 at once, pages, counts, fetches by key, filters', async function () {
    this.timeout(300_000);
    const p = project('sap-sdk');
    const edmx = await savedMetadata();
    expect(edmx).to.include('<edmx:Edmx Version="4.0" ');
    p.write('edmx/Reso.edmx', edmx);
    const generated = await run(bin('generate-odata-client'), ['--input', 'edmx', '--outputDir', 'gen', '--skipValidation', '--overwrite'], { cwd: p.dir });
    ok('generate-odata-client', generated);
    expect(generated.stdout + generated.stderr).not.to.match(/\bERROR\b/);
    p.write('main.ts', SAP_SDK_PROGRAM);
    p.write('tsconfig.json', tsconfig(['main.ts', 'gen']));
    ok('tsc (SAP Cloud SDK client)', await run(bin('tsc'), ['-p', 'tsconfig.json'], { cwd: p.dir }));
    const r = await run(process.execPath, ['dist/main.js'], { cwd: p.dir, env: env() });
    ok('SAP Cloud SDK client', r);
    const got = lastJson(r);
    expect(got).to.include({ top: 250, walked: LISTINGS, distinct: LISTINGS, count: LISTINGS, byKey: got.key, media: 3 });
    expect(got.pages).to.equal(Math.ceil(LISTINGS / 100));
    expect(got.active).to.have.length(5).and.satisfy((s: string[]) => s.every((v) => v === 'Active'));
  });

  it('SAP CAP: cds import reads the document without RESO\'s annotations with no warning; its remote service reads 250 at once, by key, filtered', async function () {
    this.timeout(300_000);
    const p = project('cap');
    p.write('package.json', JSON.stringify({ name: 'reso-consumer', private: true }));
    p.write('Reso.edmx', await savedMetadata({ Prefer: WITHOUT_RESO }));
    const imported = await run(bin('cds'), ['import', 'Reso.edmx'], { cwd: p.dir });
    ok('cds import', imported);
    const said = `${imported.stdout}\n${imported.stderr}`;
    expect(said, said).not.to.match(/warn|AnnotationTerm|not present|unknown namespace/i);
    expect(said).to.include('imported API to srv/external/Reso');
    const r = await run(process.execPath, ['-e', CAP_PROGRAM], { cwd: p.dir, env: env() });
    ok('CAP remote service', r);
    const got = lastJson(r);
    expect(got).to.include({ rows: 250, byKey: got.key, media: 3 });
    expect(got.active).to.have.length(5).and.satisfy((s: string[]) => s.every((v) => v === 'Active'));
  });

  it('SAP CAP: on the full document (with RESO\'s LookupName, which RESO\'s tools read), cds import warns of that term alone, once per annotation, and keeps it', async function () {
    this.timeout(120_000);
    const p = project('cap-full');
    p.write('package.json', JSON.stringify({ name: 'reso-consumer', private: true }));
    const edmx = await savedMetadata();
    p.write('Reso.edmx', edmx);
    const imported = await run(bin('cds'), ['import', 'Reso.edmx', '--as', 'cds'], { cwd: p.dir });
    ok('cds import', imported);
    const warnings = `${imported.stdout}\n${imported.stderr}`.split('\n').filter((l) => /warn|AnnotationTerm|not present|unknown namespace/i.test(l));
    expect(warnings.length).to.equal(edmx.match(LOOKUP_ANNOTATION)!.length);
    for (const w of warnings) expect(w).to.include('@RESO.OData.Metadata.LookupName');
    expect(readFileSync(p.path('srv/external/Reso.cds'), 'utf8')).to.include('@RESO.OData.Metadata.LookupName');
  });

  it('odata2ts: generates a service from the saved EDMX that compiles, reads 250 at once, pages by nextLink, reads a collection property and a single-valued navigation', async function () {
    this.timeout(300_000);
    const p = project('odata2ts');
    p.write('edmx/reso.xml', await savedMetadata());
    // odata2ts reads the project's compiler settings, as it runs in a TypeScript project.
    p.write('tsconfig.json', tsconfig(['main.ts', 'gen']));
    const generated = await run(bin('odata2ts'), ['-s', 'edmx/reso.xml', '-o', 'gen', '-m', 'all', '-e', 'ts', '-name', 'Reso'], { cwd: p.dir });
    ok('odata2ts', generated);
    p.write('main.ts', ODATA2TS_PROGRAM);
    ok('tsc (odata2ts service)', await run(bin('tsc'), ['-p', 'tsconfig.json'], { cwd: p.dir }));
    const r = await run(process.execPath, ['dist/main.js'], { cwd: p.dir, env: env() });
    ok('odata2ts client', r);
    const got = lastJson(r);
    expect(got).to.include({ top: 250, walked: LISTINGS, byKey: got.key, appliances: true, listing: got.key });
  });

  it('OASIS odata-openapi: describes the saved EDMX (4.0, and 4.01 as a 4.01 client gets it), and every GET path it offers answers 200 or 204', async function () {
    this.timeout(120_000);
    const p = project('openapi');
    for (const [name, headers] of [['reso-4.0', {}], ['reso-4.01', { 'OData-MaxVersion': '4.01' }]] as const) {
      p.write(`${name}.xml`, await savedMetadata(headers));
      ok(`odata-openapi3 ${name}`, await run(bin('odata-openapi3'), ['-t', `${name}.json`, `${name}.xml`], { cwd: p.dir }));
    }
    const described = JSON.parse(readFileSync(p.path('reso-4.0.json'), 'utf8'));
    expect(Object.keys(JSON.parse(readFileSync(p.path('reso-4.01.json'), 'utf8')).paths)).to.deep.equal(Object.keys(described.paths));
    const firstKeys = new Map<string, unknown>();
    for (const set of serviceModel.entitySets) {
      const r = await get(`${server.url}/${set.name}?$top=1&$select=${set.key}`);
      firstKeys.set(set.key, r.json.value[0]?.[set.key]);
    }
    const answered: string[] = [];
    type Parameter = { name?: string; $ref?: string };
    for (const [path, item] of Object.entries(described.paths as Record<string, { get?: { parameters?: Parameter[] } }>)) {
      if (!item.get) continue;
      const url = path.replace(/\{(\w+)\}/g, (_m, key: string) => encodeURIComponent(String(firstKeys.get(key))));
      // $top where the description offers it (collections); a function's parameters are its own (the digest's are all optional).
      const offersTop = (item.get.parameters ?? []).some((x) => x.name === '$top' || /\/top$/.test(x.$ref ?? ''));
      const r = await get(`${server.url}${url}${offersTop ? '?$top=1' : ''}`);
      expect(r.status, `${url}: ${r.text.slice(0, 200)}`).to.be.oneOf([200, 204]);
      answered.push(path);
    }
    expect(answered).to.include.members(["/Media('{MediaKey}')/Listing", "/Property('{ListingKey}')/Media"]);
  });
});
