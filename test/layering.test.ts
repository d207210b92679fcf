/**
 * Layers point down (docs/architecture.md, "Layers"): a module of src/ imports only from its own layer and the
 * layers below it. A module is named by its folder under src/ (src/storage/…: storage) or, at the top of src/, by
 * its file (src/service.ts: service). Every import counts, types only included: a type from above ties a layer to
 * what is above it as surely as a value does. The browser console (src/console/web) is a program of its own.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { expect } from 'chai';
import * as ts from 'typescript';
import { REPO_ROOT } from './support/shared';

/** Lowest first; the modules of one line are peers. docs/architecture.md says why each stands where it does. */
const LAYERS: readonly (readonly string[])[] = [
  ['errors', 'foundation', 'build'],
  ['model'],
  ['query', 'metadata'],
  ['storage'],
  ['auth', 'metering', 'ingest', 'demo'],
  ['paging'],
  ['webhooks', 'pull'],
  ['config'],
  ['observability', 'admin'],
  ['console', 'http'],
  ['process'],
  ['cli'],
];

const SRC = join(REPO_ROOT, 'src');
const rank = new Map(LAYERS.flatMap((modules, i) => modules.map((m) => [m, i] as const)));

interface Import {
  readonly from: string;
  readonly to: string;
}

/** The module a path under src/ belongs to. */
function moduleOf(path: string): string {
  const [first, ...rest] = relative(SRC, path).split(sep);
  return rest.length ? first : first.replace(/\.ts$/, '');
}

/** Imports that go from a module to one above it, and modules no layer names. */
function layeringProblems(imports: readonly Import[]): string[] {
  const problems: string[] = [];
  for (const i of imports) {
    const [from, to] = [moduleOf(i.from), moduleOf(i.to)];
    const [a, b] = [rank.get(from), rank.get(to)];
    if (a === undefined || b === undefined) problems.push(`${a === undefined ? from : to}: in no layer (add it to LAYERS and docs/architecture.md)`);
    else if (b > a) problems.push(`${relative(REPO_ROOT, i.from)} imports ${relative(REPO_ROOT, i.to)}: ${from} (layer ${a + 1}) is below ${to} (layer ${b + 1})`);
  }
  return problems;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const path = join(dir, n);
    if (path === join(SRC, 'console', 'web')) return [];
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative import of src/'s modules (declarations, re-exports, `import('…')` types and calls), as files. */
function importsOfSrc(): Import[] {
  return sources(SRC).flatMap((from) => ts.preProcessFile(readFileSync(from, 'utf8'), true, true).importedFiles
    .filter((f) => f.fileName.startsWith('.'))
    .map((f) => ({ from, to: `${resolve(dirname(from), f.fileName)}.ts` }))
    .filter((i) => i.to.startsWith(SRC + sep)));
}

describe('Layering: imports point down', function () {
  it('no module of src/ imports from a layer above its own, and every module is in a layer', function () {
    const imports = importsOfSrc();
    expect(imports.length, 'imports read').to.be.greaterThan(300);
    expect(layeringProblems(imports)).to.deep.equal([]);
  });

  it('src/ has folders only: every file is in the module its folder names (the entry point is src/cli/main.ts)', function () {
    expect(readdirSync(SRC).filter((n) => !statSync(join(SRC, n)).isDirectory())).to.deep.equal([]);
  });

  it('the check names an upward import, a type-only one included, and a module in no layer', function () {
    const at = (path: string) => join(SRC, path);
    expect(layeringProblems([{ from: at('storage/a.ts'), to: at('query/b.ts') }])).to.deep.equal([]);
    expect(layeringProblems([{ from: at('model/service-model.ts'), to: at('http/app.ts') }])).to.deep.equal([
      'src/model/service-model.ts imports src/http/app.ts: model (layer 2) is below http (layer 10)',
    ]);
    expect(layeringProblems([{ from: at('process/service.ts'), to: at('attic/old.ts') }])).to.deep.equal(['attic: in no layer (add it to LAYERS and docs/architecture.md)']);
    const typeOnly = ts.preProcessFile("import type { Projection } from '../query/projection';\nexport type H = import('../http/app').AppOptions;", true, true);
    expect(typeOnly.importedFiles.map((f) => f.fileName)).to.deep.equal(['../query/projection', '../http/app']);
  });
});
