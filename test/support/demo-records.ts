/** Demo data as the demo hands it to the record stores, and the records its sets' generated schemas refuse. */
import { seedDemoData, SeedOptions, SeedSummary } from '../../src/demo/demo-data';
import { problemsText, recordCheck } from '../../src/ingest/line-check';
import type { ServiceModel } from '../../src/model/service-model';
import type { ListingService } from '../../src/process/service';
import type { Rec } from './next-links';

/** Seeds through the service's own stores, keeping every record as handed to them (before the codec normalises it). */
export async function seedCapturing(service: ListingService, options: SeedOptions): Promise<{ summary: SeedSummary; written: Map<string, Rec[]> }> {
  const written = new Map<string, Rec[]>();
  const stores: ListingService['stores'] = {
    store: (set) => {
      const store = service.store(set);
      const seen = written.get(store.set.name) ?? written.set(store.set.name, []).get(store.set.name)!;
      return Object.assign(Object.create(store), { encode: (r: Rec) => { seen.push(r); return store.encode(r); } });
    },
  };
  const summary = await seedDemoData({ model: service.model, stores, writer: service.writer, db: service.db }, options);
  return { summary, written };
}

/** Each record, by set, that its set's generated schema refuses, with the schema's words. */
export function schemaProblems(model: ServiceModel, records: Iterable<readonly [string, readonly Rec[]]>): string[] {
  const problems: string[] = [];
  for (const [name, list] of records) {
    const set = model.entitySets.find((s) => s.name === name)!;
    const valid = recordCheck(set, model.recordSchemas[name]);
    for (const r of list) {
      const found = valid(r);
      if (found.length) problems.push(`${name} ${r[set.key]}: ${problemsText(found)}`);
    }
  }
  return problems;
}
