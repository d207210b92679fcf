/** generated/lookups.ts: the Lookup resource's content and the values demo data draws from. */
import { VariableDeclarationKind } from 'ts-morph';
import type { BuiltModel } from './build-model';
import type { EmittedFile } from './emitted-file';
import { EmitContext, literal, modelImportAt, quote, typeScriptFile } from './typescript-source';

export function emitLookups(model: BuiltModel, context: EmitContext): EmittedFile[] {
  return [typeScriptFile('lookups.ts', context.header, (file) => {
    file.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: modelImportAt(context, 0), namedImports: ['LookupSpec'] });
    file.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      declarations: [{
        name: 'lookups',
        type: 'readonly LookupSpec[]',
        initializer: (w) => {
          w.write('[').newLine();
          w.indent(() => {
            for (const l of model.lookups) {
              w.writeLine(`{ name: ${quote(l.name)}, values: [`);
              w.indent(() => { for (const v of l.values) w.writeLine(`${literal(v)},`); });
              w.writeLine('] },');
            }
          });
          w.write(']');
        },
      }],
    });
  })];
}
