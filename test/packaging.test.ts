/**
 * Packaging: serving needs only the runtime dependencies (the generator, the compiler and the test tools are
 * development dependencies), `reso-server generate` says what it needs when they are absent, and `npm start`
 * compiles only when dist/ is missing or older than its sources.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { REPO_ROOT } from './support/shared';

const DEVELOPMENT_ONLY = ['ts-morph', 'typescript', 'fast-xml-parser'];
/** The owner's runtime stack: knex builds SQL, handlebars renders $metadata, ajv validates ingested records. */
const RUNTIME = ['knex', 'handlebars', 'ajv', 'express', 'mysql2'];

/** Runs a script in a fresh node process (this one has loaded the test tools) and returns what it printed. */
function runNode(script: string): string {
  return execFileSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
}

describe('Packaging: what serving needs', function () {
  this.timeout(30_000);

  it('package.json lists the generator, compiler and test tools as development dependencies only', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(Object.keys(pkg.dependencies)).not.to.include.any.members(DEVELOPMENT_ONLY);
    expect(Object.keys(pkg.devDependencies)).to.include.members(DEVELOPMENT_ONLY);
    expect(Object.keys(pkg.dependencies)).to.include.members(RUNTIME);
  });

  it('the server, the command line and the generated model load none of them', () => {
    const loaded = JSON.parse(runNode(`
      require('./dist/src/cli.js'); require('./dist/src/server.js'); require('./dist/generated');
      console.log(JSON.stringify(Object.keys(require.cache)));`)) as string[];
    expect(loaded.some((p) => p.includes('/dist/src/server.js'))).to.equal(true);
    for (const name of DEVELOPMENT_ONLY) {
      expect(loaded.filter((p) => p.includes(`/node_modules/${name}/`)), name).to.deep.equal([]);
    }
  });

  it('reso-server generate without the development dependencies says what is missing and what to run', () => {
    const out = runNode(`
      const Module = require('module');
      const resolve = Module._resolveFilename;
      Module._resolveFilename = function (request, ...rest) {
        if (request === 'ts-morph' || request === 'fast-xml-parser') {
          throw Object.assign(new Error("Cannot find module '" + request + "'"), { code: 'MODULE_NOT_FOUND' });
        }
        return resolve.call(this, request, ...rest);
      };
      require('./dist/src/cli.js').main(['generate', '--out', 'nowhere']).then(() => console.log('generated'), (e) => console.log(e.message));`);
    expect(out).to.match(/^generate is a development command and needs the development dependencies \(Cannot find module '(ts-morph|fast-xml-parser)'\); run npm install without --omit=dev\n$/);
  });
});

describe('Packaging: npm start builds only a stale dist/', () => {
  const { isStale, SOURCES, STAMP } = require(join(REPO_ROOT, 'scripts/start.js')) as {
    isStale(root: string): boolean; SOURCES: string[]; STAMP: string;
  };
  let root: string;
  const at = (path: string, seconds: number) => utimesSync(join(root, path), seconds, seconds);

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'reso-start-'));
    for (const dir of ['src/http', 'generated', 'codegen', 'dist']) mkdirSync(join(root, dir), { recursive: true });
    for (const file of ['src/http/app.ts', 'generated/index.ts', 'codegen/generate.ts', 'tsconfig.json']) writeFileSync(join(root, file), '');
    for (const path of ['src/http/app.ts', 'src/http', 'src', 'generated/index.ts', 'generated', 'codegen/generate.ts', 'codegen', 'tsconfig.json']) at(path, 1_000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const stamp = (seconds: number) => { writeFileSync(join(root, STAMP), ''); at(STAMP, seconds); };

  it('watches the sources the server is compiled from', () => {
    expect(SOURCES).to.have.members(['src', 'generated', 'codegen', 'tsconfig.json']);
  });

  it('builds when dist/ has never been built', () => {
    expect(isStale(root)).to.equal(true);
  });

  it('does not build when the last build is newer than every source', () => {
    stamp(2_000);
    expect(isStale(root)).to.equal(false);
  });

  it('builds when a source file changed after the last build', () => {
    stamp(2_000);
    at('src/http/app.ts', 3_000);
    expect(isStale(root)).to.equal(true);
  });

  it('builds when a file was added or removed after the last build (its folder changed)', () => {
    stamp(2_000);
    at('generated', 3_000);
    expect(isStale(root)).to.equal(true);
  });

  it('builds when the compiler settings changed after the last build', () => {
    stamp(2_000);
    at('tsconfig.json', 3_000);
    expect(isStale(root)).to.equal(true);
  });
});
