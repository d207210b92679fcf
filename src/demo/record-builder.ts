/**
 * Builds the records of one entity set from the dictionary alone: every declared field considered, in declaration
 * order. The demo's story gives values for the fields it knows by name (a plain record keyed by field name); each is
 * taken when it fits the field as declared (field-fit.ts), and every other field gets a generic value for its type and
 * name (generic-values.ts) or, when nullable, sometimes none.
 */
import type { EntitySetSpec, FieldSpec, TableSpec } from '../model/service-model';
import { fieldFacets } from '../model/field-facets';
import { GenericFit, genericFitter, GivenFit, givenFitter, NO_FIT } from './field-fit';
import { FieldContext, Generate, generatorFor, UNCOMMON } from './generic-values';
import type { LookupValues } from './lookup-values';
import type { SeededRandom } from './random';

export type { FieldContext } from './generic-values';

/** A demo record, or the values given for one: field name → value. */
export type DemoRecord = Record<string, unknown>;

export interface BuildOptions {
  /** Share of generic nullable scalars left null (default 0.35). */
  readonly nullShare?: number;
  /** Share of generic collections left empty (default 0.45). */
  readonly emptyShare?: number;
}

/** One field of the set, with its generic value and its fittings compiled once. */
interface FieldPlan {
  readonly spec: FieldSpec;
  readonly name: string;
  readonly generate: Generate;
  readonly fitGiven: GivenFit;
  readonly fitGeneric: GenericFit;
  readonly uncommon: boolean;
  /** For `XxxYN` flags: the related fields whose presence answers them (Cooling, GarageSpaces, ...). */
  readonly flagSources?: readonly string[];
}

export class RecordBuilder {
  private readonly plans: readonly FieldPlan[];
  private readonly byName: ReadonlyMap<string, FieldPlan>;

  constructor(readonly set: EntitySetSpec, readonly lookups: LookupValues, table?: TableSpec) {
    this.plans = set.fields.map((f) => {
      const column = f.column === undefined ? undefined : table?.columns.find((c) => c.name === f.column);
      const facets = fieldFacets(f, column, lookups.valueSets);
      return {
        spec: f,
        name: f.name,
        generate: generatorFor(f, lookups.of(f.lookupName)),
        fitGiven: givenFitter(facets),
        fitGeneric: genericFitter(facets),
        uncommon: UNCOMMON.test(f.name),
        flagSources: flagSourcesOf(set, f),
      };
    });
    this.byName = new Map(this.plans.map((p) => [p.name, p]));
  }

  has(field: string): boolean {
    return this.byName.has(field);
  }

  /** Whether the field holds `value` exactly as given (no cut to its length): what a key must do to stay unique. */
  holdsExactly(field: string, value: unknown): boolean {
    const p = this.byName.get(field);
    if (!p || value === null || value === undefined) return false;
    const v = p.fitGiven(value);
    return v !== NO_FIT && (typeof value !== 'string' || v === value);
  }

  /**
   * Whether the story may use `value` for the field: the set has no such field (the story is not bound by it), or
   * the field can hold the value (a status its lookup has).
   */
  admits(field: string, value: unknown): boolean {
    const p = this.byName.get(field);
    return !p || p.fitGiven(value) !== NO_FIT;
  }

  /** Distinct values of the field's lookup: between min and max of them (nothing when the field or lookup is unknown). */
  lookupSample(field: string, rng: SeededRandom, min: number, max: number): string[] {
    const values = this.lookups.of(this.byName.get(field)?.spec.lookupName);
    return values ? rng.sample(values, rng.int(min, max)) : [];
  }

  /**
   * One record. A given value that the field can hold wins (null: leave it null, where the field may be null);
   * otherwise, and for fields given nothing (undefined), a generic value or, if nullable, sometimes none.
   * Given fields the set does not declare are dropped.
   */
  build(given: Readonly<DemoRecord>, ctx: FieldContext, options: BuildOptions = {}): DemoRecord {
    const nullShare = options.nullShare ?? 0.35;
    const emptyShare = options.emptyShare ?? 0.45;
    const rng = ctx.rng;
    const out: DemoRecord = {};
    let flags: FieldPlan[] | undefined;
    for (const p of this.plans) {
      const f = p.spec;
      const g = given[p.name];
      if (g === null) {
        if (f.nullable) continue;
      } else if (g !== undefined) {
        const v = p.fitGiven(g);
        if (v !== NO_FIT) {
          out[p.name] = v;
          continue;
        }
      }
      if (f.nullable && rng.chance(p.uncommon ? 0.85 : f.collection ? emptyShare : nullShare)) continue;
      const v = p.fitGeneric(p.uncommon && f.type === 'Edm.Boolean' ? false : p.generate(ctx));
      if (p.flagSources) (flags ??= []).push(p);
      if (v !== undefined) out[p.name] = v;
    }
    if (flags) for (const p of flags) out[p.name] = p.flagSources!.some((s) => present(out[s]));
    return out;
  }
}

function flagSourcesOf(set: EntitySetSpec, f: FieldSpec): readonly string[] | undefined {
  if (f.type !== 'Edm.Boolean' || f.collection || !f.name.endsWith('YN')) return undefined;
  const stem = f.name.slice(0, -2);
  const sources = [stem, `${stem}Features`, `${stem}Spaces`, `${stem}Fee`, `${stem}sTotal`].filter((n) => set.fieldsByName[n]);
  return sources.length ? sources : undefined;
}

function present(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'number') return v > 0;
  return v !== undefined && v !== null && v !== '';
}
