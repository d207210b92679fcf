/**
 * Values for any field of the dictionary, from its type and name. The domain builders (roster, listings)
 * give the values that must agree with each other; every other field of the entity set, including fields
 * added to the dictionary later, gets a plausible value here. Every value, given or generated, is fitted to
 * its field (MaxLength, precision and scale, lookup values), so a record always passes the store's encoder.
 */
import type { Entity, EntitySetName } from '../../generated/entities';
import type { EntitySetSpec, FieldSpec, LookupSpec } from '../model/service-model';
import type { SeededRandom } from './random';
import {
  FIRST_NAMES, LAST_NAMES, Place, STREET_NAMES, STREET_SUFFIXES, brokerageName, personName, phoneNumber, slug, subdivisionName,
} from './vocabulary';

export interface FieldContext {
  readonly rng: SeededRandom;
  readonly place: Place;
  /** Window (epoch ms) for the dates and timestamps of generic fields. */
  readonly from: number;
  readonly to: number;
}

type Generate = (ctx: FieldContext) => unknown;

const VAGUE = new Set(['None', 'Other', 'See Remarks', 'Unknown']);
const VALUE_COUNTS = [[1, 40], [2, 30], [3, 20], [4, 10]] as const;
/** Features most properties do not have: generic values for these are mostly empty or false. */
const UNCOMMON = /Waterfront|Spa|Pool|Horse|Senior|Elevator|Dock|Accessibility|RoadFrontage|Vegetation|OtherStructures|Green|Lease|Furnished|Pets|Waiver|Auction/;

/** The lookup values of the model, by lookup name. */
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

  of(name: string | undefined): readonly string[] | undefined {
    const v = name === undefined ? undefined : this.values.get(name);
    return v && v.length ? v : undefined;
  }

  allowed(name: string | undefined): ReadonlySet<string> | undefined {
    return name === undefined ? undefined : this.sets.get(name);
  }

  /** `preferred` when the lookup has it (or is unknown), else undefined. */
  ifPresent(name: string, preferred: string): string | undefined {
    const set = this.sets.get(name);
    return !set || set.has(preferred) ? preferred : undefined;
  }
}

export interface BuildOptions {
  /** Share of generic nullable scalars left null (default 0.35). */
  readonly nullShare?: number;
  /** Share of generic collections left empty (default 0.45). */
  readonly emptyShare?: number;
}

/** One field of an entity set, with its generic value and its fitting compiled once. */
interface FieldPlan {
  readonly spec: FieldSpec;
  readonly name: string;
  readonly generate: Generate;
  readonly fit: Fit;
  readonly uncommon: boolean;
  /** For `XxxYN` flags: the related fields whose presence answers them (Cooling, GarageSpaces, ...). */
  readonly flagSources?: readonly string[];
}

/**
 * What a record of `S` is built from: any of its fields, by the names the generated types give them (a name the
 * dictionary no longer has fails to compile), each with a value the builder fits to the field (epoch milliseconds
 * for a date or timestamp, any number for a decimal).
 */
export type Given<S extends EntitySetName> = { [F in keyof Entity<S>]?: unknown };

/**
 * Builds the records of one entity set (`S`, the set's name, types what it builds): given values where the caller
 * has them, generic values elsewhere.
 */
export class RecordBuilder<S extends EntitySetName> {
  private readonly plans: readonly FieldPlan[];

  constructor(readonly set: EntitySetSpec, readonly lookups: LookupValues) {
    this.plans = set.fields.map((f) => {
      let flagSources: string[] | undefined;
      if (f.type === 'Edm.Boolean' && f.name.endsWith('YN')) {
        const stem = f.name.slice(0, -2);
        flagSources = [stem, `${stem}Features`, `${stem}Spaces`, `${stem}Fee`, `${stem}sTotal`].filter((n) => set.fieldsByName[n]);
        if (!flagSources.length) flagSources = undefined;
      }
      return {
        spec: f,
        name: f.name,
        generate: generatorFor(f, lookups.of(f.lookupName)),
        fit: fitterFor(f, lookups),
        uncommon: UNCOMMON.test(f.name),
        flagSources,
      };
    });
  }

  /** Distinct values of the field's lookup: between min and max of them (nothing when the field or lookup is unknown). */
  lookupSample(field: keyof Entity<S> & string, rng: SeededRandom, min: number, max: number): string[] {
    const values = this.lookups.of(this.set.fieldsByName[field]?.lookupName);
    return values ? rng.sample(values, rng.int(min, max)) : [];
  }

