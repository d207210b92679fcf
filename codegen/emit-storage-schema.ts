/** generated/storage-schema.ts: tables, columns and indexes; the storage layer maps them to each dialect. */
import { VariableDeclarationKind } from 'ts-morph';
import type { TableSpec } from '../src/model/service-model';
import type { BuiltModel } from './build-model';
import type { EmittedFile } from './emitted-file';
import { EmitContext, listLiteral, literal, modelImportAt, quote, typeScriptFile } from './typescript-source';

export function emitStorageSchema(model: BuiltModel, context: EmitContext): EmittedFile[] {
  return [typeScriptFile('storage-schema.ts', context.header, (file) => {
    file.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: modelImportAt(context, 0), namedImports: ['TableSpec', 'ValueTableSpec'] });
    file.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      declarations: [{
        name: 'tables',
        type: 'readonly TableSpec[]',
        initializer: (w) => {
          w.write('[').newLine();
          w.indent(() => { for (const t of model.tables) for (const line of tableLines(t)) w.writeLine(line); });
          w.write(']');
        },
      }],
    });
    file.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      docs: ['Value tables of the filterable collection fields: one row per record and element.'],
      declarations: [{ name: 'valueTables', type: 'readonly ValueTableSpec[]', initializer: listLiteral(model.valueTables) }],
    });
  })];
}

function tableLines(t: TableSpec): string[] {
  return [
    '{',
    `  name: ${quote(t.name)},`,
    `  primaryKey: ${quote(t.primaryKey)},`,
    '  columns: [',
    ...t.columns.map((c) => `    ${literal(c)},`),
    '  ],',
    '  indexes: [',
    ...t.indexes.map((i) => `    ${literal(i)},`),
    '  ],',
    '},',
  ];
}
