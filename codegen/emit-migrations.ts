/**
 * generated/migrations/: one versioned migration per dictionary change, written when the dictionary's storage
 * differs from the snapshot the last `generate` kept (schema.json), as Prisma Migrate writes one per schema
 * change; the migrations written before are kept as they are (but for the module their type is imported from:
 * withCurrentImport). Each imports only the migration contract of the model (src/model/migration.ts); `index.ts`
 * lists them in order for storage's migrator, which knex's migration machinery runs at start-up (src/storage/migrations/).
 */
import { VariableDeclarationKind, type CodeBlockWriter } from 'ts-morph';
import type { ColumnSpec } from '../src/model/service-model';
import type { BuiltModel } from './build-model';
import type { EmittedFile } from './emitted-file';
import { diffSnapshots, SchemaStep, StepTable } from './schema-diff';
import { SNAPSHOT_FILE, snapshotOf, snapshotText, type StorageSnapshot } from './storage-snapshot';
import { EmitContext, modelImportAt, quote, typeScriptFile } from './typescript-source';

export const MIGRATIONS_FOLDER = 'migrations';

export function emitMigrations(model: BuiltModel, context: EmitContext): EmittedFile[] {
  const previous = context.previous ?? { migrations: [] };
  const unchanged = snapshotOf(model, context.header, previous.snapshot?.migration ?? '');
  const changed = !previous.snapshot || sameStorage(previous.snapshot, unchanged) === false;
  const diff = changed ? diffSnapshots(previous.snapshot, unchanged) : undefined;
  const migrations = previous.migrations.map((m) => withCurrentImport(m, context));
  let latest = previous.snapshot?.migration ?? '';
  if (diff) {
    latest = previous.snapshot ? migrationName(migrations.length + 1, diff.changes) : `${String(migrations.length + 1).padStart(4, '0')}-initial`;
    migrations.push(migrationFile(latest, diff.changes, diff.steps, context));
  }
  context.notices?.push(...(diff?.notices ?? []), ...(diff ? [`new migration ${MIGRATIONS_FOLDER}/${latest}.ts: ${diff.changes.length} change(s), ${diff.steps.length} schema step(s)`] : []));
  return [
    ...migrations,
    migrationIndex(migrations, context),
    { path: SNAPSHOT_FILE, text: snapshotText({ ...unchanged, migration: latest }) },
  ];
}

/** The same storage, whatever the header and the migration's name say. */
function sameStorage(a: StorageSnapshot, b: StorageSnapshot): boolean {
  const body = (s: StorageSnapshot) => JSON.stringify({ ...s, generatedBy: '', migration: '' });
  return body(a) === body(b);
}

/** `0002-property-buildername-removed`: the number, then the first change in a few words. */
export function migrationName(n: number, changes: readonly string[]): string {
  const words = (changes[0] ?? 'change').split(/[;(]/)[0].toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 48).replace(/-$/, '');
  return `${String(n).padStart(4, '0')}-${words}${changes.length > 1 ? '-and-more' : ''}`;
}

function migrationFile(name: string, changes: readonly string[], steps: readonly SchemaStep[], context: EmitContext): EmittedFile {
  return typeScriptFile(`${MIGRATIONS_FOLDER}/${name}.ts`, context.header, (file) => {
    file.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: migrationImport(context, 1), namedImports: ['DictionaryMigration'] });
    file.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      declarations: [{
        name: 'migration',
        type: 'DictionaryMigration',
        initializer: (w) => {
          w.write('{').newLine();
          w.indent(() => {
            w.writeLine(`name: ${quote(name)},`);
            w.write('changes: [').newLine();
            w.indent(() => { for (const c of changes) w.writeLine(`${quote(c)},`); });
            w.writeLine('],');
            w.write(`steps: (${steps.length ? 'knex' : '_knex'}, ${steps.some((s) => s.kind === 'createTable' || s.kind === 'rebuildTable') ? 'storage' : '_storage'}) => [`).newLine();
            w.indent(() => { for (const s of steps) writeStep(w, s); });
            w.writeLine('],');
          });
          w.write('}');
        },
      }],
    });
  });
}

function migrationIndex(migrations: readonly EmittedFile[], context: EmitContext): EmittedFile {
  const modules = migrations.map((m) => m.path.replace(/^.*\//, '').replace(/\.ts$/, ''));
  return typeScriptFile(`${MIGRATIONS_FOLDER}/index.ts`, context.header, (file) => {
    file.addImportDeclaration({ isTypeOnly: true, moduleSpecifier: migrationImport(context, 1), namedImports: ['DictionaryMigration'] });
    modules.forEach((m, i) => file.addImportDeclaration({ moduleSpecifier: `./${m}`, namedImports: [{ name: 'migration', alias: `m${i + 1}` }] }));
    file.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      docs: ['The dictionary\'s migrations, oldest first.'],
      declarations: [{ name: 'migrations', type: 'readonly DictionaryMigration[]', initializer: `[${modules.map((_, i) => `m${i + 1}`).join(', ')}]` }],
    });
  });
}

