/**
 * generated/routers/<Set>.ts: the paths each entity set answers on (its name and path aliases): the collection,
 * /$count, a key, the navigation paths the dictionary makes followable (and their /$count), and a segment after a
 * key (a property, its /$value and /$count, or a single-valued navigation: the handler knows the set's members).
 */
import type { BuiltModel } from './build-model';
import type { BuiltEntitySet } from './built-entity-set';
import type { EmittedFile } from './emitted-file';
import { EmitContext, literal, modelImportAt, typeScriptFile } from './typescript-source';

export function emitRouters(model: BuiltModel, context: EmitContext): EmittedFile[] {
  return model.entitySets.map((set) => typeScriptFile(`routers/${set.name}.ts`, context.header, (file) => {
    file.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: modelImportAt(context, 1), namedImports: ['ResourceHandlers', 'RouteTable'] });
    file.addImportDeclaration({ moduleSpecifier: '../field-tables', namedImports: [set.name] });
    file.addFunction({
      name: routerName(set),
      isExported: true,
      docs: [`Routes of ${set.name}${set.pathAliases.length ? ` (also answering as ${set.pathAliases.join(', ')})` : ''}.`],
      parameters: [{ name: 'router', type: 'RouteTable' }, { name: 'handlers', type: 'ResourceHandlers' }],
      returnType: 'void',
      statements: routes(set),
    });
  }));
}

export function routerName(set: BuiltEntitySet): string {
  return `mount${set.name}Routes`;
}

function routes(set: BuiltEntitySet): string[] {
  const paths = [set.name, ...set.pathAliases];
  const anyPath = `(?:${paths.join('|')})`;
  const navigations = set.navigations.filter((n) => n.followable).map((n) => n.name);
  return [
    `router.get(${literal(paths.map((p) => `/${p}`))}, handlers.collection(${set.name}));`,
    `router.get(/^\\/${anyPath}\\/\\$count$/, handlers.count(${set.name}));`,
    `router.get(/^\\/${anyPath}\\((.*)\\)$/, handlers.byKey(${set.name}));`,
    ...(navigations.length ? [`router.get(/^\\/${anyPath}\\((.*)\\)\\/(${navigations.join('|')})$/, handlers.navigation(${set.name}));`] : []),
    `router.get(/^\\/${anyPath}\\((.*)\\)\\/([^/]+)$/, handlers.member(${set.name}));`,
    `router.get(/^\\/${anyPath}\\((.*)\\)\\/([^/]+)\\/\\$value$/, handlers.rawValue(${set.name}));`,
    `router.get(/^\\/${anyPath}\\((.*)\\)\\/([^/]+)\\/\\$count$/, handlers.memberCount(${set.name}));`,
  ];
}
