/**
 * The physical facts of one listed property: its kind, size, rooms, lot, parking, units and asking price,
 * chosen together so that a condominium is smaller than a ranch and a fourplex has four units.
 *
 * A seed data table: chooseFacts is the table of property kinds and their proportions, kept in one place
 * so that the proportions can be read against each other.
 */
import { roundPrice } from './listing-timeline';
import type { SeededRandom } from './random';
import type { Place } from './vocabulary';

type Weighted = readonly (readonly [string, number])[];

/** PropertyType shares and the PropertySubTypes that go with each. */
const PROPERTY_TYPES: readonly (readonly [string, number, Weighted])[] = [
  ['Residential', 66, [['Single Family Residence', 70], ['Condominium', 13], ['Townhouse', 10], ['Manufactured On Land', 2], ['Cabin', 2], ['Stock Cooperative', 1], ['Own Your Own', 1]]],
  ['Residential Lease', 10, [['Single Family Residence', 45], ['Condominium', 25], ['Townhouse', 15], ['Apartment', 15]]],
  ['Residential Income', 6, [['Duplex', 40], ['Triplex', 20], ['Quadruplex', 20], ['Multi Family', 20]]],
  ['Land', 6, [['Unimproved Land', 70], ['Agriculture', 15], ['Ranch', 15]]],
  ['Farm', 2, [['Farm', 60], ['Ranch', 30], ['Agriculture', 10]]],
  ['Commercial Sale', 4, [['Office', 25], ['Retail', 25], ['Industrial', 15], ['Warehouse', 15], ['Mixed Use', 15], ['Hotel/Motel', 5]]],
  ['Commercial Lease', 3, [['Office', 35], ['Retail', 35], ['Industrial', 15], ['Warehouse', 15]]],
  ['Business Opportunity', 1, [['Business', 80], ['Retail', 20]]],
  ['Manufactured In Park', 2, [['Manufactured Home', 70], ['Mobile Home', 30]]],
];

export const STRUCTURE_OF: Readonly<Record<string, string>> = {
  'Single Family Residence': 'House', Townhouse: 'Townhouse', Duplex: 'Duplex', Triplex: 'Triplex', Quadruplex: 'Quadruplex',
  'Multi Family': 'Multi Family', Cabin: 'Cabin', 'Manufactured On Land': 'Manufactured House', 'Manufactured Home': 'Manufactured House',
  'Mobile Home': 'Manufactured House', Office: 'Office', Retail: 'Retail', Industrial: 'Industrial', Warehouse: 'Warehouse',
  'Mixed Use': 'Mixed Use', 'Hotel/Motel': 'Hotel/Motel', Farm: 'House', Ranch: 'House',
};

const SHARED_WALLS = new Set(['Condominium', 'Townhouse', 'Apartment', 'Duplex', 'Triplex', 'Quadruplex', 'Multi Family', 'Stock Cooperative', 'Own Your Own']);
const STACKED = new Set(['Condominium', 'Apartment', 'Stock Cooperative', 'Own Your Own']);

export type Kind = 'home' | 'land' | 'commercial';

export interface UnitPlan {
  readonly type: string;
  readonly beds: number;
  readonly baths: number;
  readonly units: number;
  readonly rent: number;
}

export interface PropertyFacts {
  readonly type: string;
  readonly subType: string;
  readonly kind: Kind;
  readonly lease: boolean;
  readonly attached: boolean;
  /** Has a unit number in its address. */
  readonly stacked: boolean;
  readonly bedrooms?: number;
  readonly bathsFull?: number;
  readonly bathsHalf?: number;
  readonly bathsThreeQuarter?: number;
  readonly bathsQuarter?: number;
  readonly livingArea?: number;
  readonly buildingArea?: number;
  readonly belowGradeFinished?: number;
  readonly basement: boolean;
  readonly stories?: number;
  readonly yearBuilt?: number;
  readonly acres?: number;
  readonly garage: number;
  readonly carport: number;
  readonly fireplaces: number;
  readonly hoa: boolean;
  readonly units: readonly UnitPlan[];
  /** Asking price (monthly rent for leases). */
  readonly price: number;
}