/** The import of the migration contract (the model's), from a file `depth` folders below the output folder. */
function migrationImport(context: EmitContext, depth: number): string {
  return modelImportAt(context, depth).replace(/service-model$/, 'migration');
}

/** Where the migration type lived before, under src/, oldest first: a migration written then imports it from there. */
const FORMER_HOMES = ['storage/dictionary-migration', 'storage/migrations/dictionary-migration'];

/**
 * A migration written before, kept as it is but for where it imports its type from: the type lived in storage
 * for a while (FORMER_HOMES), so an import written then would not compile. Only that import's module changes;
 * migrations are otherwise never rewritten.
 */
function withCurrentImport(file: EmittedFile, context: EmitContext): EmittedFile {
  const current = migrationImport(context, 1);
  const text = FORMER_HOMES.reduce((t, home) => t.replace(
    `import type { DictionaryMigration } from '${current.replace(/model\/migration$/, home)}';`,
    `import type { DictionaryMigration } from '${current}';`,
  ), file.text);
  return text === file.text ? file : { ...file, text };
}

function writeStep(w: CodeBlockWriter, s: SchemaStep): void {
  if (s.kind === 'createTable') return writeCreate(w, s.table);
  if (s.kind === 'rebuildTable') return writeRebuild(w, s);
  if (s.kind === 'dropTable') { w.writeLine(`knex.schema.dropTableIfExists(${quote(s.table)}),`); return; }
  w.write(`knex.schema.alterTable(${quote(s.table)}, (table) => {`).newLine();
  w.indent(() => {
    switch (s.kind) {
      case 'dropIndexes': for (const i of s.indexes) w.writeLine(`table.dropIndex([], ${quote(i)});`); break;
      case 'dropColumns': w.writeLine(`table.dropColumns(${s.columns.map(quote).join(', ')});`); break;
      case 'addColumns': for (const c of s.columns) w.writeLine(`${column({ ...c, nullable: true })};`); break;
      case 'widenColumns': for (const c of s.columns) w.writeLine(`${column(c)}.alter();`); break;
      case 'addIndexes': for (const i of s.indexes) w.writeLine(`table.index([${i.columns.map(quote).join(', ')}], ${quote(i.name)});`); break;
    }
  });
  w.writeLine('}),');
}

function writeCreate(w: CodeBlockWriter, t: StepTable): void {
  w.write(`knex.schema.createTable(${quote(t.name)}, (table) => {`).newLine();
  w.indent(() => {
    for (const c of t.columns) w.writeLine(`${column(c)};`);
    w.writeLine(`table.primary([${t.primaryKey.map(quote).join(', ')}]);`);
    for (const i of t.indexes) w.writeLine(`table.index([${i.columns.map(quote).join(', ')}], ${quote(i.name)});`);
    w.writeLine('storage.tableOptions(table);');
  });
  w.writeLine('}),');
}

/**
 * A table made anew where the database reads a row's columns in their order (storage.rowsReadInColumnOrder:
 * SQLite, where the migration is one transaction; storage.rebuilt says how), else the steps that alter it in place.
 */
function writeRebuild(w: CodeBlockWriter, s: Extract<SchemaStep, { kind: 'rebuildTable' }>): void {
  const t = s.table;
  w.write('...(storage.rowsReadInColumnOrder ? storage.rebuilt(knex, {').newLine();
  w.indent(() => {
    w.writeLine(`name: ${quote(t.name)},`);
    w.writeLine(`columnNames: [${t.columns.map((c) => quote(c.name)).join(', ')}],`);
    w.writeLine(`copied: [${s.copied.map(quote).join(', ')}],`);
    w.write('columns: (table) => {').newLine();
    w.indent(() => {
      for (const c of t.columns) w.writeLine(`${column(c)};`);
      w.writeLine(`table.primary([${t.primaryKey.map(quote).join(', ')}]);`);
    });
    w.writeLine('},');
    w.write('indexes: (table) => {').newLine();
    w.indent(() => { for (const i of t.indexes) w.writeLine(`table.index([${i.columns.map(quote).join(', ')}], ${quote(i.name)});`); });
    w.writeLine('},');
  });
  w.write('}) : [').newLine();
  w.indent(() => { for (const step of s.inPlace) writeStep(w, step); });
  w.writeLine(']),');
}

/** The knex column for a storage column: the logical types as both databases store them (timestamps as fixed-width UTC text). */
function column(c: ColumnSpec): string {
  const n = quote(c.name);
  const base = ({
    string: `table.string(${n}, ${c.length ?? 255})`,
    integer: `table.bigInteger(${n})`,
    boolean: `table.boolean(${n})`,
    decimal: `table.decimal(${n}, ${c.precision ?? 18}, ${c.scale ?? 0})`,
    double: `table.double(${n})`,
    date: `table.string(${n}, 10)`,
    timestamp: `table.string(${n}, 24)`,
    text: `table.text(${n}, 'mediumtext')`,
  } satisfies Record<ColumnSpec['type'], string>)[c.type];
  return c.nullable ? base : `${base}.notNullable()`;
}
