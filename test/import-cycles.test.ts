/**
 * No import cycles in src/ or codegen/ (docs/architecture.md, "Layers"): the layering test keeps modules pointing
 * down between folders; this one keeps files from leaning on each other inside a folder, where a cycle makes two
 * files one unit in all but name. Every relative import counts, types only included.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect } from 'chai';
import * as ts from 'typescript';
import { REPO_ROOT } from './support/shared';

type Graph = ReadonlyMap<string, readonly string[]>;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const path = join(dir, n);
    if (path === join(REPO_ROOT, 'src', 'console', 'web')) return [];
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function importGraph(files: readonly string[]): Graph {
  const known = new Set(files);
  return new Map(files.map((from) => [from, ts.preProcessFile(readFileSync(from, 'utf8'), true, true).importedFiles
    .filter((f) => f.fileName.startsWith('.'))
    .map((f) => resolve(dirname(from), f.fileName))
    .map((to) => [`${to}.ts`, join(to, 'index.ts')].find((p) => known.has(p)))
    .filter((to): to is string => to !== undefined)]));
}

/** Tarjan's strongly connected components of more than one file, or of one file importing itself. */
function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('Layering: no import cycles', function () {
  it('no file of src/ or codegen/ reaches itself through its imports', function () {
    const graph = importGraph([...sources(join(REPO_ROOT, 'src')), ...sources(join(REPO_ROOT, 'codegen'))]);
    expect(graph.size, 'files read').to.be.greaterThan(200);
    expect(cycles(graph).map((c) => c.map((f) => relative(REPO_ROOT, f)).join(' <-> '))).to.deep.equal([]);
  });

  it('the check finds a cycle through three files and a file importing itself, and passes a chain', function () {
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).to.deep.equal([['a', 'b', 'c']]);
    expect(cycles(new Map([['a', ['a']]]))).to.deep.equal([['a']]);
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', []]]))).to.deep.equal([]);
  });
});