  /**
   * One record with every declared field considered: `given` wins (null or undefined there means "leave it null"),
   * other fields get a generic value or, if nullable, sometimes none. Given fields the set does not declare are dropped.
   */
  build(given: Given<S>, ctx: FieldContext, options: BuildOptions = {}): Entity<S> {
    const nullShare = options.nullShare ?? 0.35;
    const emptyShare = options.emptyShare ?? 0.45;
    const rng = ctx.rng;
    const out: Record<string, unknown> = {};
    let flags: FieldPlan[] | undefined;
    for (const p of this.plans) {
      let v: unknown;
      if (p.name in given) {
        v = (given as Readonly<Record<string, unknown>>)[p.name];
      } else {
        const f = p.spec;
        if (f.nullable && rng.chance(p.uncommon ? 0.85 : f.collection ? emptyShare : nullShare)) continue;
        v = p.uncommon && f.type === 'Edm.Boolean' ? false : p.generate(ctx);
        if (p.flagSources) (flags ??= []).push(p);
      }
      const fitted = p.fit(v, rng);
      if (fitted !== undefined) out[p.name] = fitted;
    }
    if (flags) for (const p of flags) out[p.name] = p.flagSources!.some((s) => present(out[s]));
    // Every value is fitted to its field as the dictionary declares it (the seed test checks them against the schemas).
    return out as Entity<S>;
  }
}

function present(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'number') return v > 0;
  return v !== undefined && v !== null && v !== '';
}

const INT_LIMITS: Partial<Record<FieldSpec['type'], number>> = {
  'Edm.Int16': 32_767,
  'Edm.Int32': 2_147_483_647,
  'Edm.Int64': Number.MAX_SAFE_INTEGER,
};

/** Makes a value fit a field, or answers undefined (null). */
type Fit = (v: unknown, rng: SeededRandom) => unknown;

/**
 * The value as the field can hold it: strings cut to MaxLength, numbers rounded to the scale and kept within
 * the precision, epoch milliseconds written as dates or timestamps. A scalar outside its lookup is replaced by
 * a value of the lookup; such a collection item is dropped (as are repeats).
 */
export function fitterFor(f: FieldSpec, lookups: LookupValues): Fit {
  const scalar = scalarFitter(f, lookups);
  if (!f.collection) return (v, rng) => (v === undefined || v === null ? undefined : scalar(v, undefined, rng));
  return (v) => {
    if (v === undefined || v === null) return undefined;
    const items = Array.isArray(v) ? v : [v];
    const out: unknown[] = [];
    for (const item of items) {
      const x = item === undefined || item === null ? undefined : scalar(item, true, undefined);
      if (x !== undefined && !out.includes(x)) out.push(x);
    }
    return out;
  };
}

function scalarFitter(f: FieldSpec, lookups: LookupValues): (v: unknown, inCollection: true | undefined, rng: SeededRandom | undefined) => unknown {
  switch (f.type) {
    case 'Edm.String':
    case 'Edm.Guid':
    case 'Edm.TimeOfDay': {
      const allowed = lookups.allowed(f.lookupName);
      const values = lookups.of(f.lookupName);
      const max = f.collection ? undefined : f.maxLength;
      return (v, inCollection, rng) => {
        let s = typeof v === 'string' ? v : String(v);
        if (allowed && !allowed.has(s)) {
          if (inCollection || !rng || !values) return undefined;
          s = rng.pick(values);
        }
        return max !== undefined && s.length > max ? s.slice(0, max).trimEnd() : s;
      };
    }
    case 'Edm.Boolean':
      return (v) => Boolean(v);
    case 'Edm.Int16':
    case 'Edm.Int32':
    case 'Edm.Int64': {
      const limit = INT_LIMITS[f.type]!;
      return (v) => {
        const n = Math.round(Number(v));
        return Number.isFinite(n) ? Math.max(-limit, Math.min(limit, n)) : undefined;
      };
    }
    case 'Edm.Decimal': {
      const scale = f.scale ?? 0;
      const limit = f.precision === undefined ? Infinity : Number((10 ** (f.precision - scale) - 10 ** -scale).toFixed(scale));
      return (v) => {
        const n = Number(v);
        if (!Number.isFinite(n)) return undefined;
        return Math.max(-limit, Math.min(limit, Number(n.toFixed(scale))));
      };
    }
    case 'Edm.Double':
      return (v) => {
        const n = Number(v);
        return Number.isFinite(n) ? n : undefined;
      };
    case 'Edm.Date':
      return (v) => (typeof v === 'number' ? new Date(v).toISOString().slice(0, 10) : String(v));
    case 'Edm.DateTimeOffset':
      return (v) => (typeof v === 'number' ? new Date(v).toISOString() : String(v));
  }
}

