/**
 * The generator's emitters against small dictionaries (test/fixtures/codegen/<case>/dictionary.xml): each case
 * is regenerated into a temporary folder and compared, file by file, with its expected/ folder; the runtime
 * model loaded from the output renders the output's own metadata documents; the typed entities type-check, and
 * the record schemas compile in Ajv's strict mode and are the ones the model carries.
 * After an intended change to the output, `UPDATE_EXPECTED=1 npm test` rewrites the expected folders; review the diff.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import * as ts from 'typescript';
import { generate } from '../codegen/generate';
import { recordCheck } from '../src/ingest/line-check';
import { renderMetadata } from '../src/metadata/render-metadata';
import { loadGenerated, snapshot } from './support/generated-folder';
import { REPO_ROOT } from './support/shared';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/codegen');
/** The expected folders sit five levels below the repository root, so this import resolves from them too. */
const MODEL_IMPORT = '../../../../../src/model/service-model';
const CASES = readdirSync(FIXTURES).filter((name) => !name.includes('.'));

describe('Generator: each emitter\'s output for small dictionaries', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('has cases to check', () => {
    expect(CASES).to.include.members(['minimal', 'related', 'records']);
  });

  for (const name of CASES) {
    describe(name, () => {
      let out: string;
      let files: Record<string, string>;
      before(() => {
        out = mkdtempSync(join(tmpdir(), `reso-fixture-${name}-`));
        dirs.push(out);
        generate({ dictionary: join(FIXTURES, name, 'dictionary.xml'), outDir: out, modelImport: MODEL_IMPORT });
        files = snapshot(out);
        if (process.env.UPDATE_EXPECTED) writeExpected(join(FIXTURES, name, 'expected'), files);
      });

      it('writes exactly the expected files, with the expected text', () => {
        const expected = snapshot(join(FIXTURES, name, 'expected'));
        expect(Object.keys(files).sort()).to.deep.equal(Object.keys(expected).sort());
        for (const [path, text] of Object.entries(expected)) expect(files[path], path).to.equal(text);
      });

      it('writes a runtime model that renders the same metadata documents', () => {
        const model = loadGenerated(out);
        const rendered = renderMetadata(model);
        expect(rendered.xml).to.equal(files['metadata.xml']);
        expect(rendered.json).to.equal(files['metadata.json']);
      });

      it('writes typed entities that type-check, with an entity type for every set', () => {
        const program = ts.createProgram([join(out, 'entities.ts')], { strict: true, noEmit: true, types: [] });
        const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
        expect(problems).to.deep.equal([]);
        const sets = files['entities.ts'].slice(files['entities.ts'].indexOf('export interface EntitySets'));
        for (const set of loadGenerated(out).entitySets) expect(sets, set.name).to.match(new RegExp(`^  ${set.name}: \\w+;$`, 'm'));
      });

      it('writes a record schema per entity type, which the model carries by set and Ajv compiles in strict mode', () => {
        const model = loadGenerated(out);
        for (const set of model.entitySets) {
          const schema = model.recordSchemas[set.name];
          expect(schema.title, set.name).to.equal(set.entityType);
          expect(JSON.parse(files[`schemas/${set.entityType.split('.').pop()}.json`])).to.deep.equal(schema);
          expect(() => recordCheck(set, schema), set.name).not.to.throw();
        }
      });
    });
  }
});

function writeExpected(dir: string, files: Record<string, string>): void {
  rmSync(dir, { recursive: true, force: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}
