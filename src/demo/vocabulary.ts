/**
 * Words the demo data is made of: markets, people, streets, brokerages and listing prose.
 * Places are real cities with approximate centres; every person, brokerage and address is invented.
 */
import type { SeededRandom } from './random';

export interface Place {
  readonly city: string;
  readonly county: string;
  readonly state: string;
  readonly metro: string;
  /** First postal code of the city and how many follow it. */
  readonly zip: number;
  readonly zips: number;
  readonly lat: number;
  readonly lng: number;
  readonly areaCode: string;
  /** Hours from UTC (standard time), for open house times. */
  readonly utcOffset: number;
  /** Typical price per square foot of a home. */
  readonly pricePerSqft: number;
}

const place = (city: string, county: string, state: string, metro: string, zip: number, zips: number,
  lat: number, lng: number, areaCode: string, utcOffset: number, pricePerSqft: number): Place =>
  ({ city, county, state, metro, zip, zips, lat, lng, areaCode, utcOffset, pricePerSqft });

export const PLACES: readonly Place[] = [
  place('Denver', 'Denver', 'CO', 'Denver Metro', 80202, 38, 39.7392, -104.9903, '303', -7, 330),
  place('Aurora', 'Arapahoe', 'CO', 'Denver Metro', 80010, 8, 39.7294, -104.8319, '720', -7, 270),
  place('Lakewood', 'Jefferson', 'CO', 'Denver Metro', 80214, 14, 39.7047, -105.0814, '303', -7, 310),
  place('Littleton', 'Arapahoe', 'CO', 'Denver Metro', 80120, 8, 39.6133, -105.0166, '303', -7, 320),
  place('Boulder', 'Boulder', 'CO', 'Boulder County', 80301, 5, 40.015, -105.2705, '303', -7, 560),
  place('Fort Collins', 'Larimer', 'CO', 'Northern Colorado', 80521, 8, 40.5853, -105.0844, '970', -7, 300),
  place('Colorado Springs', 'El Paso', 'CO', 'Pikes Peak', 80903, 15, 38.8339, -104.8214, '719', -7, 240),
  place('Austin', 'Travis', 'TX', 'Austin Area', 78701, 30, 30.2672, -97.7431, '512', -6, 340),
  place('Round Rock', 'Williamson', 'TX', 'Austin Area', 78664, 3, 30.5083, -97.6789, '512', -6, 230),
  place('Georgetown', 'Williamson', 'TX', 'Austin Area', 78626, 3, 30.6333, -97.677, '512', -6, 220),
  place('San Marcos', 'Hays', 'TX', 'Austin Area', 78666, 2, 29.8833, -97.9414, '512', -6, 200),
  place('Raleigh', 'Wake', 'NC', 'Triangle', 27601, 17, 35.7796, -78.6382, '919', -5, 250),
  place('Durham', 'Durham', 'NC', 'Triangle', 27701, 13, 35.994, -78.8986, '919', -5, 230),
  place('Cary', 'Wake', 'NC', 'Triangle', 27511, 3, 35.7915, -78.7811, '919', -5, 270),
  place('Chapel Hill', 'Orange', 'NC', 'Triangle', 27514, 4, 35.9132, -79.0558, '919', -5, 300),
  place('Phoenix', 'Maricopa', 'AZ', 'Valley of the Sun', 85003, 40, 33.4484, -112.074, '602', -7, 260),
  place('Scottsdale', 'Maricopa', 'AZ', 'Valley of the Sun', 85250, 12, 33.4942, -111.9261, '480', -7, 450),
  place('Tempe', 'Maricopa', 'AZ', 'Valley of the Sun', 85281, 4, 33.4255, -111.94, '480', -7, 300),
  place('Mesa', 'Maricopa', 'AZ', 'Valley of the Sun', 85201, 12, 33.4152, -111.8315, '480', -7, 240),
  place('Seattle', 'King', 'WA', 'Puget Sound', 98101, 98, 47.6062, -122.3321, '206', -8, 580),
  place('Bellevue', 'King', 'WA', 'Puget Sound', 98004, 5, 47.6101, -122.2015, '425', -8, 650),
  place('Tacoma', 'Pierce', 'WA', 'Puget Sound', 98402, 20, 47.2529, -122.4443, '253', -8, 300),
  place('Tampa', 'Hillsborough', 'FL', 'Tampa Bay', 33602, 28, 27.9506, -82.4572, '813', -5, 270),
  place('St. Petersburg', 'Pinellas', 'FL', 'Tampa Bay', 33701, 15, 27.7676, -82.6403, '727', -5, 320),
  place('Sarasota', 'Sarasota', 'FL', 'Suncoast', 34230, 12, 27.3364, -82.5307, '941', -5, 380),
];

