/**
 * Packaging: serving needs only the runtime dependencies (the generator, the compiler and the test tools are
 * development dependencies), and `reso-server generate` says what it needs when they are absent. What every start
 * checks before it runs (a stale dictionary or build) is test/model-freshness.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
      require('./dist/src/cli/main.js'); require('./dist/src/process/server.js'); require('./dist/generated');
      console.log(JSON.stringify(Object.keys(require.cache)));`)) as string[];
    expect(loaded.some((p) => p.includes('/dist/src/process/server.js'))).to.equal(true);
    for (const name of DEVELOPMENT_ONLY) {
      expect(loaded.filter((p) => p.includes(`/node_modules/${name}/`)), name).to.deep.equal([]);
    }
  });

  it('the start check every command runs first (scripts/freshness.js) loads only Node\'s own modules', () => {
    const loaded = JSON.parse(runNode(`
      require('./scripts/freshness.js').dictionaryChange(process.cwd());
      console.log(JSON.stringify(Object.keys(require.cache)));`)) as string[];
    expect(loaded.map((p) => p.slice(REPO_ROOT.length))).to.deep.equal(['/scripts/freshness.js']);
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
      require('./dist/src/cli/main.js').main(['generate', '--out', 'nowhere']).then(() => console.log('generated'), (e) => console.log(e.message));`);
    expect(out).to.match(/^generate is a development command and needs the development dependencies \(Cannot find module '(ts-morph|fast-xml-parser)'\); run npm install without --omit=dev\n$/);
  });
});
