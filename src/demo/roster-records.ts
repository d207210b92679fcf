/**
 * The records of the roster (the Office and Member sets, by RESO's standard names): one table of fields per set,
 * keyed by field name, each record from a random stream of its own.
 */
import { BASE_TIME, DAY, recordTimes, when } from './calendar';
import { mixSeed, SeededRandom } from './random';
import type { DemoRecord, FieldContext } from './record-builder';
import type { RecordMaker } from './record-maker';
import type { MemberInfo, OfficeInfo } from './roster';
import { phoneNumber } from './vocabulary';

const SALT_OFFICE = 12;
const SALT_MEMBER = 13;

export function officeRecord(office: OfficeInfo, maker: RecordMaker, seed: number): DemoRecord {
  const rng = new SeededRandom(mixSeed(seed, office.index, SALT_OFFICE));
  const { entry, modified } = recordTimes(rng);
  const ctx: FieldContext = { rng, place: office.place, from: entry, to: modified };
  const broker = office.members[0];
  const manager = office.members.find((m) => m.type === 'Office Manager') ?? broker;
  return maker.make({
    OfficeKey: office.key,
    ModificationTimestamp: when(modified),
    OriginalEntryTimestamp: when(entry),
    OfficeMlsId: office.mlsId,
    OfficeName: office.name,
    OfficeStatus: office.active ? 'Active' : 'Inactive',
    OfficeType: office.main ? 'Realtor Branch Office' : 'Realtor Office',
    MainOfficeKey: office.main?.key ?? office.key,
    FranchiseAffiliation: office.franchise ?? null,
    IDXOfficeParticipationYN: rng.chance(0.9),
    OfficeAddress1: office.address1,
    OfficeAddress2: rng.chance(0.4) ? `Suite ${rng.int(1, 9) * 100}` : null,
    OfficeCity: office.place.city,
    OfficeStateOrProvince: office.place.state,
    OfficePostalCode: office.postalCode,
    OfficeCountry: 'US',
    OfficeAOR: `${office.place.metro} REALTORS`,
    OfficePhone: office.phone,
    OfficeFax: rng.chance(0.3) ? phoneNumber(rng, office.place.areaCode) : null,
    OfficeEmail: `info@${office.domain}`,
    OfficeBrokerKey: broker?.key ?? null,
    OfficeBrokerMlsId: broker?.mlsId ?? null,
    OfficeManagerKey: manager?.key ?? null,
    OfficeNationalAssociationId: rng.digits(9),
    OriginatingSystemOfficeKey: office.key,
    OriginatingSystemName: 'Demo MLS',
    SourceSystemName: 'Demo MLS',
  }, ctx);
}

export function memberRecord(member: MemberInfo, maker: RecordMaker, seed: number): DemoRecord {
  const rng = new SeededRandom(mixSeed(seed, member.index, SALT_MEMBER));
  const { entry, modified } = recordTimes(rng);
  const office = member.office;
  const ctx: FieldContext = { rng, place: office.place, from: entry, to: modified };
  const designations = rng.chance(0.35) ? maker.builder.lookupSample('MemberDesignation', rng, 1, 2) : [];
  const languages = ['English', ...(rng.chance(0.2) ? [rng.pick(['Spanish', 'Mandarin', 'Vietnamese', 'Hindi', 'French', 'German', 'Korean'])] : [])];
  return maker.make({
    MemberKey: member.key,
    ModificationTimestamp: when(modified),
    OriginalEntryTimestamp: when(entry),
    MemberMlsId: member.mlsId,
    MemberFirstName: member.first,
    MemberLastName: member.last,
    MemberMiddleName: rng.chance(0.2) ? rng.pick(['A.', 'J.', 'M.', 'R.', 'L.']) : null,
    MemberNickname: null,
    MemberFullName: member.fullName,
    MemberEmail: member.email,
    MemberDirectPhone: member.phone,
    MemberMobilePhone: rng.chance(0.7) ? member.phone : phoneNumber(rng, office.place.areaCode),
    MemberOfficePhone: office.phone,
    MemberAddress1: office.address1,
    MemberAddress2: null,
    MemberCity: office.place.city,
    MemberStateOrProvince: office.place.state,
    MemberPostalCode: office.postalCode,
    MemberCountry: 'US',
    MemberStatus: member.active ? 'Active' : 'Inactive',
    MemberType: member.type,
    MemberDesignation: designations,
    MemberLanguages: languages,
    MemberNationalAssociationId: rng.digits(9),
    MemberStateLicense: /Unlicensed|Photographer/.test(member.type) ? null : `${office.place.state}${rng.digits(8)}`,
    MemberStateLicenseState: office.place.state,
    MemberStateLicenseExpirationDate: when(BASE_TIME + rng.int(member.active ? 30 : -400, 900) * DAY),
    OfficeKey: office.key,
    OfficeMlsId: office.mlsId,
    OfficeName: office.name,
    OriginatingSystemMemberKey: member.key,
    OriginatingSystemName: 'Demo MLS',
    SourceSystemName: 'Demo MLS',
  }, ctx);
}
