/** generated/field-tables.ts: one EntitySetSpec per entity set, what the query binder, serialiser and storage read. */
import { VariableDeclarationKind, Writers } from 'ts-morph';
import type { BuiltModel } from './build-model';
import type { BuiltEntitySet } from './built-entity-set';
import { navigationPropertiesOf } from './emit-metadata';
import type { EmittedFile } from './emitted-file';
import { EmitContext, listLiteral, literal, modelImportAt, quote, typeScriptFile } from './typescript-source';

export function emitFieldTables(model: BuiltModel, context: EmitContext): EmittedFile[] {
  return [typeScriptFile('field-tables.ts', context.header, (file) => {
    file.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: modelImportAt(context, 0), namedImports: ['EntitySetSpec', 'FieldSpec'] });
    file.addFunction({
      name: 'byName',
      parameters: [{ name: 'fields', type: 'readonly FieldSpec[]' }],
      returnType: 'Record<string, FieldSpec>',
      statements: 'return Object.fromEntries(fields.map((f) => [f.name, f]));',
    });
    for (const set of model.entitySets) {
      file.addVariableStatement({
        declarationKind: VariableDeclarationKind.Const,
        declarations: [{ name: fieldsName(set), type: 'readonly FieldSpec[]', initializer: listLiteral(set.fields) }],
      });
      file.addVariableStatement({
        isExported: true,
        declarationKind: VariableDeclarationKind.Const,
        docs: [`Entity set ${set.name} (${set.entityType}).`],
        declarations: [{ name: set.name, type: 'EntitySetSpec', initializer: entitySetSpec(set) }],
      });
    }
  })];
}

function fieldsName(set: BuiltEntitySet): string {
  return `${set.name}Fields`;
}

/** The set-level policy the dictionary states, written only where it says something. */
function policyOf(set: BuiltEntitySet): Record<string, string> {
  const stated = {
    changeTimestamp: set.changeTimestamp,
    listingRoot: set.listingRoot,
    deletedWhen: set.deletedWhen,
    relatedTimestamps: set.relatedTimestamps,
    dictionaryRows: set.dictionaryRows,
    namesFields: set.namesFields,
    namesLookups: set.namesLookups,
    skipSupported: set.skipSupported,
    changeLog: set.changeLog,
    pagedByTop: set.pagedByTop,
  };
  return Object.fromEntries(Object.entries(stated).filter(([, v]) => v !== undefined).map(([k, v]) => [k, literal(v)]));
}

function entitySetSpec(set: BuiltEntitySet) {
  return Writers.object({
    name: quote(set.name),
    entityType: quote(set.entityType),
    pathAliases: literal(set.pathAliases),
    key: quote(set.key),
    defaultOrder: literal(set.defaultOrder),
    ...policyOf(set),
    table: quote(set.table),
    fields: fieldsName(set),
    fieldsByName: `byName(${fieldsName(set)})`,
    navigations: listLiteral(set.navigations),
    navigationProperties: listLiteral(navigationPropertiesOf(set)),
    bindings: listLiteral(set.setDef.bindings),
  });
}
