/**
 * Writes the TypeScript half of `generated/` with ts-morph: entity interfaces, field tables,
 * one Express router per entity set, the storage schema, the lookup values and an index that ties them together.
 * Generated modules import only types from the runtime, so a generated folder can be loaded from anywhere.
 */
import { IndentationText, NewLineKind, Project, QuoteKind, SourceFile, VariableDeclarationKind, WriterFunction, Writers } from 'ts-morph';
import type { FieldSpec } from '../src/model/service-model';
import type { BuiltEntitySet, BuiltModel } from './build-model';
import { navigationPropertiesOf } from './emit-metadata';
import type { EmittedFile } from './emitted-file';

export type { EmittedFile };

export interface TypeScriptOptions {
  header: string;
  /** Import specifier of the runtime's model types, relative to the output folder. */
  modelImport: string;
}

export function emitTypeScript(model: BuiltModel, options: TypeScriptOptions): EmittedFile[] {
  const project = new Project({
    useInMemoryFileSystem: true,
    manipulationSettings: {
      indentationText: IndentationText.TwoSpaces,
      newLineKind: NewLineKind.LineFeed,
      quoteKind: QuoteKind.Single,
      useTrailingCommas: true,
    },
  });
  const files: SourceFile[] = [];
  const create = (path: string) => {
    const sf = project.createSourceFile(path, '', { overwrite: true });
    files.push(sf);
    return sf;
  };
  const modelImport = (depth: number) => (depth === 0 ? options.modelImport : `../${options.modelImport}`);

  // entities.ts: the record shapes as they appear in JSON payloads.
  const entities = create('entities.ts');
  for (const set of model.entitySets) {
    entities.addInterface({
      name: set.typeDef.name,
      isExported: true,
      docs: [`${model.namespace}.${set.typeDef.name}, served as the entity set ${set.name}.`],
      properties: set.fields.map((f) => ({
        name: f.name,
        type: tsType(f),
        hasQuestionToken: f.nullable && !f.collection,
      })),
    });
  }

  // field-tables.ts: what the query binder, the serialiser and the storage layer read.
  const tables = create('field-tables.ts');
  tables.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: modelImport(0), namedImports: ['EntitySetSpec', 'FieldSpec'] });
  tables.addFunction({
    name: 'byName',
    parameters: [{ name: 'fields', type: 'readonly FieldSpec[]' }],
    returnType: 'Record<string, FieldSpec>',
    statements: 'return Object.fromEntries(fields.map((f) => [f.name, f]));',
  });
  for (const set of model.entitySets) {
    tables.addVariableStatement({
      declarationKind: VariableDeclarationKind.Const,
      declarations: [{
        name: `${set.name}Fields`,
        type: 'readonly FieldSpec[]',
        initializer: (w) => {
          w.write('[').newLine();
          w.indent(() => { for (const f of set.fields) w.writeLine(`${literal(f)},`); });
          w.write(']');
        },
      }],
    });
    tables.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      docs: [`Entity set ${set.name} (${set.entityType}).`],
      declarations: [{
        name: set.name,
        type: 'EntitySetSpec',
        initializer: Writers.object({
          name: quote(set.name),
          entityType: quote(set.entityType),
          pathAliases: literal(set.pathAliases),
          key: quote(set.key),
          defaultOrder: literal(set.defaultOrder),
          table: quote(set.table),
          fields: `${set.name}Fields`,
          fieldsByName: `byName(${set.name}Fields)`,
          navigations: list(set.navigations),
          navigationProperties: list(navigationPropertiesOf(set)),
          bindings: list(set.setDef.bindings),
        }),
      }],
    });
  }

  // routers/<Set>.ts: the paths each set answers on.
  for (const set of model.entitySets) {
    const router = create(`routers/${set.name}.ts`);
    router.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: 'express', namedImports: ['IRouter'] });
    router.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: modelImport(1), namedImports: ['ResourceHandlers'] });
    router.addImportDeclaration({ moduleSpecifier: '../field-tables', namedImports: [set.name] });
    const paths = [set.name, ...set.pathAliases];
    const keyPattern = `/^\\/(?:${paths.join('|')})\\((.*)\\)$/`;
    const countPattern = `/^\\/(?:${paths.join('|')})\\/\\$count$/`;
    // Navigation paths, for the navigations the runtime can follow (to a served set, by a known join).
    const navs = set.navigations.filter((n) => n.collection && n.join && n.join.referencedKey === set.key).map((n) => n.name);
    const navPattern = `/^\\/(?:${paths.join('|')})\\((.*)\\)\\/(${navs.join('|')})$/`;
    router.addFunction({
      name: routerName(set),
      isExported: true,
      docs: [`Routes of ${set.name}${set.pathAliases.length ? ` (also answering as ${set.pathAliases.join(', ')})` : ''}.`],
      parameters: [{ name: 'router', type: 'IRouter' }, { name: 'handlers', type: 'ResourceHandlers' }],
      returnType: 'void',
      statements: [
        `router.get(${literal(paths.map((p) => `/${p}`))}, handlers.collection(${set.name}));`,
        `router.get(${countPattern}, handlers.count(${set.name}));`,
        `router.get(${keyPattern}, handlers.byKey(${set.name}));`,
        ...(navs.length ? [`router.get(${navPattern}, handlers.navigation(${set.name}));`] : []),
      ],
    });
  }

  // storage-schema.ts: tables, columns and indexes; the storage layer maps them to each dialect.
  const schema = create('storage-schema.ts');
  schema.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: modelImport(0), namedImports: ['TableSpec'] });
  schema.addVariableStatement({
    isExported: true,
    declarationKind: VariableDeclarationKind.Const,
    declarations: [{
      name: 'tables',
      type: 'readonly TableSpec[]',
      initializer: (w) => {
        w.write('[').newLine();
        w.indent(() => {
          for (const t of model.tables) {
            w.writeLine('{');
            w.indent(() => {
              w.writeLine(`name: ${quote(t.name)},`);
              w.writeLine(`primaryKey: ${quote(t.primaryKey)},`);
              w.writeLine('columns: [');
              w.indent(() => { for (const c of t.columns) w.writeLine(`${literal(c)},`); });
              w.writeLine('],');
              w.writeLine('indexes: [');
              w.indent(() => { for (const i of t.indexes) w.writeLine(`${literal(i)},`); });
              w.writeLine('],');
            });
            w.writeLine('},');
          }
        });
        w.write(']');
      },
    }],
  });

  // lookups.ts: the Lookup resource's content and the values demo data draws from.
  const lookups = create('lookups.ts');
  lookups.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: modelImport(0), namedImports: ['LookupSpec'] });
  lookups.addVariableStatement({
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

  // index.ts: the service model the runtime is started with.
  const index = create('index.ts');
  index.addImportDeclaration({ moduleSpecifier: 'node:fs', namedImports: ['readFileSync'] });
  index.addImportDeclaration({ moduleSpecifier: 'node:path', namedImports: ['join'] });
  index.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: modelImport(0), namedImports: ['ServiceModel'] });
  index.addImportDeclaration({ moduleSpecifier: './field-tables', namedImports: model.entitySets.map((s) => s.name) });
  index.addImportDeclaration({ moduleSpecifier: './lookups', namedImports: ['lookups'] });
  index.addImportDeclaration({ moduleSpecifier: './storage-schema', namedImports: ['tables'] });
  for (const set of model.entitySets) {
    index.addImportDeclaration({ moduleSpecifier: `./routers/${set.name}`, namedImports: [routerName(set)] });
  }
  index.addVariableStatement({
    isExported: true,
    declarationKind: VariableDeclarationKind.Const,
    declarations: [{
      name: 'serviceModel',
      type: 'ServiceModel',
      initializer: Writers.object({
        namespace: quote(model.namespace),
        containerName: quote(model.containerName),
        entitySets: `[${model.entitySets.map((s) => s.name).join(', ')}]`,
        tables: 'tables',
        lookups: 'lookups',
        skipSupported: String(model.dictionary.skipSupported),
        metadataHeader: quote(options.header),
        metadataXml: `readFileSync(join(__dirname, 'metadata.xml'), 'utf8')`,
        metadataJson: `readFileSync(join(__dirname, 'metadata.json'), 'utf8')`,
        mountRoutes: (w) => {
          w.write('(router, handlers) => {').newLine();
          w.indent(() => { for (const s of model.entitySets) w.writeLine(`${routerName(s)}(router, handlers);`); });
          w.write('}');
        },
      }),
    }],
  });

  for (const sf of files) sf.formatText({ indentSize: 2, convertTabsToSpaces: true, ensureNewLineAtEndOfFile: true });
  return files.map((sf) => ({ path: sf.getFilePath().replace(/^\//, ''), text: `// ${options.header}\n\n${sf.getFullText()}` }));
}

/** An array literal with one item per line, or `[]`. */
function list(items: readonly unknown[]): WriterFunction {
  return (w) => {
    w.write('[');
    if (items.length) {
      w.newLine();
      w.indent(() => { for (const item of items) w.writeLine(`${literal(item)},`); });
    }
    w.write(']');
  };
}

function routerName(set: BuiltEntitySet): string {
  return `mount${set.name}Routes`;
}

function tsType(f: FieldSpec): string {
  const scalar = (() => {
    switch (f.type) {
      case 'Edm.Boolean': return 'boolean';
      case 'Edm.Int16': case 'Edm.Int32': case 'Edm.Int64': case 'Edm.Decimal': case 'Edm.Double': return 'number';
      default: return 'string';
    }
  })();
  if (f.collection) return `${scalar}[]`;
  return f.nullable ? `${scalar} | null` : scalar;
}

function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A compact, deterministic TypeScript literal for plain data. */
function literal(v: unknown): string {
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(literal).join(', ')}]`;
  if (v && typeof v === 'object') {
    const parts = Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => `${k}: ${literal(x)}`);
    return `{ ${parts.join(', ')} }`;
  }
  throw new Error(`cannot write ${String(v)} as a literal`);
}
