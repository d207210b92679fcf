/**
 * The owner's workflow on a scratch copy: change the dictionary, `generate`, and start on the new model. Each
 * version is generated into its own folder, copied from the previous version's (so the migrations written so
 * far and the storage snapshot are there, as they are in generated/ after each change), and loaded as the
 * server would load it. Edits are plain text changes of the CSDL, as a person makes them.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from '../../codegen/generate';
import type { ServiceModel } from '../../src/model/service-model';
import { loadGenerated } from './generated-folder';
import { REPO_ROOT } from './shared';

export interface DictionaryVersion {
  readonly dir: string;
  readonly xml: string;
  readonly model: ServiceModel;
  /** What `generate` said (defaults applied, the migration written). */
  readonly notices: readonly string[];
}

export class DictionaryVersions {
  private readonly root = mkdtempSync(join(tmpdir(), 'reso-dictionary-'));
  private count = 0;
  /** The repository's dictionary and generated folder, as committed. */
  readonly base: DictionaryVersion;

  constructor() {
    const dir = join(this.root, 'v0');
    cpSync(join(REPO_ROOT, 'generated'), dir, { recursive: true });
    const xml = readFileSync(join(REPO_ROOT, 'csdl/reso-dictionary.xml'), 'utf8');
    this.base = { dir, xml, model: loadGenerated(dir), notices: [] };
  }

  /** The dictionary after `edit`, generated on top of `from` (by default the repository's). */
  next(edit: (xml: string) => string, from: DictionaryVersion = this.base): DictionaryVersion {
    const dir = join(this.root, `v${++this.count}`);
    cpSync(from.dir, dir, { recursive: true });
    const xml = edit(from.xml);
    if (xml === from.xml) throw new Error('the edit changed nothing');
    const dictionary = join(this.root, `dictionary-v${this.count}.xml`);
    writeFileSync(dictionary, xml);
    const { notices } = generate({ dictionary, outDir: dir });
    return { dir, xml, model: loadGenerated(dir), notices };
  }

  /** The name generate gives the `nth` migration after the repository's own: `0003-property-buildername-removed`. */
  migrationName(slug: string, nth = 1): string {
    return `${String(this.base.model.migrations.length + nth).padStart(4, '0')}-${slug}`;
  }

  /** The repository's migrations' names, in order. */
  get baseMigrations(): string[] {
    return this.base.model.migrations.map((m) => m.name);
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** The text of one entity type's or entity set's element, for edits confined to it. */
function element(xml: string, tag: 'EntityType' | 'EntitySet' | 'EnumType', name: string): { start: number; end: number } {
  const start = xml.indexOf(`<${tag} Name="${name}"`);
  if (start < 0) throw new Error(`no ${tag} ${name}`);
  const end = xml.indexOf(`</${tag}>`, start);
  return { start, end: end + tag.length + 3 };
}

/** Replaces within one element; `replace` must change it. */
export function within(xml: string, tag: 'EntityType' | 'EntitySet' | 'EnumType', name: string, replace: (text: string) => string): string {
  const { start, end } = element(xml, tag, name);
  const text = xml.slice(start, end);
  const changed = replace(text);
  if (changed === text) throw new Error(`the edit of ${tag} ${name} changed nothing`);
  return xml.slice(0, start) + changed + xml.slice(end);
}

/** The `<Property Name="…" …>` declaration of a field, changed by `edit` (its attributes as written). */
export function editProperty(xml: string, type: string, field: string, edit: (declaration: string) => string): string {
  return within(xml, 'EntityType', type, (text) => text.replace(new RegExp(`<Property Name="${field}"[^>]*>`), edit));
}

/** Removes a field's declaration (with its annotations) and every mention of it in its set's Capabilities. */
export function removeField(xml: string, type: string, set: string, field: string): string {
  return mentionsRemoved(removeDeclaration(xml, type, field), set, field);
}

/** Removes a field's declaration (with its annotations) from its entity type. */
export function removeDeclaration(xml: string, type: string, field: string): string {
  const declaration = new RegExp(`\\n\\s*<Property Name="${field}"[^>]*/>|\\n\\s*<Property Name="${field}"[^>]*[^/]>[\\s\\S]*?</Property>`);
  return within(xml, 'EntityType', type, (text) => text.replace(declaration, ''));
}

/** Makes a field filterable and sortable: its set's NonFilterable and NonSortable lists leave it out. */
export function makeQueryable(xml: string, set: string, field: string): string {
  return mentionsRemoved(xml, set, field);
}

/** Lists a field as NonFilterable and NonSortable on its set. */
export function makeUnqueryable(xml: string, set: string, field: string): string {
  return within(xml, 'EntitySet', set, (text) => text.replace(/(<PropertyValue Property="Non(?:Filterable|Sortable)Properties">\s*<Collection>)/g,
    `$1\n                  <PropertyPath>${field}</PropertyPath>`));
}

function mentionsRemoved(xml: string, set: string, field: string): string {
  return within(xml, 'EntitySet', set, (text) => text.replace(new RegExp(`\\n\\s*<PropertyPath>${field}</PropertyPath>`, 'g'), ''));
}

/** Adds members to a lookup (EnumType), in RESO's form: the member name and its StandardName. */
export function addLookupValue(xml: string, lookup: string, member: string, standardName: string): string {
  return within(xml, 'EnumType', lookup, (text) => text.replace(`</EnumType>`,
    `  <Member Name="${member}" Value="9${text.length}"><Annotation Term="RESO.OData.Metadata.StandardName" String="${standardName}"/></Member>\n      </EnumType>`));
}

export function removeLookupValue(xml: string, lookup: string, member: string): string {
  return within(xml, 'EnumType', lookup, (text) => text.replace(new RegExp(`\\n\\s*<Member Name="${member}"[^\\n]*</Member>`), ''));
}

/** Adds a field declaration at the end of an entity type's properties. */
export function addField(xml: string, type: string, declaration: string): string {
  return within(xml, 'EntityType', type, (text) => text.replace(/(\n\s*<NavigationProperty|\n\s*<\/EntityType>)/, `\n        ${declaration}$1`));
}

/**
 * Makes fields of a set filterable and sortable without an index: out of its NonFilterable and NonSortable lists,
 * and into a Policy.UnindexedProperties annotation on the set.
 */
export function makeUnindexed(xml: string, set: string, fields: readonly string[]): string {
  const queryable = fields.reduce((x, f) => makeQueryable(x, set, f), xml);
  const paths = fields.map((f) => `\n              <PropertyPath>${f}</PropertyPath>`).join('');
  return within(queryable, 'EntitySet', set, (text) => text.replace(/\n(\s*)<\/EntitySet>$/,
    `\n          <Annotation Term="Policy.UnindexedProperties">\n            <Collection>${paths}\n            </Collection>\n          </Annotation>\n$1</EntitySet>`));
}