/** The generic value of a field: by its lookup, then by name, then by type. */
function generatorFor(f: FieldSpec, lookup: readonly string[] | undefined): Generate {
  if (f.lookupName && !lookup) {
    // A lookup whose values the model does not carry: nothing to draw from, so none (or, where required, text).
    if (f.collection) return () => [];
    if (f.nullable) return () => null;
  }
  if (lookup) {
    if (!f.collection) return ({ rng }) => rng.pick(lookup);
    // Several values: real ones, not "None" next to "Gas".
    const specific = lookup.filter((v) => !VAGUE.has(v));
    const pool = specific.length >= 4 ? specific : lookup;
    return ({ rng }) => rng.sample(pool, rng.weighted(VALUE_COUNTS));
  }
  const one = scalarGenerator(f);
  return f.collection ? (ctx) => Array.from({ length: ctx.rng.int(1, 3) }, () => one(ctx)) : one;
}

function scalarGenerator(f: FieldSpec): Generate {
  const name = f.name;
  switch (f.type) {
    case 'Edm.Boolean':
      return ({ rng }) => rng.chance(0.5);
    case 'Edm.Int16':
    case 'Edm.Int32':
    case 'Edm.Int64':
      return integerByName(name);
    case 'Edm.Decimal':
    case 'Edm.Double':
      return decimalByName(name);
    case 'Edm.Date':
      return ({ rng, from, to }) => rng.between(from, to);
    case 'Edm.DateTimeOffset':
      return ({ rng, from, to }) => Math.floor(rng.between(from, to));
    case 'Edm.TimeOfDay':
      return ({ rng }) => `${String(rng.int(7, 20)).padStart(2, '0')}:${rng.pick(['00', '15', '30', '45'])}:00`;
    case 'Edm.Guid':
      return ({ rng }) => `${rng.hex(8)}-${rng.hex(4)}-4${rng.hex(3)}-${rng.pick(['8', '9', 'a', 'b'])}${rng.hex(3)}-${rng.hex(12)}`;
    case 'Edm.String':
      return stringByName(name, f.maxLength);
  }
}

function integerByName(name: string): Generate {
  if (/YearBuilt/.test(name)) return ({ rng }) => rng.int(1925, 2025);
  if (/Year$/.test(name)) return ({ rng }) => rng.int(2023, 2025);
  if (/Bedrooms|Beds/.test(name)) return ({ rng }) => rng.int(1, 5);
  if (/Bathrooms|Baths/.test(name)) return ({ rng }) => rng.int(0, 3);
  if (/Stories|Levels|Floors/.test(name)) return ({ rng }) => rng.int(1, 3);
  if (/DaysOnMarket/.test(name)) return ({ rng }) => rng.int(0, 180);
  if (/Height|Width/.test(name)) return ({ rng }) => rng.pick([480, 768, 1024, 1365, 1536, 2048]);
  if (/Price|Value|Amount|Rent|Income|Expense|ProForma/.test(name)) return ({ rng }) => rng.int(10, 900) * 100;
  if (/Sequence|Order|Number/.test(name)) return ({ rng }) => rng.int(1, 500);
  if (/Area|SquareFeet/.test(name)) return ({ rng }) => rng.int(400, 5000);
  return ({ rng }) => rng.int(0, 4);
}

function decimalByName(name: string): Generate {
  if (/Latitude/.test(name)) return ({ rng, place }) => place.lat + rng.between(-0.06, 0.06);
  if (/Longitude/.test(name)) return ({ rng, place }) => place.lng + rng.between(-0.06, 0.06);
  if (/Fee|Dues/.test(name)) return ({ rng }) => rng.int(5, 90) * 10;
  if (/Rent/.test(name)) return ({ rng }) => rng.int(16, 80) * 50;
  if (/Tax/.test(name)) return ({ rng }) => rng.between(900, 14_000);
  if (/Price|Value|Amount|Income|Expense|Cost/.test(name)) return ({ rng }) => rng.int(50, 1500) * 1000;
  if (/Acres/.test(name)) return ({ rng }) => rng.between(0.05, 5);
  if (/Area|SquareFeet/.test(name)) return ({ rng }) => rng.int(400, 5000);
  if (/Spaces|Count|Total/.test(name)) return ({ rng }) => rng.int(0, 3);
  if (/Percent|Rate|Ratio/.test(name)) return ({ rng }) => rng.between(0, 10);
  if (/Length|Width|Depth|Height|Frontage/.test(name)) return ({ rng }) => rng.int(8, 120);
  return ({ rng }) => rng.between(0, 1000);
}

const WORDS: readonly string[] = ['North', 'South', 'Lake', 'Ridge', 'Park', 'Central', 'Valley', 'Garden', 'Summit', 'River', 'Harbor', 'Mesa'];
const SENTENCES: readonly string[] = [
  'See remarks.', 'Information deemed reliable but not guaranteed.', 'Buyer to verify all measurements.',
  'Recently updated.', 'Shown by appointment.', 'Contact the listing office for details.',
];

