/**
 * The brokerages and agents of the demo MLS: who they are is planned up front (listings refer to them); their records
 * are made from these plans (roster-records.ts).
 */
import { mixSeed, SeededRandom } from './random';
import {
  FRANCHISES, PLACES, Place, STREET_NAMES, STREET_SUFFIXES, brokerageName, personName, phoneNumber, slug,
} from './vocabulary';

const SALT_ROSTER = 11;

export interface OfficeInfo {
  readonly index: number;
  readonly key: string;
  readonly mlsId: string;
  readonly name: string;
  readonly place: Place;
  readonly phone: string;
  readonly domain: string;
  readonly address1: string;
  readonly postalCode: string;
  readonly active: boolean;
  readonly main?: OfficeInfo;
  readonly franchise?: string;
  readonly members: MemberInfo[];
}

export interface MemberInfo {
  readonly index: number;
  readonly key: string;
  readonly mlsId: string;
  readonly first: string;
  readonly last: string;
  readonly fullName: string;
  readonly email: string;
  readonly phone: string;
  readonly type: string;
  readonly active: boolean;
  readonly office: OfficeInfo;
}

export interface Roster {
  readonly offices: readonly OfficeInfo[];
  readonly members: readonly MemberInfo[];
  /** Active members who take listings (not assistants or staff). */
  readonly listingAgents: readonly MemberInfo[];
}

const LISTING_TYPES = new Set(['Designated REALTOR Participant', 'Office Manager', 'REALTOR Salesperson', 'REALTOR Broker Associate']);

export function planRoster(listings: number, seed: number): Roster {
  const rng = new SeededRandom(mixSeed(seed, 0, SALT_ROSTER));
  const officeCount = Math.max(3, Math.round(listings / 20));
  const memberCount = Math.max(10, Math.round(listings / 4));
  const width = (n: number) => Math.max(5, String(n).length);

  const offices: OfficeInfo[] = [];
  const mains: OfficeInfo[] = [];
  for (let i = 0; i < officeCount; i++) {
    const main = i >= 3 && rng.chance(0.2) ? rng.pick(mains) : undefined;
    const place = rng.pick(PLACES);
    const name = main ? `${main.name} - ${place.city}` : brokerageName(i);
    offices.push({
      index: i,
      key: `OF${String(i + 1).padStart(width(officeCount), '0')}`,
      mlsId: `O${1000 + i}`,
      name,
      place,
      phone: phoneNumber(rng, place.areaCode),
      domain: `${slug(main ? main.name : name)}.example.com`,
      address1: `${rng.int(100, 9999)} ${rng.pick(STREET_NAMES)} ${rng.pick(STREET_SUFFIXES)}`,
      postalCode: String(place.zip + rng.int(0, place.zips - 1)).padStart(5, '0'),
      active: i === 0 || rng.chance(0.95),
      main,
      franchise: main ? main.franchise : rng.chance(0.4) ? rng.pick(FRANCHISES) : undefined,
      members: [],
    });
    if (!main) mains.push(offices[i]);
  }

  // Every office gets at least one member; the rest join offices at random.
  const officeOf = Array.from({ length: memberCount }, (_, i) => (i < officeCount ? offices[i] : rng.pick(offices)));
  const members: MemberInfo[] = officeOf.map((office, i) => {
    const { first, last } = personName(rng);
    const position = office.members.length;
    const type = position === 0 ? 'Designated REALTOR Participant'
      : position === 1 && rng.chance(0.5) ? 'Office Manager'
        : rng.weighted([['REALTOR Salesperson', 70], ['REALTOR Broker Associate', 20], ['Licensed Assistant', 5], ['Unlicensed Assistant', 3], ['Photographer', 2]]);
    const member: MemberInfo = {
      index: i,
      key: `M${String(i + 1).padStart(width(memberCount), '0')}`,
      mlsId: `A${100000 + i}`,
      first,
      last,
      fullName: `${first} ${last}`,
      email: `${slug(first)}.${slug(last)}${i + 1}@${office.domain}`,
      phone: phoneNumber(rng, office.place.areaCode),
      type,
      active: office.active && (position === 0 || rng.chance(0.92)),
      office,
    };
    office.members.push(member);
    return member;
  });
  let listingAgents = members.filter((m) => m.active && LISTING_TYPES.has(m.type));
  if (listingAgents.length === 0) listingAgents = members.filter((m) => m.active);
  return { offices, members, listingAgents };
}
