/** The record store of each entity set of the model, over one database. */
import type { EntitySetSpec, ServiceModel } from '../../model/service-model';
import type { Database } from '../db/database';
import { RecordStore } from './record-store';
import type { RecordCache } from './record-cache';

/** What reads and writes records needs: the store of a set. */
export interface RecordStores {
  store(set: EntitySetSpec | string): RecordStore;
}

/** `cache`: one for every set's records (their bytes by revision), or none. */
export function recordStores(model: ServiceModel, db: Database, cache?: RecordCache): RecordStores {
  const tables = new Map(model.tables.map((t) => [t.name, t]));
  const stores = new Map(model.entitySets.map((s) => [s.name, new RecordStore(db, s, tables.get(s.table)!, model.lookups, cache)]));
  return {
    store(set: EntitySetSpec | string): RecordStore {
      const name = typeof set === 'string' ? set : set.name;
      const s = stores.get(name);
      if (!s) throw new Error(`no entity set ${name}`);
      return s;
    },
  };
}
