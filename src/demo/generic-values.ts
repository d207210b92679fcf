/**
 * The generic value of any field, from its type and name: what a field gets when no rule of the demo's story gives it
 * a value (every field of a set the story does not know, fields added to the dictionary later, and fields whose rule
 * does not fit them). Names steer plausibility only (a field ending in Phone gets a phone number); every value is of
 * the field's type, drawn from its lookup when it has one.
 */
import type { FieldSpec } from '../model/service-model';
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

export type Generate = (ctx: FieldContext) => unknown;

const VAGUE = new Set(['None', 'Other', 'See Remarks', 'Unknown']);
const VALUE_COUNTS = [[1, 40], [2, 30], [3, 20], [4, 10]] as const;

/** Features most properties do not have: generic values for these are mostly empty or false. */
export const UNCOMMON = /Waterfront|Spa|Pool|Horse|Senior|Elevator|Dock|Accessibility|RoadFrontage|Vegetation|OtherStructures|Green|Lease|Furnished|Pets|Waiver|Auction/;

/** The generic value of a field: by its lookup, then by name, then by type. */
export function generatorFor(f: FieldSpec, lookup: readonly string[] | undefined): Generate {
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