const UNIT_BEDS: Readonly<Record<string, number>> = {
  Studio: 0, Efficiency: 0, Loft: 1, '1 Bedroom': 1, '2 Bedroom': 2, '3 Bedroom': 3, '4 Bedroom Or More': 4, Penthouse: 3,
};

function planUnits(rng: SeededRandom, subType: string, type: string, place: Place): UnitPlan[] {
  let counts: number[];
  if (subType === 'Duplex') counts = rng.chance(0.6) ? [2] : [1, 1];
  else if (subType === 'Triplex') counts = rng.pick([[3], [2, 1], [1, 1, 1]]);
  else if (subType === 'Quadruplex') counts = rng.pick([[4], [2, 2], [2, 1, 1], [1, 1, 1, 1]]);
  else if (type === 'Residential Income') counts = Array.from({ length: rng.int(2, 4) }, () => rng.int(2, 8));
  else if (subType === 'Mixed Use') counts = Array.from({ length: rng.int(1, 2) }, () => rng.int(1, 4));
  else if (subType === 'Single Family Residence' && type === 'Residential' && rng.chance(0.04)) counts = [1];
  else return [];
  const types = counts.length === 1 && subType === 'Single Family Residence'
    ? ['Studio']
    : rng.sample(['Studio', '1 Bedroom', '2 Bedroom', '3 Bedroom', '4 Bedroom Or More', 'Efficiency', 'Loft'], counts.length);
  return counts.map((units, i) => {
    const beds = UNIT_BEDS[types[i]] ?? 1;
    const rent = roundPrice((400 + beds * 350) * place.pricePerSqft * rng.between(0.004, 0.0055), rng);
    return { type: types[i], beds, baths: Math.max(1, beds - rng.int(0, 1)), units, rent };
  });
}

