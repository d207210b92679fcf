/**
 * The published metadata document, XML and CSDL JSON, written from the built model.
 * It states what the runtime enforces: the filterable/sortable policy in the Capabilities vocabulary
 * and $skip as unsupported. The dictionary's own policy terms (restricted fields, path aliases) stay private.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import type { FieldSpec } from '../src/model/service-model';
import type { BuiltEntitySet, BuiltModel } from './build-model';

const CORE_URI = 'https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Core.V1';
const CAPABILITIES_URI = 'https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Capabilities.V1';

function typeName(f: FieldSpec): string {
  return f.collection ? `Collection(${f.type})` : f.type;
}

/** Entity types in the order of their sets; one type may back only one set here. */
function entityTypesOf(model: BuiltModel): BuiltEntitySet[] {
  return model.entitySets;
}

export function metadataXml(model: BuiltModel, header: string): string {
  const template = Handlebars.compile(readFileSync(join(__dirname, '../../codegen/templates/metadata.xml.hbs'), 'utf8'), {
    noEscape: false,
    strict: true,
  });
  const ns = model.namespace;
  return template({
    header: xmlComment(header),
    namespace: ns,
    containerName: model.containerName,
    entityTypes: entityTypesOf(model).map((s) => ({
      name: s.typeDef.name,
      key: s.key,
      properties: s.fields.map((f) => ({
        name: f.name,
        type: typeName(f),
        lookupName: f.lookupName ?? '',
        facets: xmlFacets(f),
      })),
      navigations: s.typeDef.navigations.map((n) => ({
        name: n.name,
        type: n.type,
        partner: n.partner ?? '',
        constraint: n.constraint ?? false,
      })),
    })),
    entitySets: model.entitySets.map((s) => ({
      name: s.name,
      entityType: `${ns}.${s.typeDef.name}`,
      bindings: s.setDef.bindings,
      nonFilterable: s.fields.filter((f) => !f.filterable).map((f) => f.name),
      nonSortable: s.fields.filter((f) => !f.sortable).map((f) => f.name),
    })),
    skipSupported: model.dictionary.skipSupported ? 'true' : 'false',
  });
}

function xmlFacets(f: FieldSpec): string {
  let out = '';
  if (!f.nullable) out += ' Nullable="false"';
  if (f.maxLength !== undefined) out += ` MaxLength="${f.maxLength}"`;
  if (f.precision !== undefined) out += ` Precision="${f.precision}"`;
  if (f.scale !== undefined) out += ` Scale="${f.scale}"`;
  return out;
}

function xmlComment(text: string): string {
  return text.replace(/--/g, '- -');
}

export function metadataJson(model: BuiltModel, header: string): string {
  const ns = model.namespace;
  const schema: Record<string, unknown> = {};
  for (const s of entityTypesOf(model)) {
    const type: Record<string, unknown> = { $Kind: 'EntityType', $Key: [s.key] };
    for (const f of s.fields) {
      const p: Record<string, unknown> = {};
      if (f.collection) p.$Collection = true;
      if (f.type !== 'Edm.String') p.$Type = f.type;
      if (f.nullable) p.$Nullable = true;
      if (f.maxLength !== undefined) p.$MaxLength = f.maxLength;
      if (f.precision !== undefined) p.$Precision = f.precision;
      if (f.scale !== undefined) p.$Scale = f.scale;
      if (f.lookupName) p['@RESO.OData.Metadata.LookupName'] = f.lookupName;
      type[f.name] = p;
    }
    for (const n of s.typeDef.navigations) {
      const collection = n.type.startsWith('Collection(');
      const nav: Record<string, unknown> = { $Kind: 'NavigationProperty' };
      if (collection) nav.$Collection = true;
      nav.$Type = collection ? n.type.slice('Collection('.length, -1) : n.type;
      if (!collection) nav.$Nullable = true;
      if (n.partner) nav.$Partner = n.partner;
      if (n.constraint) nav.$ReferentialConstraint = { [n.constraint.property]: n.constraint.referencedProperty };
      type[n.name] = nav;
    }
    schema[s.typeDef.name] = type;
  }
  const container: Record<string, unknown> = { $Kind: 'EntityContainer' };
  for (const s of model.entitySets) {
    const set: Record<string, unknown> = { $Collection: true, $Type: `${ns}.${s.typeDef.name}` };
    if (s.setDef.bindings.length > 0) set.$NavigationPropertyBinding = Object.fromEntries(s.setDef.bindings.map((b) => [b.path, b.target]));
    set['@Capabilities.FilterRestrictions'] = { NonFilterableProperties: s.fields.filter((f) => !f.filterable).map((f) => f.name) };
    set['@Capabilities.SortRestrictions'] = { NonSortableProperties: s.fields.filter((f) => !f.sortable).map((f) => f.name) };
    container[s.name] = set;
  }
  container['@Capabilities.SkipSupported'] = model.dictionary.skipSupported;
  schema[model.containerName] = container;
  // JSON has no comments: the header is the schema's description, placed first so it opens the file.
  const doc = {
    $Version: '4.01',
    [ns]: { '@Core.Description': header, ...schema },
    $EntityContainer: `${ns}.${model.containerName}`,
    $Reference: {
      [`${CORE_URI}.json`]: { $Include: [{ $Namespace: 'Org.OData.Core.V1', $Alias: 'Core' }] },
      [`${CAPABILITIES_URI}.json`]: { $Include: [{ $Namespace: 'Org.OData.Capabilities.V1', $Alias: 'Capabilities' }] },
    },
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
