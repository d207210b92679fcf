/**
 * The code stays in small pieces: no function in src/, codegen/, certify/ or the plain scripts (scripts/, bin/) over 80 lines,
 * no file over 400. Seed data tables are the one exception, and say so (with their reason) in their header.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import * as ts from 'typescript';
import { REPO_ROOT } from './support/shared';

const MAX_FUNCTION_LINES = 80;
const MAX_FILE_LINES = 400;
const SEED_TABLE_HEADER = /(seed|demo) data table/i;

function sources(dir: string, extension: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const path = join(dir, n);
    return statSync(path).isDirectory() ? sources(path, extension) : path.endsWith(extension) ? [path] : [];
  });
}

const files = [
  ...['src', 'codegen', 'certify'].flatMap((d) => sources(join(REPO_ROOT, d), '.ts')),
  ...['scripts', 'bin'].flatMap((d) => sources(join(REPO_ROOT, d), '.js')),
];
const excepted = (path: string, text: string) => relative(REPO_ROOT, path).startsWith(join('src', 'demo')) && SEED_TABLE_HEADER.test(text.slice(0, 600));

function longFunctions(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = (node as ts.FunctionLikeDeclaration).name?.getText(source) ?? '(anonymous)';
      if (end - start + 1 > MAX_FUNCTION_LINES) found.push(`${relative(REPO_ROOT, path)}:${start + 1} ${name} (${end - start + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('Code shape: small modules with one job', () => {
  it(`no function in src/, codegen/, certify/, scripts/ or bin/ is over ${MAX_FUNCTION_LINES} lines`, () => {
    const found = files.flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      return excepted(f, text) ? [] : longFunctions(f, text);
    });
    expect(found).to.deep.equal([]);
  });

  it(`no file in src/, codegen/, certify/, scripts/ or bin/ is over ${MAX_FILE_LINES} lines, but seed data tables that say so`, () => {
    const found = files.flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      const lines = text.split('\n').length;
      return lines > MAX_FILE_LINES && !excepted(f, text) ? [`${relative(REPO_ROOT, f)} (${lines} lines)`] : [];
    });
    expect(found).to.deep.equal([]);
  });
});
