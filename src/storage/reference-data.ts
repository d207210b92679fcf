/**
 * Keeps the Lookup and Field resources equal to the dictionary: rows are generated from the service model,
 * written only when they differ from what is stored, so their ModificationTimestamp moves only on change.
 */
import type { ServiceModel } from '../model/service-model';
import type { ListingService } from '../service';

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

export async function syncReferenceData(service: ListingService): Promise<void> {
  const sets = [
    { name: 'Lookup', rows: lookupRows(service.model) },
    { name: 'Field', rows: fieldRows(service.model) },
  ];
  for (const { name, rows } of sets) {
    const set = service.model.entitySets.find((s) => s.name === name);
    if (!set) continue;
    // Only the fields this resource declares; a dictionary may declare fewer than RESO's.
    const declared = rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => set.fieldsByName[k])));
    if (!declared.every((r) => r[set.key])) continue;
    const store = service.store(set);
    // Bounded by the dictionary's size, not by data: a whole read is fine here.
    const stored = new Map((await store.all()).map((rec) => [String(rec[set.key]), rec]));
    const now = new Date().toISOString();
    const changed = declared.filter((r) => {
      const old = stored.get(r[set.key]);
      return !old || Object.entries(r).some(([k, v]) => old[k] !== v);
    });
    const gone = [...stored.keys()].filter((k) => !declared.some((r) => r[set.key] === k));
    if (changed.length === 0 && gone.length === 0) continue;
    await service.db.transaction(async (tx) => {
      await store.upsert(tx, changed.map((r) => store.encode({ ...r, ModificationTimestamp: now })));
      await store.deleteByKeys(tx, gone);
    });
  }
}
