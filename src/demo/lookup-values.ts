/** The lookup values of the model, by lookup name: what a lookup field's values are drawn from and checked against. */
import type { LookupSpec } from '../model/service-model';

export class LookupValues {
  private readonly values = new Map<string, readonly string[]>();
  private readonly sets = new Map<string, ReadonlySet<string>>();

  constructor(lookups: readonly LookupSpec[]) {
    for (const l of lookups) {
      const values = l.values.map((v) => v.value);
      this.values.set(l.name, values);
      this.sets.set(l.name, new Set(values));
    }
  }

  /** The values to draw from; undefined for no lookup, an open one (its values not in the model) or an empty one. */
  of(name: string | undefined): readonly string[] | undefined {
    const v = name === undefined ? undefined : this.values.get(name);
    return v && v.length ? v : undefined;
  }

  /** The values a field of the lookup may hold (the store refuses others); undefined when any string will do. */
  allowed(name: string | undefined): ReadonlySet<string> | undefined {
    return name === undefined ? undefined : this.sets.get(name);
  }
}
