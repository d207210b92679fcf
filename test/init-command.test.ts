/**
 * docs/dictionary.md "Starting from your own dictionary": `reso-server init --dictionary <file>` in a copy of the project, as
 * real processes: a dictionary it refuses is one line naming the file, line and element (exit code 2, the project
 * unchanged); RESO's DD 2.0 reference is copied with the policy init adds, given a migration history of its own,
 * generated and built, and then served; another dictionary does not replace it without --force.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dictionaryWithDefaults } from '../codegen/init';
import { request } from './support/http';
import { positionOf, runScript } from './support/node-script';
import { copyProject, ProjectCopy, watchedProcess } from './support/project-copy';
import { REPO_ROOT, requireShared, sharedPath } from './support/shared';

const TOKEN = 'init-command-token-0123456789abcdefghijk';
const freshness = require(join(REPO_ROOT, 'scripts/freshness.js')) as {
  dictionaryChange(root: string): unknown;
  buildChange(root: string): unknown;
};

const init = (root: string, args: readonly string[]) => runScript(join(root, 'bin/reso-server.js'), ['init', ...args], { cwd: root, timeoutMs: 480_000 });

describe('reso-server init: a deployment from your own dictionary, in one command', function () {
  this.timeout(600_000);
  let project: ProjectCopy;
  let files: string;
  const dictionary = () => readFileSync(join(project.root, 'csdl/reso-dictionary.xml'), 'utf8');

  before(function () {
    requireShared(this);
    project = copyProject();
    files = mkdtempSync(join(tmpdir(), 'reso-init-files-'));
  });
  after(() => {
    project?.remove();
    if (files) rmSync(files, { recursive: true, force: true });
  });

  it('refuses a dictionary that is not well-formed, not CSDL, or declares a property twice: one line naming file, line, column and element; exit 2; nothing changed', async () => {
    const dd = readFileSync(sharedPath('reso/dd-2.0-lookup-resource.xml'), 'utf8');
    const listPrice = '<Property Name="ListPrice" Type="Edm.Decimal" Precision="14" Scale="2"/>';
    expect(dd).to.include(listPrice);
    const cases = [
      { name: 'unclosed.xml', text: dd.replace('</EntityContainer>', ''), line: (file: string, text: string) => `${file}:${positionOf(text, '</Schema>')}: not well-formed XML: Expected closing tag 'EntityContainer' (opened in line 2649, col 7) instead of closing tag 'Schema'.` },
      { name: 'page.html', text: '<!DOCTYPE html>\n<html><head><title>404</title></head></html>\n', line: (file: string) => `${file}:2:1: not a CSDL dictionary: its root element is <html>, where CSDL XML has <edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx">` },
      {
        name: 'twice.xml',
        text: dd.replace(listPrice, `${listPrice}\n        ${listPrice}`),
        line: (file: string, text: string) => `${file}:${positionOf(text, listPrice, 2)}: <Property Name="ListPrice">: entity type Property declares the property ListPrice twice (first at line ${positionOf(text, listPrice).split(':')[0]})`,
      },
    ];
    const before = dictionary();
    for (const c of cases) {
      const file = join(files, c.name);
      writeFileSync(file, c.text);
      const r = await init(project.root, ['--dictionary', file]);
      expect([r.code, r.stdout], c.name).to.deep.equal([2, '']);
      expect(r.stderr, c.name).to.equal(`reso-server: ${c.line(file, c.text)}\n`);
    }
    expect(dictionary(), 'the project\'s dictionary is as it was').to.equal(before);
  });

  it('on RESO DD 2.0: copies it with the policy it adds, starts a migration history of its own, generates and builds; the project serves it; another dictionary needs --force', async () => {
    const source = sharedPath('reso/dd-2.0-lookup-resource.xml');
    const r = await init(project.root, ['--dictionary', source]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^reso-server init: csdl\/reso-dictionary\.xml is now .+dd-2\.0-lookup-resource\.xml, with 98 additions where it stated no policy \(it replaces the demo dictionary\)\n/);
    expect(r.stdout).to.include('  - Property: Policy.DeletedWhen "MlsStatus eq \'Delete\'": spec §3:');
    expect(r.stdout).to.match(/\n {2}Property \(listing root\) +key ListingKey; filter and order: DocumentsChangeTimestamp, ListingKey, MlsStatus, ModificationTimestamp, PhotosChangeTimestamp, PropertyType; expand: .*Media \(charged\)/);
    expect(r.stdout).to.include('Migration history: new (generated/migrations/0001-initial.ts creates every table): start on an empty database.');
    expect(r.stdout).to.match(/\nNext: npm start — .+\n$/);
    expect(r.stderr).to.match(/^reso-server init: generating generated\/ from it \(npm run generate in .+\)\n[\s\S]*reso-server init: building \(npm run build in .+\)\n$/);

    expect(dictionary()).to.equal(dictionaryWithDefaults(readFileSync(source, 'utf8')).text);
    expect(readdirSync(join(project.root, 'generated/migrations')).sort()).to.deep.equal(['0001-initial.ts', 'index.ts', 'schema.json']);
    expect([freshness.dictionaryChange(project.root), freshness.buildChange(project.root)], 'generated/ and dist/ are fresh').to.deep.equal([undefined, undefined]);

    const server = watchedProcess(process.execPath, [join(project.root, 'bin/reso-server.js'), 'serve'], {
      cwd: project.root,
      env: { ...process.env, NODE_ENV: 'production', DATABASE_URL: `sqlite:${join(project.root, 'init.sqlite')}`, PORT: '0', WORKERS: '1', SEED_LISTINGS: '0', DEMO_TOKEN: TOKEN, LOG_FORMAT: 'json' },
    });
    try {
      const root = (await server.waitFor(/serving (http:\/\/\S+\/odata)/, 60_000))[1];
      const get = (path: string) => request(`${root}${path}`, { token: TOKEN });
      const service = await get('/');
      expect(service.status).to.equal(200);
      expect((JSON.parse(service.text) as { value: { name: string }[] }).value.map((s) => s.name)).to.include.members(['Property', 'Media', 'EntityEvent', 'Lookup', 'Field', 'TransactionManagement']);
      const metadata = await get('/$metadata');
      expect(metadata.status).to.equal(200);
      expect(metadata.text).to.include('<EntityType Name="TransactionManagement">');
      const changed = await get("/Property?$filter=ModificationTimestamp gt 2026-01-01T00:00:00Z");
      expect([changed.status, JSON.parse(changed.text).value]).to.deep.equal([200, []]);
      const photos = await get("/Property?$filter=PhotosChangeTimestamp gt 2026-01-01T00:00:00Z&$select=ListingKey");
      expect(photos.status).to.equal(200);
      const price = await get('/Property?$filter=ListPrice gt 100000');
      expect([price.status, JSON.parse(price.text).error.code]).to.deep.equal([501, 'FieldNotFilterable']);
      const ordered = await get('/Member?$orderby=MemberLastName');
      expect([ordered.status, JSON.parse(ordered.text).error.code]).to.deep.equal([501, 'FieldNotSortable']);
      const events = await get('/EntityEvent?$filter=EntityEventSequence gt 0&$top=1');
      expect(events.status).to.equal(200);
      expect(JSON.parse(events.text).value[0]).to.include({ ResourceName: 'Field' });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited();
    }

    const written = dictionary();
    const other = join(REPO_ROOT, 'test/fixtures/codegen/related/dictionary.xml');
    const refused = await init(project.root, ['--dictionary', other]);
    expect([refused.code, refused.stdout]).to.deep.equal([2, '']);
    expect(refused.stderr).to.equal('reso-server: init: csdl/reso-dictionary.xml holds another dictionary, not the demo one (it has no "reso-server demo dictionary" comment): '
      + 'run init again with --force to replace it; its migration history in generated/migrations is kept (the change becomes the next migration, applied to the database at start)\n');
    expect(dictionary()).to.equal(written);
  });
});