/** `admits`: whether the listings' field (PropertyType, PropertySubType) may hold the value (see RecordBuilder.admits). */
export function chooseFacts(rng: SeededRandom, place: Place, admits: (field: string, value: string) => boolean): PropertyFacts {
  const known = PROPERTY_TYPES.filter(([t]) => admits('PropertyType', t));
  const types = known.length ? known : PROPERTY_TYPES;
  const [type, , subTypes] = rng.weighted(types.map((t) => [t, t[1]] as const));
  const knownSubTypes = subTypes.filter(([s]) => admits('PropertySubType', s));
  const subType = knownSubTypes.length ? rng.weighted(knownSubTypes) : subTypes[0][0];
  const kind: Kind = type === 'Land' ? 'land' : /Commercial|Business/.test(type) ? 'commercial' : 'home';
  const lease = /Lease/.test(type);
  const attached = SHARED_WALLS.has(subType);
  const stacked = STACKED.has(subType);
  const units = planUnits(rng, subType, type, place);
  const ppsf = place.pricePerSqft * rng.between(0.75, 1.35);

  let bedrooms: number | undefined;
  let livingArea: number | undefined;
  let buildingArea: number | undefined;
  let stories: number | undefined;
  let basement = false;
  let garage = 0;
  let carport = 0;
  let fireplaces = 0;
  let acres: number | undefined;
  let price: number;

  if (kind === 'home') {
    if (type === 'Residential Income') {
      bedrooms = Math.min(15, Math.max(2, units.reduce((s, u) => s + Math.max(1, u.beds) * u.units, 0)));
    } else if (stacked) {
      bedrooms = rng.weighted([[1, 35], [2, 45], [3, 20]] as const);
    } else if (type === 'Manufactured In Park') {
      bedrooms = rng.int(2, 4);
    } else {
      bedrooms = rng.weighted([[1, 4], [2, 16], [3, 34], [4, 26], [5, 11], [6, 4], [7, 2], [8, 1], [10, 0.6], [12, 0.3], [15, 0.2]] as const);
    }
    livingArea = Math.round((450 + bedrooms * 480) * rng.between(0.8, 1.25) * (stacked ? 0.75 : 1));
    stories = stacked ? 1 : rng.weighted([[1, 45], [2, 45], [3, 10]] as const);
    basement = !stacked && subType !== 'Manufactured Home' && subType !== 'Mobile Home' && rng.chance(0.4);
    garage = stacked ? rng.weighted([[0, 50], [1, 50]] as const) : subType === 'Townhouse' ? rng.int(1, 2) : rng.weighted([[0, 10], [1, 15], [2, 55], [3, 20]] as const);
    carport = rng.chance(0.05) ? rng.int(1, 2) : 0;
    fireplaces = rng.weighted([[0, 45], [1, 45], [2, 10]] as const);
    acres = stacked || type === 'Manufactured In Park' ? undefined
      : subType === 'Townhouse' ? rng.between(0.03, 0.08)
        : type === 'Farm' || subType === 'Ranch' ? rng.between(10, 600)
          : rng.chance(0.1) ? rng.between(1, 20) : rng.between(0.08, 0.6);
    buildingArea = livingArea + garage * 240;
    if (type === 'Manufactured In Park') price = rng.int(40, 220) * 1000;
    else if (type === 'Residential Income') price = units.reduce((s, u) => s + u.units * u.rent, 0) * rng.between(130, 190);
    else price = livingArea * ppsf + (type === 'Farm' ? (acres ?? 0) * rng.between(3000, 9000) : 0);
    if (lease) price = livingArea * ppsf * rng.between(0.004, 0.0055);
  } else if (kind === 'land') {
    acres = subType === 'Unimproved Land' ? (rng.chance(0.7) ? rng.between(0.15, 5) : rng.between(5, 80)) : rng.between(20, 400);
    price = 30_000 + acres * rng.between(8_000, 60_000) * (place.pricePerSqft / 300);
  } else {
    buildingArea = Math.round(rng.chance(0.7) ? rng.between(1200, 12_000) : rng.between(12_000, 80_000));
    stories = rng.weighted([[1, 60], [2, 30], [3, 10]] as const);
    acres = rng.between(0.2, 5);
    garage = 0;
    price = type === 'Business Opportunity' ? rng.between(80_000, 1_500_000)
      : lease ? buildingArea * rng.between(1.2, 3.5)
        : buildingArea * rng.between(120, 400) * (place.pricePerSqft / 300);
  }

  let bathsFull: number | undefined;
  let bathsHalf: number | undefined;
  let bathsThreeQuarter: number | undefined;
  let bathsQuarter: number | undefined;
  if (bedrooms !== undefined) {
    bathsFull = Math.max(1, Math.min(bedrooms + 1, Math.round(bedrooms * 0.55 + rng.between(0, 1))));
    bathsHalf = stacked ? rng.int(0, 1) : rng.weighted([[0, 45], [1, 45], [2, 10]] as const);
    bathsThreeQuarter = rng.chance(0.2) ? 1 : 0;
    bathsQuarter = rng.chance(0.03) ? 1 : 0;
  }
  const yearBuilt = kind === 'land' ? undefined : rng.weighted([[1, 10], [2, 25], [3, 25], [4, 30], [5, 10]] as const);
  const year = yearBuilt === undefined ? undefined
    : yearBuilt === 1 ? rng.int(1900, 1949) : yearBuilt === 2 ? rng.int(1950, 1979) : yearBuilt === 3 ? rng.int(1980, 1999)
      : yearBuilt === 4 ? rng.int(2000, 2019) : rng.int(2020, 2026);
  const belowGradeFinished = basement && livingArea !== undefined && rng.chance(0.7) ? Math.round(livingArea * rng.between(0.15, 0.35)) : undefined;
  const hoa = stacked || subType === 'Townhouse' || (kind === 'home' && !lease && rng.chance(0.3));

  return {
    type, subType, kind, lease, attached, stacked, bedrooms, bathsFull, bathsHalf, bathsThreeQuarter, bathsQuarter,
    livingArea, buildingArea, belowGradeFinished, basement, stories, yearBuilt: year, acres, garage, carport, fireplaces, hoa,
    units, price: roundPrice(Math.max(price, lease ? 500 : 15_000), rng),
  };
}
