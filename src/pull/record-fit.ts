/**
 * An upstream's record made into an ingest line of the local set: annotations and navigation properties left
 * out, fields the local dictionary lacks dropped (each named once, by `onDropped`). Values are left to ingest's
 * check, which rejects a record whose values do not fit with its reason.
 */
import type { EntitySetSpec } from '../model/service-model';

export type FittedRecord =
  | { readonly input: Record<string, unknown>; readonly key: string | number; readonly problem?: undefined }
  | { readonly problem: string; readonly input?: undefined };

export class RecordFit {
  private readonly dropped = new Set<string>();
  private readonly navigations: ReadonlySet<string>;

  constructor(private readonly set: EntitySetSpec, private readonly onDropped: (field: string) => void) {
    this.navigations = new Set(set.navigationProperties.map((n) => n.name));
  }

  fit(record: Readonly<Record<string, unknown>>): FittedRecord {
    const key = record[this.set.key];
    if (typeof key !== 'string' && typeof key !== 'number') return { problem: `a record without its key ${this.set.key}` };
    const input: Record<string, unknown> = {};
    for (const field in record) {
      const value = record[field];
      if (field.includes('@') || this.navigations.has(field)) continue;
      if (this.set.fieldsByName[field]) input[field] = value;
      else if (!this.dropped.has(field)) {
        this.dropped.add(field);
        this.onDropped(field);
      }
    }
    return { input, key };
  }
}
