/**
 * Keeps the Lookup and Field resources equal to the dictionary: rows are generated from the service model,
 * written only when they differ from what is stored, so their ModificationTimestamp moves only on change.
 */
import type { ServiceModel } from '../model/service-model';
import { RECORD_COLUMN } from '../model/service-model';
import type { Database } from './database';
import type { RecordStores } from './record-stores';

type Row = Record<string, string>;

export function lookupRows(model: ServiceModel): Row[] {
  return model.lookups.flatMap((l) => l.values.map((v) => ({
    LookupKey: `${l.name}.${v.legacyODataValue}`,
    LookupName: l.name,
    LookupValue: v.value,
    StandardLookupValue: v.value,
    LegacyODataValue: v.legacyODataValue,
  })));
}

export function fieldRows(model: ServiceModel): Row[] {
  return model.entitySets.flatMap((s) => s.fields.map((f) => ({
    FieldKey: `${s.name}.${f.name}`,
    ResourceName: s.name,
    FieldName: f.name,
  })));
}

export async function syncReferenceData(model: ServiceModel, stores: RecordStores, db: Database): Promise<void> {
  const sets = [
    { name: 'Lookup', rows: lookupRows(model) },
    { name: 'Field', rows: fieldRows(model) },
  ];
  for (const { name, rows } of sets) {
    const set = model.entitySets.find((s) => s.name === name);
    if (!set) continue;
    // Only the fields this resource declares; a dictionary may declare fewer than RESO's.
    const declared = rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => set.fieldsByName[k])));
    if (!declared.every((r) => r[set.key])) continue;
    const store = stores.store(set);
    const stored = new Map<string, Record<string, unknown>>();
    // Bounded by the dictionary's size, not by data: a whole read is fine here.
    const selectAll = db.sql(set.table).select(RECORD_COLUMN).toSQL().toNative().sql;
    for (const row of await db.all(selectAll)) {
      const rec = JSON.parse(row[RECORD_COLUMN] as string) as Record<string, unknown>;
      stored.set(String(rec[set.key]), rec);
    }
    const now = new Date().toISOString();
    const changed = declared.filter((r) => {
      const old = stored.get(r[set.key]);
      return !old || Object.entries(r).some(([k, v]) => old[k] !== v);
    });
    const gone = [...stored.keys()].filter((k) => !declared.some((r) => r[set.key] === k));
    if (changed.length === 0 && gone.length === 0) continue;
    const deleteSql = db.sql(set.table).where(set.key, '').del().toSQL().toNative().sql;
    await db.transaction(async (tx) => {
      await store.upsert(tx, changed.map((r) => store.encode({ ...r, ModificationTimestamp: now })));
      for (const key of gone) await tx.run(deleteSql, [key]);
    });
  }
}
