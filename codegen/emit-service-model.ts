/**
 * generated/index.ts: the service model the runtime is started with, tying the other artifacts together.
 * The metadata documents and the record schemas are read from the files beside it, as generated.
 */
import { VariableDeclarationKind, Writers } from 'ts-morph';
import type { BuiltModel } from './build-model';
import type { EmittedFile } from './emitted-file';
import { recordSchemaPath } from './emit-record-schemas';
import { EmitContext, modelImportAt, quote, typeScriptFile } from './typescript-source';

export function emitServiceModel(model: BuiltModel, context: EmitContext): EmittedFile[] {
  return [typeScriptFile('index.ts', context.header, (file) => {
    file.addImportDeclaration({ moduleSpecifier: 'node:fs', namedImports: ['readFileSync'] });
    file.addImportDeclaration({ moduleSpecifier: 'node:path', namedImports: ['join'] });
    file.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: modelImportAt(context, 0), namedImports: ['ServiceModel'] });
    file.addImportDeclaration({ moduleSpecifier: './field-tables', namedImports: model.entitySets.map((s) => s.name) });
    file.addImportDeclaration({ moduleSpecifier: './lookups', namedImports: ['lookups'] });
    file.addImportDeclaration({ moduleSpecifier: './storage-schema', namedImports: ['tables', 'valueTables'] });
    file.addImportDeclaration({ moduleSpecifier: './migrations', namedImports: ['migrations'] });
    file.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      declarations: [{ name: 'serviceModel', type: 'ServiceModel', initializer: serviceModel(model, context) }],
    });
  })];
}

function serviceModel(model: BuiltModel, context: EmitContext) {
  return Writers.object({
    namespace: quote(model.namespace),
    containerName: quote(model.containerName),
    entitySets: `[${model.entitySets.map((s) => s.name).join(', ')}]`,
    tables: 'tables',
    valueTables: 'valueTables',
    migrations: 'migrations',
    lookups: 'lookups',
    metadataHeader: quote(context.header),
    metadataXml: `readFileSync(join(__dirname, 'metadata.xml'), 'utf8')`,
    metadataJson: `readFileSync(join(__dirname, 'metadata.json'), 'utf8')`,
    recordSchemas: Writers.object(Object.fromEntries(model.entitySets.map((s) => [
      s.name, `JSON.parse(readFileSync(join(__dirname, ${quote(recordSchemaPath(s))}), 'utf8'))`,
    ]))),
  });
}
