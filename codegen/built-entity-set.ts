/**
 * One entity set as the model builder (build-model.ts) makes it: the dictionary's definitions beside the field
 * tables, navigations and policy the runtime gets. Its own module so that the builder's parts (value tables,
 * container checks, change logs) and the emitters share it without importing the builder.
 */
import type {
  ChangeLogSpec, DictionaryRowsSpec, FieldCondition, FieldNamesSpec, FieldSpec, NavigationSpec, RelatedTimestampSpec,
} from '../src/model/service-model';
import type { EntitySetDef, EntityTypeDef } from './dictionary-defs';

export interface BuiltEntitySet {
  name: string;
  entityType: string;
  typeDef: EntityTypeDef;
  setDef: EntitySetDef;
  pathAliases: string[];
  key: string;
  defaultOrder: string[];
  changeTimestamp?: string;
  listingRoot?: true;
  deletedWhen?: FieldCondition;
  relatedTimestamps?: RelatedTimestampSpec[];
  dictionaryRows?: DictionaryRowsSpec;
  namesFields?: FieldNamesSpec;
  namesLookups?: string;
  skipSupported?: true;
  changeLog?: ChangeLogSpec;
  pagedByTop?: true;
  /** Columns stored for a residual check only (join discriminators, licences' name checks), which get no index. */
  unindexedColumns?: Set<string>;
  table: string;
  fields: FieldSpec[];
  navigations: NavigationSpec[];
}