export const FIRST_NAMES: readonly string[] = [
  'James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth',
  'William', 'Barbara', 'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Charles', 'Karen',
  'Daniel', 'Lisa', 'Matthew', 'Nancy', 'Anthony', 'Sandra', 'Mark', 'Ashley', 'Steven', 'Emily',
  'Andrew', 'Michelle', 'Joshua', 'Amanda', 'Kevin', 'Melissa', 'Brian', 'Stephanie', 'Luis', 'Rebecca',
  'Carlos', 'Laura', 'Wei', 'Priya', 'Omar', 'Aisha', 'Hiroshi', 'Mei', 'Diego', 'Sofia',
  'Noah', 'Olivia', 'Liam', 'Emma', 'Ethan', 'Ava', 'Mateo', 'Isabella', 'Arjun', 'Grace',
];

export const LAST_NAMES: readonly string[] = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez',
  'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin',
  'Lee', 'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson',
  'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores',
  'Green', 'Adams', 'Nelson', 'Baker', 'Hall', 'Rivera', 'Campbell', 'Mitchell', 'Carter', 'Roberts',
  'Chen', 'Patel', 'Kim', 'Okafor', 'Schmidt', 'Novak', 'Russo', 'Tanaka', 'Silva', 'Murphy',
];

export const STREET_NAMES: readonly string[] = [
  'Oak', 'Maple', 'Cedar', 'Pine', 'Elm', 'Willow', 'Aspen', 'Birch', 'Spruce', 'Juniper',
  'Magnolia', 'Sycamore', 'Walnut', 'Chestnut', 'Hickory', 'Lincoln', 'Washington', 'Jefferson', 'Madison', 'Franklin',
  'Highland', 'Lakeview', 'Ridgecrest', 'Meadowlark', 'Sunset', 'Canyon', 'Mesa Verde', 'Prairie', 'Valley View', 'Riverbend',
  'Summit', 'Parkside', 'Forest', 'Hillcrest', 'Mountain View', 'Orchard', 'Harbor', 'Bluebell', 'Columbine', 'Fairway',
  'Heritage', 'Windsor', 'Stonegate', 'Foxtail', 'Quail Run', 'Eagle', 'Falcon', 'Sagebrush', 'Cottonwood', 'Larkspur',
];

export const STREET_SUFFIXES: readonly string[] = ['St', 'Ave', 'Rd', 'Dr', 'Ln', 'Ct', 'Way', 'Blvd', 'Pl', 'Cir', 'Trl', 'Pkwy'];

export const HIGHWAYS: readonly string[] = ['I-25', 'I-35', 'I-40', 'I-10', 'I-5', 'I-75', 'US-36', 'US-183', 'Loop 1', 'SR-51', 'I-275', 'US-64'];

const BROKERAGE_WORDS: readonly string[] = [
  'Summit', 'Keystone', 'Cornerstone', 'Evergreen', 'Bluebird', 'Harbor Light', 'Pinnacle', 'Meridian', 'Northstar', 'Silverleaf',
  'Red Oak', 'Clearwater', 'Trailhead', 'Lighthouse', 'Copper Canyon', 'Prairie Wind', 'Granite', 'Horizon', 'Landmark', 'Open Door',
  'Juniper', 'Front Porch', 'Keyway', 'True North', 'Waypoint', 'Hearthstone', 'Skyline', 'Riverstone', 'Sandpiper', 'Bellwether',
];
const BROKERAGE_KINDS: readonly string[] = ['Realty', 'Real Estate', 'Properties', 'Homes', 'Realty Group', 'Real Estate Partners', 'Brokers'];

export const FRANCHISES: readonly string[] = ['HomeBridge Network', 'Keyline Realty Alliance', 'Crestmark Affiliates', 'Parkway Partners'];

/** A brokerage name, distinct for distinct `i` (the first 210 are all distinct word pairs). */
export function brokerageName(i: number): string {
  const word = BROKERAGE_WORDS[i % BROKERAGE_WORDS.length];
  const kind = BROKERAGE_KINDS[Math.floor(i / BROKERAGE_WORDS.length) % BROKERAGE_KINDS.length];
  const round = Math.floor(i / (BROKERAGE_WORDS.length * BROKERAGE_KINDS.length));
  return round === 0 ? `${word} ${kind}` : `${word} ${kind} ${round + 1}`;
}

const SUBDIVISION_ENDINGS: readonly string[] = ['Estates', 'Heights', 'Ridge', 'Park', 'Village', 'Meadows', 'Crossing', 'Commons', 'Hills', 'Reserve'];

