/**
 * Keeps the sets that describe the dictionary (RESO's Lookup and Field resources, by the dictionary's
 * DescribesDictionary policy) equal to it: rows are generated from the service model, written only when
 * they differ from what is stored, so their change timestamp moves only on change.
 */
import type { DictionaryRowsSpec, ServiceModel } from '../../model/service-model';
import type { RecordStores } from './record-stores';
import type { RecordWriter } from './record-writer';

type Row = Record<string, string>;

/** The dictionary's rows for a set that describes it, each part under the field the dictionary maps it to. */
export function dictionaryRows(model: ServiceModel, spec: DictionaryRowsSpec): Row[] {
  const row = (parts: Record<string, string>): Row =>
    Object.fromEntries(Object.entries(parts).flatMap(([part, v]) => {
      const field = (spec.fields as Record<string, string | undefined>)[part];
      return field ? [[field, v]] : [];
    }));
  if (spec.kind === 'lookups') {
    return model.lookups.flatMap((l) => l.values.map((v) => row({
      key: `${l.name}.${v.legacyODataValue}`,
      lookupName: l.name,
      value: v.value,
      standardValue: v.value,
      legacyValue: v.legacyODataValue,
    })));
  }
  return model.entitySets.flatMap((s) => s.fields.map((f) => row({ key: `${s.name}.${f.name}`, resourceName: s.name, fieldName: f.name })));
}

export async function syncReferenceData(model: ServiceModel, stores: RecordStores, writer: RecordWriter): Promise<void> {
  for (const set of model.entitySets) {
    if (!set.dictionaryRows) continue;
    // Only the fields this resource declares (the generator mapped those); a dictionary may declare fewer than RESO's.
    const declared = dictionaryRows(model, set.dictionaryRows);
    const store = stores.store(set);
    // Bounded by the dictionary's size, not by data: a whole read is fine here.
    const stored = new Map((await store.all()).map((rec) => [String(rec[set.key]), rec]));
    const changed = declared.filter((r) => {
      const old = stored.get(r[set.key]);
      return !old || Object.entries(r).some(([k, v]) => old[k] !== v);
    });
    const gone = [...stored.keys()].filter((k) => !declared.some((r) => r[set.key] === k));
    if (changed.length === 0 && gone.length === 0) continue;
    await writer.transaction(async (tx) => {
      // The service's clock, like every other write: a replicating client's mark never skips these rows.
      const now = await tx.modificationTime();
      await tx.upsert(set, changed.map((r) => store.encode({ ...r, ...(set.changeTimestamp ? { [set.changeTimestamp]: now } : {}) })));
      await tx.deleteByKeys(set, gone);
    });
  }
}
