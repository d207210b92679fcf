/**
 * A generated folder written anywhere (not the project's generated/, which the build compiles): its TypeScript
 * compiled in place as the build would, and its service model loaded. For serving another dictionary than the
 * one the project was generated from, beside it: the certification runner (certify/) and the tests.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import type { ServiceModel } from '../src/model/service-model';

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? listFiles(join(dir, n)) : [join(dir, n)]));
}

/** Compiles a generated folder in place, the way the build would, and loads its index. */
export function loadGenerated(dir: string): ServiceModel {
  for (const file of listFiles(dir).filter((f) => f.endsWith('.ts'))) {
    const out = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    });
    writeFileSync(file.replace(/\.ts$/, '.js'), out.outputText);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(join(dir, 'index.js')) as { serviceModel: ServiceModel }).serviceModel;
}