export function subdivisionName(rng: SeededRandom): string {
  return `${rng.pick(STREET_NAMES)} ${rng.pick(SUBDIVISION_ENDINGS)}`;
}

export function personName(rng: SeededRandom): { first: string; last: string } {
  return { first: rng.pick(FIRST_NAMES), last: rng.pick(LAST_NAMES) };
}

export function phoneNumber(rng: SeededRandom, areaCode: string): string {
  return `${areaCode}-555-${rng.digits(4)}`;
}

/** A lower-case token for e-mail addresses and host names. */
export function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '');
}

const OPENINGS: readonly string[] = [
  'Welcome home to this', 'Beautifully updated', 'Move-in ready', 'Rare opportunity to own this', 'Light-filled and inviting',
  'Thoughtfully renovated', 'Charming and well-kept', 'Stunning', 'Meticulously maintained', 'Sought-after',
];
const FEATURES: readonly string[] = [
  'The open kitchen features quartz counters, a large island and stainless steel appliances.',
  'Hardwood floors run through the main level, and the living room is warmed by a gas fireplace.',
  'The primary suite offers a walk-in closet and a spa-like bath with dual vanities.',
  'A finished lower level adds a family room, guest bedroom and plenty of storage.',
  'Enjoy evenings on the covered patio overlooking the landscaped, fully fenced yard.',
  'New roof, furnace and water heater give peace of mind for years to come.',
  'Large windows bring in natural light and frame views of the surrounding trees.',
  'The oversized garage has room for two cars plus a workshop.',
  'Energy-efficient windows and owned solar panels keep utility bills low.',
  'Vaulted ceilings and an open floor plan make entertaining easy.',
  'The home office with built-in shelving is ready for remote work.',
  'Mature shade trees, raised garden beds and a sprinkler system complete the yard.',
];
const CLOSINGS: readonly string[] = [
  'Close to parks, schools, shopping and dining.', 'Minutes from trails, downtown and major highways.',
  'Schedule your private showing today!', 'Walk to the neighborhood park, coffee shops and the farmers market.',
  'Easy access to the airport and commuter routes.', 'Do not miss this one!',
];

export interface HomeFacts {
  readonly subType: string;
  readonly city: string;
  readonly bedrooms?: number;
  readonly bathrooms?: number;
  readonly livingArea?: number;
  readonly acres?: number;
  readonly propertyType: string;
}

export function publicRemarks(rng: SeededRandom, facts: HomeFacts): string {
  const kind = facts.subType.toLowerCase();
  if (facts.bedrooms === undefined) {
    const size = facts.acres !== undefined ? `${facts.acres.toFixed(2)} acre ` : '';
    return `${rng.pick(['Exceptional', 'Well-located', 'Versatile', 'Rare'])} ${size}${kind} opportunity in ${facts.city}. `
      + `${rng.pick(['Utilities nearby and easy road access.', 'Zoning allows a variety of uses.', 'High visibility with strong traffic counts.', 'Ideal for an owner-user or investor.'])} `
      + rng.pick(CLOSINGS);
  }
  const area = facts.livingArea ? `, ${thousands(Math.round(facts.livingArea))} sq ft` : '';
  const head = `${rng.pick(OPENINGS)} ${facts.bedrooms}-bedroom, ${facts.bathrooms ?? 1}-bath ${kind}${area} in ${facts.city}.`;
  return [head, ...rng.sample(FEATURES, rng.int(2, 4)), rng.pick(CLOSINGS)].join(' ');
}

export function privateRemarks(rng: SeededRandom): string {
  return [
    rng.pick(['Seller prefers a 30-day close.', 'Seller needs a rent-back of up to 60 days.', 'Estate sale; sold as-is.', 'Seller is relocating and motivated.', 'Pre-inspection available on request.']),
    rng.pick(['Offers reviewed Monday at 5 pm.', 'Please send offers with proof of funds to the listing agent.', 'Multiple offers likely; highest and best may be requested.', 'Call the listing agent before writing an offer.']),
    rng.pick(['Buyer agency compensation per the listing agreement.', 'Title company: Front Range Title.', 'HOA documents in the associated docs.', '']),
  ].filter(Boolean).join(' ');
}

export function showingInstructions(rng: SeededRandom, phone: string): string {
  return [
    rng.pick(['Schedule through the showing service.', `Call or text the listing agent at ${phone}.`, 'Appointment only, 24 hours notice.', 'Go direct; lockbox on the front door.']),
    rng.pick(['Dog on premises; please keep the back gate closed.', 'Remove shoes, please.', 'Tenant occupied; be courteous.', 'Turn off all lights and lock all doors.', 'Alarm code in the lockbox.']),
  ].join(' ');
}

/** 12345 → "12,345", without locale data. */
export function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
