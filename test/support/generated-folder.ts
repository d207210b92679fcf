/** Reading what the generator wrote: its files as text, and the service model it describes, loaded from anywhere. */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import * as ts from 'typescript';
import type { ServiceModel } from '../../src/model/service-model';

export function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? listFiles(join(dir, n)) : [join(dir, n)]));
}

/** Every file under `dir` by its path relative to `dir` (with `/` separators). */
export function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(listFiles(dir).map((f) => [relative(dir, f).split(sep).join('/'), readFileSync(f, 'utf8')]));
}

/** Compiles a generated folder in place, the way the build would, and loads its index. */
export function loadGenerated(dir: string): ServiceModel {
  for (const file of listFiles(dir).filter((f) => f.endsWith('.ts'))) {
    const out = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    });
    writeFileSync(file.replace(/\.ts$/, '.js'), out.outputText);
  }
  return require(join(dir, 'index.js')).serviceModel as ServiceModel;
}