function stringByName(name: string, maxLength: number | undefined): Generate {
  const rules: [RegExp, Generate][] = [
    [/Plus4$/, ({ rng }) => rng.digits(4)],
    [/Ext(ension)?$/, ({ rng }) => rng.digits(3)],
    [/NamePrefix$/, ({ rng }) => rng.pick(['Mr.', 'Ms.', 'Mrs.', 'Dr.'])],
    [/NameSuffix$/, ({ rng }) => rng.pick(['Jr.', 'Sr.', 'III'])],
    [/Remarks|Description|Instructions|Directions|Comments|Notes|Text/, ({ rng }) => rng.sample(SENTENCES, rng.int(1, 3)).join(' ')],
    [/Key$|KeyNumeric$/, ({ rng }) => rng.hex(16)],
    [/(MlsId|MlsID|SystemID|AssociationId|Id|ID)$/, ({ rng }) => `D${rng.digits(7)}`],
    [/Phone|Fax/, ({ rng, place }) => phoneNumber(rng, place.areaCode)],
    [/Email/, ({ rng }) => `${slug(rng.pick(FIRST_NAMES))}.${slug(rng.pick(LAST_NAMES))}@example.com`],
    [/URL|Url|Website|HTML/, ({ rng }) => `https://www.example.com/demo/${rng.hex(10)}`],
    [/FirstName|MiddleName|Nickname/, ({ rng }) => rng.pick(FIRST_NAMES)],
    [/LastName/, ({ rng }) => rng.pick(LAST_NAMES)],
    [/(FullName|Agent.*Name|Member.*Name|Owner.*Name|Contact.*Name)$/, ({ rng }) => { const p = personName(rng); return `${p.first} ${p.last}`; }],
    [/Office.*Name|Brokerage|Franchise/, ({ rng }) => brokerageName(rng.int(0, 209))],
    [/City/, ({ place }) => place.city],
    [/County/, ({ place }) => place.county],
    [/PostalCode|Zip/, ({ rng, place }) => String(place.zip + rng.int(0, place.zips - 1)).padStart(5, '0')],
    [/Address2/, ({ rng }) => `Suite ${rng.int(1, 9) * 100}`],
    [/Address|StreetLine/, ({ rng }) => `${rng.int(100, 9999)} ${rng.pick(STREET_NAMES)} ${rng.pick(STREET_SUFFIXES)}`],
    [/StreetName/, ({ rng }) => rng.pick(STREET_NAMES)],
    [/CrossStreet/, ({ rng }) => `${rng.pick(STREET_NAMES)} ${rng.pick(STREET_SUFFIXES)}`],
    [/AOR$/, ({ place }) => `${place.metro} REALTORS`],
    [/License$/, ({ rng, place }) => `${place.state}${rng.digits(8)}`],
    [/Length$|Width$|Depth$|Distance$|Frontage$/, ({ rng }) => `${rng.int(10, 400)} ft`],
    [/StreetNumber/, ({ rng }) => String(rng.int(100, 19999))],
    [/StreetSuffix/, ({ rng }) => rng.pick(STREET_SUFFIXES)],
    [/UnitNumber/, ({ rng }) => `${rng.int(1, 30)}${rng.pick(['', 'A', 'B'])}`],
    [/School/, ({ rng }) => `${rng.pick(STREET_NAMES)} ${/High/.test(name) ? 'High' : /Middle|Junior/.test(name) ? 'Middle' : 'Elementary'}`],
    [/Subdivision|Complex|Development|Association.*Name|Builder.*Name/, ({ rng }) => subdivisionName(rng)],
    [/Dimensions/, ({ rng }) => `${rng.int(8, 120)} x ${rng.int(8, 150)}`],
    [/Zoning/, ({ rng }) => rng.pick(['R-1', 'R-2', 'RM-1', 'C-1', 'MU-2', 'A-1'])],
    [/Parcel|Number$/, ({ rng }) => `${rng.digits(3)}-${rng.digits(2)}-${rng.digits(3)}`],
    [/Status$/, () => 'Active'],
    [/SystemName$/, () => 'Demo MLS'],
    [/Name$/, ({ rng }) => `${rng.pick(WORDS)} ${rng.pick(WORDS)}`],
  ];
  for (const [pattern, generate] of rules) if (pattern.test(name)) return generate;
  // Short codes for short fields; a couple of words otherwise.
  if (maxLength !== undefined && maxLength <= 4) return ({ rng }) => rng.hex(maxLength).toUpperCase();
  return ({ rng }) => `${rng.pick(WORDS)} ${rng.pick(WORDS)}`;
}
