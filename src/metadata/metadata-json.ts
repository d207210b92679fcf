/** The metadata document as CSDL JSON (OData 4.01), members in the order the XML states them. */
import type { FieldSpec, NavigationPropertySpec } from '../model/service-model';
import { LOOKUP_NAME_TERM, UNINDEXED_TERM } from './terms';
import { declaresUnindexed, type MetadataView, type SetView } from './metadata-view';

const VOCABULARIES = 'https://oasis-tcs.github.io/odata-vocabularies/vocabularies';

type Json = Record<string, unknown>;

export function metadataJson(view: MetadataView): string {
  const schema: Json = {};
  for (const set of view.entitySets) schema[set.typeName] = entityType(set);
  Object.assign(schema, digestMembers(view));
  const { capabilities, core, lookupNames } = view.annotations;
  const container: Json = { $Kind: 'EntityContainer' };
  for (const set of view.entitySets) container[set.name] = entitySet(set, capabilities);
  if (capabilities) container['@Capabilities.BatchSupported'] = false;
  schema[view.containerName] = container;
  // JSON has no comments: the header is the schema's description, placed first so it opens the file.
  const doc = {
    $Version: '4.01',
    [view.namespace]: {
      ...(core ? { '@Core.Description': view.metadataHeader } : {}), ...(view.defaultNamespace ? { '@Core.DefaultNamespace': true } : {}), ...schema,
    },
    // A term's type defaults to Edm.String in CSDL JSON.
    ...(lookupNames ? { [LOOKUP_NAME_TERM.namespace]: { [LOOKUP_NAME_TERM.name]: { $Kind: 'Term' } } } : {}),
    ...(declaresUnindexed(view) ? { [UNINDEXED_TERM.namespace]: { [UNINDEXED_TERM.name]: unindexedTerm() } } : {}),
    $EntityContainer: `${view.namespace}.${view.containerName}`,
    $Reference: {
      [`${VOCABULARIES}/Org.OData.Core.V1.json`]: { $Include: [{ $Namespace: 'Org.OData.Core.V1', $Alias: 'Core' }] },
      [`${VOCABULARIES}/Org.OData.Capabilities.V1.json`]: { $Include: [{ $Namespace: 'Org.OData.Capabilities.V1', $Alias: 'Capabilities' }] },
    },
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

function entityType(set: SetView): Json {
  const type: Json = { $Kind: 'EntityType', $Key: [set.key] };
  for (const f of set.fields) type[f.name] = property(f);
  for (const n of set.navigationProperties) type[n.name] = navigationProperty(n);
  return type;
}

/** Members at their CSDL JSON defaults (Edm.String, not nullable, single-valued) are left out. */
function property(f: FieldSpec): Json {
  const p: Json = {};
  if (f.collection) p.$Collection = true;
  if (f.type !== 'Edm.String') p.$Type = f.type;
  // A collection's items are never null (templates/metadata.xml.hbs says why).
  if (f.nullable && !f.collection) p.$Nullable = true;
  if (f.maxLength !== undefined) p.$MaxLength = f.maxLength;
  if (f.precision !== undefined) p.$Precision = f.precision;
  if (f.scale !== undefined) p.$Scale = f.scale;
  if (f.lookupName) p[`@${LOOKUP_NAME_TERM.qualified}`] = f.lookupName;
  return p;
}

/** A single-valued navigation is nullable: the XML does not say otherwise, and its default there is nullable. */
function navigationProperty(n: NavigationPropertySpec): Json {
  const collection = n.type.startsWith('Collection(') && n.type.endsWith(')');
  const nav: Json = { $Kind: 'NavigationProperty' };
  if (collection) nav.$Collection = true;
  nav.$Type = collection ? n.type.slice('Collection('.length, -1) : n.type;
  if (!collection) nav.$Nullable = true;
  if (n.partner) nav.$Partner = n.partner;
  if (n.constraint) nav.$ReferentialConstraint = { [n.constraint.property]: n.constraint.referencedProperty };
  return nav;
}

function entitySet(set: SetView, capabilities: boolean): Json {
  const out: Json = { $Collection: true, $Type: set.entityType };
  if (set.bindings.length > 0) out.$NavigationPropertyBinding = Object.fromEntries(set.bindings.map((b) => [b.path, b.target]));
  return capabilities ? { ...out, ...capabilitiesOf(set) } : out;
}

function capabilitiesOf(set: SetView): Json {
  const out: Json = {};
  out['@Capabilities.FilterRestrictions'] = { NonFilterableProperties: set.nonFilterable };
  out['@Capabilities.SortRestrictions'] = { NonSortableProperties: set.nonSortable };
  if (set.unindexed.length > 0) out[`@${UNINDEXED_TERM.qualified}`] = set.unindexed;
  if (set.nonExpandable.length > 0) out['@Capabilities.ExpandRestrictions'] = { NonExpandableProperties: set.nonExpandable };
  if (set.nonNavigable.length > 0) {
    out['@Capabilities.NavigationRestrictions'] = {
      RestrictedProperties: set.nonNavigable.map((n) => ({ NavigationProperty: n, Navigability: 'None' })),
    };
  }
  out['@Capabilities.SkipSupported'] = set.skipSupported === true;
  out['@Capabilities.InsertRestrictions'] = { Insertable: false };
  out['@Capabilities.UpdateRestrictions'] = { Updatable: false };
  out['@Capabilities.DeleteRestrictions'] = { Deletable: false };
  return out;
}

function unindexedTerm(): Json {
  return { $Kind: 'Term', $Collection: true, $Type: 'Edm.PropertyPath', $AppliesTo: ['EntitySet'], '@Core.Description': UNINDEXED_TERM.description };
}

/** The digest's complex types and its function's overloads, one per set (templates/metadata.xml.hbs says more). */
function digestMembers(view: MetadataView): Json {
  const out: Json = {};
  for (const r of view.digestRanges) {
    const key = typed(r.keyType, { $Nullable: true });
    out[r.name] = { $Kind: 'ComplexType', From: key, To: key, Count: { $Type: 'Edm.Int64' }, Hash: { $MaxLength: 16 } };
  }
  const optional = (p: Json, annotation: Json = {}) => (view.annotations.core ? { ...p, '@Core.OptionalParameter': annotation } : p);
  const overloads = view.entitySets.flatMap((set) => (set.digest ? [{
    $Kind: 'Function',
    $IsBound: true,
    $Parameter: [
      { $Name: 'Records', $Type: set.entityType, $Collection: true },
      optional({ $Name: 'From', ...typed(set.digest.keyType, { $Nullable: true }) }),
      optional({ $Name: 'To', ...typed(set.digest.keyType, { $Nullable: true }) }),
      optional({ $Name: 'Parts', $Type: 'Edm.Int32', $Nullable: true }, { DefaultValue: String(view.digestFunction.defaultParts) }),
    ],
    $ReturnType: { $Collection: true, $Type: `${view.namespace}.${set.digest.rangeType}` },
  }] : []));
  if (overloads.length) out[view.digestFunction.name] = overloads;
  return out;
}

/** `$Type` unless it is CSDL JSON's default, Edm.String. */
function typed(type: string, rest: Json): Json {
  return type === 'Edm.String' ? rest : { $Type: type, ...rest };
}
