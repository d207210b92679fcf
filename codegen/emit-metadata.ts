/**
 * generated/metadata.xml and metadata.json: the full documents, rendered by the runtime's own renderer from
 * the same statements the field tables carry, so a client's view rendered at run time matches them.
 */
import type { NavigationPropertySpec } from '../src/model/service-model';
import { MetadataModel, renderMetadata } from '../src/metadata/render-metadata';
import type { BuiltModel } from './build-model';
import type { BuiltEntitySet } from './built-entity-set';
import type { EmittedFile } from './emitted-file';
import type { EmitContext } from './typescript-source';

export function emitMetadata(model: BuiltModel, context: EmitContext): EmittedFile[] {
  const { xml, json } = renderMetadata(metadataModel(model, context.header));
  return [{ path: 'metadata.xml', text: xml }, { path: 'metadata.json', text: json }];
}

function metadataModel(model: BuiltModel, header: string): MetadataModel {
  return {
    namespace: model.namespace,
    containerName: model.containerName,
    metadataHeader: header,
    entitySets: model.entitySets.map((s) => ({ ...s, navigationProperties: navigationPropertiesOf(s), bindings: s.setDef.bindings })),
  };
}

/** The navigation properties of a set's entity type as declared; the field tables carry the same list. */
export function navigationPropertiesOf(set: BuiltEntitySet): NavigationPropertySpec[] {
  return set.typeDef.navigations.map(({ name, type, partner, constraint }) => ({
    name,
    type,
    ...(partner ? { partner } : {}),
    ...(constraint ? { constraint: { property: constraint.property, referencedProperty: constraint.referencedProperty } } : {}),
  }));
}
