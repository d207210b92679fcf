/**
 * What a CSDL JSON metadata document declares of each entity set's records, with the facets a value must fit
 * (type, collection, nullability, MaxLength, Precision, Scale, RESO lookup), and the ways a served record
 * disagrees with it: a property not declared, a declared one missing, a value not of its type or outside its
 * facets or its lookup. Read the way a client reads `$metadata?$format=json` (OData CSDL JSON 4.01).
 */
import type { FieldSpec } from '../../src/model/service-model';

/** A field as $metadata declares it: its type (CSDL JSON's default, Edm.String, when `$Type` is absent) and facets. */
export type DeclaredField = Pick<FieldSpec, 'name' | 'collection' | 'nullable' | 'maxLength' | 'precision' | 'scale' | 'lookupName'> & { readonly type: string };

export interface DeclaredSet {
  readonly name: string;
  readonly key: string;
  readonly fields: ReadonlyMap<string, DeclaredField>;
}

const LOOKUP_NAME = '@RESO.OData.Metadata.LookupName';

/** The entity sets of a CSDL JSON document, by name, with their types' structural properties. */
export function declaredSets(doc: Record<string, any>): Map<string, DeclaredSet> {
  const types = new Map<string, { key: string; fields: Map<string, DeclaredField> }>();
  const sets = new Map<string, string>();
  for (const [ns, schema] of Object.entries(doc)) {
    if (ns.startsWith('$') || !schema || typeof schema !== 'object') continue;
    for (const [name, el] of Object.entries(schema as Record<string, any>)) {
      if (el?.$Kind === 'EntityType') types.set(`${ns}.${name}`, { key: el.$Key[0], fields: fieldsOf(el) });
      if (el?.$Kind !== 'EntityContainer') continue;
      for (const [setName, set] of Object.entries(el as Record<string, any>)) {
        if (!setName.startsWith('$') && !setName.startsWith('@') && set?.$Collection) sets.set(setName, String(set.$Type));
      }
    }
  }
  return new Map([...sets].map(([name, type]) => {
    const t = types.get(type);
    if (!t) throw new Error(`$metadata: entity set ${name} has type ${type}, which the document does not declare`);
    return [name, { name, key: t.key, fields: t.fields }];
  }));
}

function fieldsOf(type: Record<string, any>): Map<string, DeclaredField> {
  const out = new Map<string, DeclaredField>();
  for (const [name, def] of Object.entries(type)) {
    if (name.startsWith('$') || name.startsWith('@') || !def || typeof def !== 'object') continue;
    if (def.$Kind !== undefined && def.$Kind !== 'Property') continue;
    out.set(name, {
      name,
      type: def.$Type ?? 'Edm.String',
      collection: def.$Collection === true,
      nullable: def.$Nullable === true,
      maxLength: def.$MaxLength,
      precision: def.$Precision,
      scale: def.$Scale,
      lookupName: def[LOOKUP_NAME],
    });
  }
  return out;
}

const INTEGER_RANGES: Record<string, readonly [number, number]> = {
  'Edm.Int16': [-32_768, 32_767],
  'Edm.Int32': [-2_147_483_648, 2_147_483_647],
  'Edm.Int64': [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** Decimal places of a number as JSON writes it (1.25 → 2, 3 → 0, 1e-7 → 7). */
export function decimalPlaces(n: number): number {
  const [mantissa, exponent] = String(n).split('e');
  const places = (mantissa.split('.')[1] ?? '').length - Number(exponent ?? 0);
  return Math.max(0, places);
}

/** Why `v` is not a value of `f` (one element of a collection, or a single value); undefined when it is. */
export function scalarProblem(f: DeclaredField, v: unknown, lookups: ReadonlyMap<string, ReadonlySet<string>>): string | undefined {
  const range = INTEGER_RANGES[f.type];
  if (range) return typeof v === 'number' && Number.isInteger(v) && v >= range[0] && v <= range[1] ? undefined : `${JSON.stringify(v)} is not an ${f.type}`;
  switch (f.type) {
    case 'Edm.Boolean':
      return typeof v === 'boolean' ? undefined : `${JSON.stringify(v)} is not a boolean`;
    case 'Edm.Double':
      return typeof v === 'number' ? undefined : `${JSON.stringify(v)} is not a number`;
    case 'Edm.Decimal': {
      if (typeof v !== 'number') return `${JSON.stringify(v)} is not a number`;
      const scale = f.scale ?? 0;
      if (decimalPlaces(v) > scale) return `${v} has more decimal places than Scale ${scale}`;
      if (f.precision !== undefined && Math.abs(v) >= 10 ** (f.precision - scale)) return `${v} does not fit Precision ${f.precision}, Scale ${scale}`;
      return undefined;
    }
    case 'Edm.Date':
      return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) ? undefined : `${JSON.stringify(v)} is not a date`;
    case 'Edm.DateTimeOffset':
      return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(v) ? undefined : `${JSON.stringify(v)} is not a UTC date-time`;
    case 'Edm.String': {
      if (typeof v !== 'string') return `${JSON.stringify(v)} is not a string`;
      if (!f.collection && f.maxLength !== undefined && v.length > f.maxLength) return `${JSON.stringify(v)} is longer than MaxLength ${f.maxLength}`;
      const values = f.lookupName === undefined ? undefined : lookups.get(f.lookupName);
      return values && !values.has(v) ? `${JSON.stringify(v)} is not a value of lookup ${f.lookupName}` : undefined;
    }
    default:
      return typeof v === 'string' ? undefined : `${JSON.stringify(v)} is not a string`;
  }
}

/**
 * The ways a served record disagrees with its set's declaration (empty: it serves what $metadata says). `lookups`
 * holds the values of the closed lookups (an open lookup, not in it, takes any string).
 */
export function recordProblems(set: DeclaredSet, r: Record<string, unknown>, lookups: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const out = Object.keys(r).filter((k) => !k.startsWith('@') && !set.fields.has(k)).map((k) => `${k} is not declared`);
  for (const f of set.fields.values()) {
    if (!(f.name in r)) {
      out.push(`${f.name} is missing`);
      continue;
    }
    const v = r[f.name];
    if (f.collection) {
      if (!Array.isArray(v)) out.push(`${f.name}: ${JSON.stringify(v)} is not a collection`);
      else for (const x of v) out.push(...problem(f, x, lookups));
    } else if (v === null) {
      if (!f.nullable) out.push(`${f.name} is null, and not nullable`);
    } else {
      out.push(...problem(f, v, lookups));
    }
  }
  return out;
}

function problem(f: DeclaredField, v: unknown, lookups: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const p = scalarProblem(f, v, lookups);
  return p === undefined ? [] : [`${f.name}: ${p}`];
}
