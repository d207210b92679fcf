/**
 * RESO's Lookup resource where its rows are data, not the dictionary (no Policy.DescribesDictionary: RESO's
 * string-lookup flavour, whose values the dictionary does not hold): the demo adds a row for each value of a lookup
 * that its records hold, so that a client reading a lookup's values (`Lookup?$filter=LookupName eq 'StandardStatus'`,
 * as RESO's clients and its certification tool do) finds every value the data uses, as an MLS's own rows would.
 */
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import { HISTORY_START, when } from './calendar';
import { mixSeed, saltOf, SeededRandom } from './random';
import type { DemoRecord, RecordBuilder } from './record-builder';
import { LOOKUP_RESOURCE, MODIFICATION_TIMESTAMP } from './standard-names';
import { PLACES } from './vocabulary';

/** Distinct values kept per lookup: what the demo's records hold is bounded by its vocabulary; this bounds the rest. */
const MAX_VALUES = 1000;

export class LookupRows {
  /** The lookup fields of each set: field name → lookup name. */
  private readonly lookupFields = new Map<string, readonly (readonly [string, string])[]>();
  /** Values held, by lookup name (in the order first seen). */
  private readonly held = new Map<string, Set<string>>();

  private constructor(private readonly builder: RecordBuilder, model: Pick<ServiceModel, 'entitySets'>) {
    for (const s of model.entitySets) {
      const fields = s.fields.filter((f) => f.lookupName && f.type === 'Edm.String').map((f) => [f.name, f.lookupName!] as const);
      if (fields.length) this.lookupFields.set(s.name, fields);
    }
  }

  /**
   * For a model with RESO's Lookup set (by its name and fields) whose rows are not the dictionary's; `builder` makes
   * that set's records.
   */
  static of(model: Pick<ServiceModel, 'entitySets'>, builder: (set: EntitySetSpec) => RecordBuilder): LookupRows | undefined {
    const set = model.entitySets.find((s) => s.name === LOOKUP_RESOURCE.set);
    const text = (name: string) => set?.fieldsByName[name]?.type === 'Edm.String' && !set.fieldsByName[name].collection;
    if (!set || set.dictionaryRows || set.changeLog || !text(set.key) || !text(LOOKUP_RESOURCE.name) || !text(LOOKUP_RESOURCE.value)) return undefined;
    return new LookupRows(builder(set), model);
  }

  get set(): EntitySetSpec {
    return this.builder.set;
  }

  /** Notes the lookup values `records` of `set` hold. */
  note(set: string, records: readonly DemoRecord[]): void {
    const fields = this.lookupFields.get(set);
    if (!fields) return;
    for (const r of records) {
      for (const [field, lookup] of fields) {
        const v = r[field];
        if (v === undefined || v === null) continue;
        let values = this.held.get(lookup);
        if (!values) this.held.set(lookup, values = new Set());
        for (const value of Array.isArray(v) ? v : [v]) if (typeof value === 'string' && values.size < MAX_VALUES) values.add(value);
      }
    }
  }

  /** A row per lookup value noted, in lookup name and value order; keyed `<LookupName>.<value>` where the key holds it. */
  rows(seed: number): DemoRecord[] {
    const rng = new SeededRandom(mixSeed(seed, 0, saltOf(this.set.name)));
    const key = this.set.key;
    const ctx = { rng, place: PLACES[0], from: HISTORY_START, to: HISTORY_START };
    const rows: DemoRecord[] = [];
    for (const lookup of [...this.held.keys()].sort()) {
      for (const value of [...this.held.get(lookup)!].sort()) {
        const given: DemoRecord = {
          [key]: `${lookup}.${value}`,
          [LOOKUP_RESOURCE.name]: lookup,
          [LOOKUP_RESOURCE.value]: value,
          [LOOKUP_RESOURCE.standardValue]: value,
          [MODIFICATION_TIMESTAMP]: when(HISTORY_START),
        };
        if (this.set.changeTimestamp) given[this.set.changeTimestamp] = given[MODIFICATION_TIMESTAMP];
        if (!this.builder.holdsExactly(key, given[key])) continue;
        // Only what is given: RESO's other Lookup fields (LegacyODataValue) left empty where they may be.
        rows.push(this.builder.build(given, ctx, { nullShare: 1, emptyShare: 1 }));
      }
    }
    return rows;
  }
}
