/** The metadata document as EDMX 4.0 XML: one element per line, two spaces of indent per level. */
import type { FieldSpec, NavigationPropertySpec } from '../model/service-model';
import { LOOKUP_NAME_TERM, type MetadataView, type SetView } from './render-metadata';

const VOCABULARIES = 'https://oasis-tcs.github.io/odata-vocabularies/vocabularies';
const EDMX = 'http://docs.oasis-open.org/odata/ns/edmx';
const EDM = 'http://docs.oasis-open.org/odata/ns/edm';

export function metadataXml(view: MetadataView): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<!-- ${comment(view.metadataHeader)} -->`,
    `<edmx:Edmx Version="4.01" xmlns:edmx="${EDMX}">`,
    ...reference('Org.OData.Core.V1', 'Core'),
    ...reference('Org.OData.Capabilities.V1', 'Capabilities'),
    '  <edmx:DataServices>',
    `    <Schema Namespace="${attr(view.namespace)}" xmlns="${EDM}">`,
    ...indent(3, view.entitySets.flatMap(entityType)),
    `      <EntityContainer Name="${attr(view.containerName)}">`,
    ...indent(4, view.entitySets.flatMap(entitySet)),
    '        <Annotation Term="Capabilities.BatchSupported" Bool="false"/>',
    '      </EntityContainer>',
    '    </Schema>',
    // RESO publishes no vocabulary document for its term; declaring it here lets clients resolve every annotation.
    `    <Schema Namespace="${LOOKUP_NAME_TERM.namespace}" xmlns="${EDM}">`,
    `      <Term Name="${LOOKUP_NAME_TERM.name}" Type="Edm.String"/>`,
    '    </Schema>',
    '  </edmx:DataServices>',
    '</edmx:Edmx>',
  ];
  return `${lines.join('\n')}\n`;
}

function reference(namespace: string, alias: string): string[] {
  return [
    `  <edmx:Reference Uri="${VOCABULARIES}/${namespace}.xml">`,
    `    <edmx:Include Namespace="${namespace}" Alias="${alias}"/>`,
    '  </edmx:Reference>',
  ];
}

function entityType(set: SetView): string[] {
  return [
    `<EntityType Name="${attr(set.typeName)}">`,
    '  <Key>',
    `    <PropertyRef Name="${attr(set.key)}"/>`,
    '  </Key>',
    ...indent(1, set.fields.flatMap(property)),
    ...indent(1, set.navigationProperties.flatMap(navigationProperty)),
    '</EntityType>',
  ];
}

function property(f: FieldSpec): string[] {
  const open = `<Property Name="${attr(f.name)}" Type="${f.collection ? `Collection(${f.type})` : f.type}"${facets(f)}`;
  if (!f.lookupName) return [`${open}/>`];
  return [`${open}>`, `  <Annotation Term="${LOOKUP_NAME_TERM.qualified}" String="${attr(f.lookupName)}"/>`, '</Property>'];
}

function facets(f: FieldSpec): string {
  let out = '';
  // On a collection, Nullable is about its items, which are never null (a record stores none; an absent
  // collection is []): stated, since a collection without it leaves clients no default (CSDL 4.01 §7.2.1).
  if (!f.nullable || f.collection) out += ' Nullable="false"';
  if (f.maxLength !== undefined) out += ` MaxLength="${f.maxLength}"`;
  if (f.precision !== undefined) out += ` Precision="${f.precision}"`;
  if (f.scale !== undefined) out += ` Scale="${f.scale}"`;
  return out;
}

function navigationProperty(n: NavigationPropertySpec): string[] {
  const open = `<NavigationProperty Name="${attr(n.name)}" Type="${attr(n.type)}"${n.partner ? ` Partner="${attr(n.partner)}"` : ''}`;
  if (!n.constraint) return [`${open}/>`];
  const { property: p, referencedProperty: r } = n.constraint;
  return [`${open}>`, `  <ReferentialConstraint Property="${attr(p)}" ReferencedProperty="${attr(r)}"/>`, '</NavigationProperty>'];
}

function entitySet(set: SetView): string[] {
  return [
    `<EntitySet Name="${attr(set.name)}" EntityType="${attr(set.entityType)}">`,
    ...set.bindings.map((b) => `  <NavigationPropertyBinding Path="${attr(b.path)}" Target="${attr(b.target)}"/>`),
    ...indent(1, restriction('Capabilities.FilterRestrictions', 'NonFilterableProperties', set.nonFilterable)),
    ...indent(1, restriction('Capabilities.SortRestrictions', 'NonSortableProperties', set.nonSortable)),
    ...indent(1, closedNavigations(set.closedNavigations)),
    // On each set, where the term applies (clients do not read it on the container).
    `  <Annotation Term="Capabilities.SkipSupported" Bool="${set.skipSupported === true}"/>`,
    ...indent(1, READ_ONLY.flatMap(([term, property]) => [
      `<Annotation Term="${term}">`,
      '  <Record>',
      `    <PropertyValue Property="${property}" Bool="false"/>`,
      '  </Record>',
      '</Annotation>',
    ])),
    '</EntitySet>',
  ];
}

const READ_ONLY = [
  ['Capabilities.InsertRestrictions', 'Insertable'],
  ['Capabilities.UpdateRestrictions', 'Updatable'],
  ['Capabilities.DeleteRestrictions', 'Deletable'],
] as const;

/** Navigations the service refuses: neither expandable nor navigable, so clients are not offered them. */
function closedNavigations(names: readonly string[]): string[] {
  if (names.length === 0) return [];
  return [
    ...restriction('Capabilities.ExpandRestrictions', 'NonExpandableProperties', names, 'NavigationPropertyPath'),
    '<Annotation Term="Capabilities.NavigationRestrictions">',
    '  <Record>',
    '    <PropertyValue Property="RestrictedProperties">',
    '      <Collection>',
    ...names.flatMap((n) => [
      '        <Record>',
      `          <PropertyValue Property="NavigationProperty" NavigationPropertyPath="${attr(n)}"/>`,
      '          <PropertyValue Property="Navigability" EnumMember="Capabilities.NavigationType/None"/>',
      '        </Record>',
    ]),
    '      </Collection>',
    '    </PropertyValue>',
    '  </Record>',
    '</Annotation>',
  ];
}

function restriction(term: string, property: string, paths: readonly string[], pathKind = 'PropertyPath'): string[] {
  return [
    `<Annotation Term="${term}">`,
    '  <Record>',
    `    <PropertyValue Property="${property}">`,
    '      <Collection>',
    ...paths.map((p) => `        <${pathKind}>${text(p)}</${pathKind}>`),
    '      </Collection>',
    '    </PropertyValue>',
    '  </Record>',
    '</Annotation>',
  ];
}

function indent(levels: number, lines: string[]): string[] {
  const pad = '  '.repeat(levels);
  return lines.map((l) => pad + l);
}

function text(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function attr(s: string): string {
  return text(s).replace(/"/g, '&quot;');
}

/** A comment may not contain `--`. */
function comment(s: string): string {
  return s.replace(/--/g, '- -');
}
