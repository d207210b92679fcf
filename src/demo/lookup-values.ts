/** The lookup values of the model, by lookup name: what a lookup field's values are drawn from and checked against. */
import { lookupValueSets, type LookupValueSets } from '../model/field-facets';
import type { LookupSpec } from '../model/service-model';

export class LookupValues {
  private readonly values = new Map<string, readonly string[]>();
  /** The values a field of each lookup may hold (the store refuses others), as field facets read them. */
  readonly valueSets: LookupValueSets;

  constructor(lookups: readonly LookupSpec[]) {
    for (const l of lookups) this.values.set(l.name, l.values.map((v) => v.value));
    this.valueSets = lookupValueSets(lookups);
  }

  /** The values to draw from; undefined for no lookup, an open one (its values not in the model) or an empty one. */
  of(name: string | undefined): readonly string[] | undefined {
    const v = name === undefined ? undefined : this.values.get(name);
    return v && v.length ? v : undefined;
  }
}
