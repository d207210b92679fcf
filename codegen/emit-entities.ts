/**
 * generated/entities.ts: one type per entity type, typed field by field, for the code that builds records
 * (demo data, tests): a record that no longer fits the dictionary fails to compile. Object types, not interfaces:
 * a record must also be a `Record<string, unknown>`, which the codec and ingest take, and only a type alias is. Each closed lookup is a union
 * of its values (in the `Lookups` namespace, by the lookup's own name, whatever its size: one value a line); an
 * open lookup is any string. `EntitySets` maps each entity set to its type, so generic code is typed per set.
 */
import { ModuleDeclarationKind, WriterFunction } from 'ts-morph';
import { FieldSpec, LookupSpec, serviceKeptFields, VALUE_TABLE_TEXT_LENGTH } from '../src/model/service-model';
import type { BuiltModel } from './build-model';
import type { BuiltEntitySet } from './built-entity-set';
import { DictionaryError } from './dictionary';
import type { EmittedFile } from './emitted-file';
import { closedLookup, columnBounds, facetsOf } from './record-fields';
import { EmitContext, quote, typeScriptFile } from './typescript-source';

/** The types whose values are text of a length (a date is text too, of a fixed form). */
const TEXT_TYPES: readonly string[] = ['Edm.String', 'Edm.Guid', 'Edm.TimeOfDay'];

/** Names this file declares besides the entity types. */
const OWN_NAMES = ['Lookups', 'EntitySets', 'EntitySetName', 'Entity'];

export function emitEntities(model: BuiltModel, context: EmitContext): EmittedFile[] {
  const types = entityTypes(model);
  for (const name of types.keys()) {
    if (OWN_NAMES.includes(name)) throw new DictionaryError(`entity type ${name}: the name is taken in entities.ts (${OWN_NAMES.join(', ')})`);
  }
  return [typeScriptFile('entities.ts', context.header, (file) => {
    if (model.lookups.length) {
      file.addModule({
        name: 'Lookups',
        isExported: true,
        declarationKind: ModuleDeclarationKind.Namespace,
        docs: ['The values of each closed lookup of the dictionary.'],
        statements: (w) => { for (const l of model.lookups) lookupType(l)(w); },
      });
    }
    for (const [name, set] of types) file.addStatements(recordType(model, name, set));
    file.addInterface({
      name: 'EntitySets',
      isExported: true,
      docs: ['The record type of each entity set, by the set\'s name.'],
      properties: model.entitySets.map((s) => ({ name: s.name, type: typeName(s) })),
    });
    file.addTypeAlias({ name: 'EntitySetName', isExported: true, type: 'keyof EntitySets' });
    file.addTypeAlias({
      name: 'Entity',
      isExported: true,
      typeParameters: [{ name: 'S', constraint: 'EntitySetName' }],
      docs: [`A record of the entity set \`S\`: \`Entity<${quote(model.entitySets[0]?.name ?? '')}>\`.`],
      type: 'EntitySets[S]',
    });
  })];
}

/** The entity types the sets serve, each once, in the order of their first set. */
function entityTypes(model: BuiltModel): Map<string, BuiltEntitySet> {
  const types = new Map<string, BuiltEntitySet>();
  for (const set of model.entitySets) if (!types.has(typeName(set))) types.set(typeName(set), set);
  return types;
}

function typeName(set: BuiltEntitySet): string {
  return set.typeDef.name;
}

function lookupType(lookup: LookupSpec): WriterFunction {
  return (w) => {
    w.writeLine(`/** Lookup ${lookup.name}. */`);
    if (lookup.values.length === 0) { w.writeLine(`export type ${lookup.name} = never;`); return; }
    w.writeLine(`export type ${lookup.name} =`);
    lookup.values.forEach((v, i) => w.writeLine(`  | ${quote(v.value)}${i === lookup.values.length - 1 ? ';' : ''}`));
  };
}

function recordType(model: BuiltModel, name: string, set: BuiltEntitySet): WriterFunction {
  return (w) => {
    w.newLine();
    w.writeLine(`/** A record of ${set.entityType}, as ingested and served (absent and null are alike; a collection absent is empty). */`);
    w.writeLine(`export type ${name} = {`);
    w.indent(() => {
      for (const f of set.fields) {
        w.writeLine(`/** ${fieldDoc(model, set, f)} */`);
        w.writeLine(`${f.name}${f.collection || f.nullable ? '?' : ''}: ${fieldType(model, f)};`);
      }
    });
    w.writeLine('};');
  };
}

function fieldType(model: BuiltModel, f: FieldSpec): string {
  const lookup = closedLookup(model, f);
  const element = lookup ? `Lookups.${lookup.name}` : scalarType(f);
  if (f.collection) return `${element}[]`;
  return f.nullable ? `${element} | null` : element;
}

function scalarType(f: FieldSpec): string {
  switch (f.type) {
    case 'Edm.Boolean': return 'boolean';
    case 'Edm.Int16': case 'Edm.Int32': case 'Edm.Int64': case 'Edm.Decimal': case 'Edm.Double': return 'number';
    default: return 'string';
  }
}

function fieldDoc(model: BuiltModel, set: BuiltEntitySet, f: FieldSpec): string {
  const column = columnBounds(model, set, f);
  const notes = [
    f.name === set.key ? 'The key.' : undefined,
    `${facetsOf(model, f)}.`,
    f.maxLength === undefined && column.length !== undefined ? `At most ${column.length} characters (its column).` : undefined,
    f.precision === undefined && column.precision !== undefined ? `Within Precision ${column.precision}, Scale ${column.scale ?? 0} (its column).` : undefined,
    f.valueTable && TEXT_TYPES.includes(f.type) ? `Each element at most ${VALUE_TABLE_TEXT_LENGTH} characters (filterable: indexed).` : undefined,
    f.type === 'Edm.DateTimeOffset' ? 'ISO 8601 with Z or an offset (served in UTC, with Z).' : undefined,
    f.type === 'Edm.Date' ? 'YYYY-MM-DD.' : undefined,
    serviceKeptFields(set).includes(f.name) ? 'Set by the service: ingest ignores the value given.' : undefined,
  ];
  return notes.filter((n) => n !== undefined).join(' ');
}
