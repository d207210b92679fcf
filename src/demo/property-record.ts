/**
 * The listing's own record: RESO's Property fields, one per line, in dictionary order, each a rule giving the value
 * the listing's story (facts, timeline, address, agents, media) says it holds. A field the dictionary lacks, or types
 * so that the value does not fit, is made as any other field (record-builder.ts).
 *
 * A seed data table: split up, it would only scatter the table a reader checks against the dictionary at a glance.
 */
import { BASE_TIME, DAY, when } from './calendar';
import type { ListingCore } from './listing-children';
import { STRUCTURE_OF } from './listing-facts';
import type { ListingMedia } from './listing-media';
import type { SeededRandom } from './random';
import type { DemoRecord, FieldContext } from './record-builder';
import type { RecordMaker } from './record-maker';
import type { MemberInfo, Roster } from './roster';
import { HIGHWAYS, personName, privateRemarks, publicRemarks, showingInstructions, STREET_NAMES, subdivisionName } from './vocabulary';

/** Structure fields that a parcel of land does not have. */
const STRUCTURE_ONLY: readonly string[] = [
  'Appliances', 'ArchitecturalStyle', 'Basement', 'BasementYN', 'CommonWalls', 'ConstructionMaterials', 'Cooling', 'CoolingYN',
  'DoorFeatures', 'FireplaceFeatures', 'Flooring', 'FoundationDetails', 'Heating', 'HeatingYN', 'InteriorFeatures', 'LaundryFeatures',
  'Levels', 'PatioAndPorchFeatures', 'Roof', 'SecurityFeatures', 'SpaFeatures', 'SpaYN', 'WindowFeatures', 'GreenEnergyEfficient',
  'PoolFeatures', 'PoolPrivateYN', 'HomeWarrantyYN', 'Furnished', 'ParkingFeatures',
];
const LEVELS: Readonly<Record<number, string>> = { 1: 'One', 2: 'Two', 3: 'Three Or More' };

/** A member of `pool` other than `not` (pools hold each member once). */
function otherAgent(rng: SeededRandom, pool: readonly MemberInfo[], not: MemberInfo): MemberInfo | undefined {
  if (pool.length === 0 || (pool.length === 1 && pool[0] === not)) return undefined;
  for (;;) {
    const m = rng.pick(pool);
    if (m !== not) return m;
  }
}

export interface PropertyExtras {
  readonly streetNumber: string;
  readonly dirPrefix?: string;
  readonly streetName: string;
  readonly streetSuffix: string;
  readonly unit?: string;
  readonly postalCode: string;
  readonly modified: number;
  readonly media: ListingMedia;
  readonly accessibility: 'none' | 'single' | 'multiple';
  readonly roster: Roster;
}

/**
 * The listing's record: the story's values for RESO's Property fields, with the listing's identifiers (`identity`,
 * which its child records name it by) laid over them.
 */
export function buildPropertyRecord(rng: SeededRandom, core: ListingCore, maker: RecordMaker, x: PropertyExtras, identity: Readonly<DemoRecord>): DemoRecord {
  const { facts: f, timeline: t, place, agent, status } = core;
  const office = agent.office;
  const ctx: FieldContext = { rng, place, from: t.entry, to: t.modified };
  const home = f.kind === 'home';
  const sample = (field: string, min: number, max: number) => maker.builder.lookupSample(field, rng, min, max);

  // Agents: co-listing agent (often from the same office) and, once under contract, the buyer's side.
  const coList = rng.chance(0.15)
    ? (rng.chance(0.7) ? otherAgent(rng, office.members.filter((m) => m.active), agent) : undefined) ?? otherAgent(rng, x.roster.listingAgents, agent)
    : undefined;
  const underContract = ['Active Under Contract', 'Pending', 'Closed'].includes(status);
  const buyer = underContract && rng.chance(0.92) ? otherAgent(rng, x.roster.listingAgents, agent) : undefined;
  const coBuyer = buyer && rng.chance(0.08) ? otherAgent(rng, x.roster.listingAgents, buyer) : undefined;

  const statusEvents = t.events.filter((e) => e.field === 'StandardStatus');
  const lastStatus = statusEvents[statusEvents.length - 1];
  const priceEvents = t.events.filter((e) => e.field === 'ListPrice');
  const lastEvent = t.events[t.events.length - 1];
  const acres = f.acres;
  const sqft = acres !== undefined ? acres * 43_560 : undefined;
  const subdivision = home && rng.chance(0.65) ? subdivisionName(rng) : undefined;
  const assessed = Math.round((f.lease ? f.price * 180 : f.price) * rng.between(0.7, 0.95));
  const bathsTotal = home ? f.bathsFull! + f.bathsHalf! + f.bathsThreeQuarter! + f.bathsQuarter! : undefined;
  const accessibility = x.accessibility === 'none' ? [] : sample('AccessibilityFeatures', x.accessibility === 'single' ? 1 : 2, x.accessibility === 'single' ? 1 : 4);
  const owner = personName(rng);
  const newConstruction = f.yearBuilt !== undefined && f.yearBuilt >= 2024;
  const unparsed = `${core.streetLine}, ${place.city}, ${place.state} ${x.postalCode}`;

  const given: DemoRecord = {
    ListingKey: core.key,
    ListingId: core.listingId,
    ModificationTimestamp: when(x.modified),
    OriginalEntryTimestamp: when(t.entry),
    StandardStatus: status,
    MlsStatus: status,
    StatusChangeTimestamp: when(lastStatus.at),
    ContractStatusChangeDate: when(lastStatus.at),
    PriceChangeTimestamp: when(priceEvents[priceEvents.length - 1]?.at),
    MajorChangeTimestamp: when(lastEvent.at),
    MajorChangeType: lastEvent.changeType,
    PhotosCount: x.media.photos,
    PhotosChangeTimestamp: x.media.photosChanged,
    DocumentsChangeTimestamp: x.media.documentsChanged,
    ListingContractDate: when(t.contractDate),
    OnMarketDate: when(t.onMarket),
    OffMarketDate: status === 'Active Under Contract' ? null : when(t.offMarket),
    PurchaseContractDate: when(t.purchaseContract),
    CloseDate: when(t.close),
    ClosePrice: t.closePrice ?? null,
    ExpirationDate: when(t.expiration),
    WithdrawnDate: when(t.withdrawn),
    CancellationDate: when(t.cancellation),
    DaysOnMarket: t.daysOnMarket,
    CumulativeDaysOnMarket: t.daysOnMarket + (rng.chance(0.1) ? rng.int(10, 90) : 0),
    ListPrice: t.listPrice,
    OriginalListPrice: t.originalPrice,
    PreviousListPrice: t.previousPrice ?? null,
    ListPriceLow: null,

    PropertyType: f.type,
    PropertySubType: f.subType,
    StructureType: STRUCTURE_OF[f.subType] && f.kind !== 'land' ? [STRUCTURE_OF[f.subType]] : [],
    PropertyAttachedYN: f.kind === 'land' ? null : f.attached,
    CommonWalls: f.attached ? sample('CommonWalls', 1, 1) : [],
    ListingAgreement: f.lease ? 'Exclusive Right To Lease' : rng.chance(0.92) ? 'Exclusive Right To Sell' : 'Exclusive Agency',
    SpecialListingConditions: f.lease ? [] : rng.chance(0.9) ? ['Standard'] : sample('SpecialListingConditions', 1, 1),
    Furnished: f.lease && home ? rng.weighted([['Unfurnished', 70], ['Furnished', 15], ['Partially', 10], ['Negotiable', 5]] as const) : null,
    LeaseConsideredYN: f.lease ? null : rng.chance(0.08),
    BuyerFinancing: status === 'Closed' && !f.lease ? sample('BuyerFinancing', 1, 2) : [],

    StreetNumber: x.streetNumber,
    StreetDirPrefix: x.dirPrefix ?? null,
    StreetName: x.streetName,
    StreetSuffix: x.streetSuffix,
    StreetDirSuffix: null,
    UnitNumber: x.unit ?? null,
    City: place.city,
    StateOrProvince: place.state,
    PostalCode: x.postalCode,
    PostalCodePlus4: rng.chance(0.6) ? rng.digits(4) : null,
    CountyOrParish: place.county,
    Country: 'US',
    UnparsedAddress: unparsed,
    Latitude: place.lat + rng.between(-0.05, 0.05),
    Longitude: place.lng + rng.between(-0.05, 0.05),
    SubdivisionName: subdivision ?? null,
    Directions: `From ${rng.pick(HIGHWAYS)}, take the ${rng.pick(STREET_NAMES)} exit and head ${rng.pick(['north', 'south', 'east', 'west'])}; turn onto ${x.streetName} ${x.streetSuffix}. ${rng.pick(['Home is on the right.', 'Property is on the left.', 'Sign on property.'])}`,
    ElementarySchool: home ? `${rng.pick(STREET_NAMES)} Elementary` : null,
    HighSchool: home ? `${place.city} ${rng.pick(['High', 'Central High', 'North High', 'South High'])}` : null,
    ParcelNumber: `${rng.digits(3)}-${rng.digits(2)}-${rng.digits(3)}-${rng.digits(3)}`,
    TaxLegalDescription: `LOT ${rng.int(1, 40)} BLOCK ${rng.int(1, 12)} ${(subdivision ?? `${place.city} ${rng.pick(['ADDITION', 'SUBDIVISION', 'TRACT'])}`).toUpperCase()}`,
    Zoning: home ? rng.pick(f.attached ? ['RM-1', 'RM-2', 'R-3'] : ['R-1', 'R-2', 'RS-6']) : f.kind === 'land' ? rng.pick(['A-1', 'A-2', 'R-1', 'PUD']) : rng.pick(['C-1', 'C-2', 'I-1', 'MU-2']),
    ZoningDescription: home ? 'Residential' : f.kind === 'land' ? rng.pick(['Agricultural', 'Residential', 'Planned Unit Development']) : rng.pick(['Commercial', 'Industrial', 'Mixed Use']),
    Topography: f.kind === 'land' ? rng.pick(['Level', 'Gently Rolling', 'Rolling', 'Sloped', 'Hilly']) : null,

    BedroomsTotal: f.bedrooms ?? null,
    BedroomsPossible: f.bedrooms !== undefined && f.basement && rng.chance(0.3) ? f.bedrooms + 1 : null,
    MainLevelBedrooms: f.bedrooms === undefined ? null : f.stories === 1 ? f.bedrooms : rng.int(0, Math.min(2, f.bedrooms)),
    BathroomsFull: f.bathsFull ?? null,
    BathroomsHalf: f.bathsHalf ?? null,
    BathroomsThreeQuarter: f.bathsThreeQuarter ?? null,
    BathroomsOneQuarter: f.bathsQuarter ?? null,
    BathroomsPartial: home ? f.bathsHalf! + f.bathsThreeQuarter! + f.bathsQuarter! : null,
    BathroomsTotalInteger: bathsTotal ?? null,
    MainLevelBathrooms: bathsTotal === undefined ? null : f.stories === 1 ? bathsTotal : Math.min(bathsTotal, rng.int(1, 2)),
    LivingArea: f.livingArea ?? null,
    LivingAreaUnits: f.livingArea !== undefined ? 'Square Feet' : null,
    AboveGradeFinishedArea: f.livingArea !== undefined ? f.livingArea - (f.belowGradeFinished ?? 0) : null,
    BelowGradeFinishedArea: f.belowGradeFinished ?? (f.basement ? 0 : null),
    BuildingAreaTotal: f.buildingArea ?? null,
    Basement: f.basement ? sample('Basement', 1, 2) : [],
    BasementYN: f.kind === 'land' ? null : f.basement,
    StoriesTotal: f.stories ?? null,
    Levels: f.stories && home ? [rng.chance(0.1) ? rng.pick(['Multi/Split', 'Tri-Level', 'Bi-Level']) : LEVELS[f.stories]] : [],
    YearBuilt: f.yearBuilt ?? null,
    YearBuiltSource: f.yearBuilt === undefined ? null : newConstruction ? 'Builder' : rng.chance(0.85) ? 'Public Records' : 'Assessor',
    NewConstructionYN: f.kind === 'land' ? null : newConstruction,
    BuilderName: newConstruction || (f.yearBuilt !== undefined && f.yearBuilt >= 2000 && rng.chance(0.3)) ? `${rng.pick(STREET_NAMES)} ${rng.pick(['Homes', 'Builders', 'Construction', 'Communities'])}` : null,
    GarageSpaces: f.kind === 'land' ? null : f.garage,
    GarageYN: f.kind === 'land' ? null : f.garage > 0,
    AttachedGarageYN: f.garage > 0 ? rng.chance(0.8) : null,
    CarportSpaces: f.carport > 0 ? f.carport : null,
    CarportYN: f.kind === 'land' ? null : f.carport > 0,
    CoveredSpaces: f.kind === 'land' ? null : f.garage + f.carport,
    ParkingTotal: f.kind === 'land' ? null : f.garage + f.carport + (f.kind === 'commercial' ? rng.int(4, 60) : rng.int(0, 2)),
    FireplacesTotal: home ? f.fireplaces : null,
    FireplaceYN: home ? f.fireplaces > 0 : null,
    FireplaceFeatures: home && f.fireplaces > 0 ? sample('FireplaceFeatures', 1, 2) : [],
    LotSizeAcres: acres ?? null,
    LotSizeSquareFeet: sqft ?? null,
    LotSizeArea: acres === undefined ? null : acres >= 1 ? acres : sqft,
    LotSizeUnits: acres === undefined ? null : acres >= 1 ? 'Acres' : 'Square Feet',
    LotSizeDimensions: sqft !== undefined && acres! < 1 ? (() => { const w = rng.int(4, 12) * 10; return `${w} x ${Math.round(sqft / w)}`; })() : null,

    AssociationYN: f.kind === 'home' ? f.hoa : null,
    AssociationName: f.hoa ? `${subdivision ?? `${x.streetName} ${rng.pick(['Place', 'Commons', 'Village'])}`} ${rng.pick(['HOA', 'Homeowners Association', 'Owners Association'])}` : null,
    AssociationFee: f.hoa ? (f.stacked || f.subType === 'Townhouse' ? rng.int(18, 70) * 10 : rng.int(3, 15) * 10) : null,
    AssociationFeeFrequency: f.hoa ? (rng.chance(0.85) ? 'Monthly' : rng.pick(['Quarterly', 'Annually'])) : null,
    AssociationFeeIncludes: f.hoa ? sample('AssociationFeeIncludes', 1, 4) : [],
    AssociationAmenities: f.hoa ? sample('AssociationAmenities', 0, 4) : [],
    TaxAssessedValue: f.lease ? null : assessed,
    TaxAnnualAmount: f.lease ? null : assessed * rng.between(0.005, 0.021),
    TaxYear: f.lease ? null : new Date(Math.min(t.contractDate, BASE_TIME - 200 * DAY)).getUTCFullYear() - 1,

    AccessibilityFeatures: accessibility,
    Cooling: home ? rng.sample(['Central Air', 'Ceiling Fan(s)', 'Evaporative Cooling', 'Heat Pump', 'Window Unit(s)', 'Ductless', 'Whole House Fan', 'Zoned'], rng.int(0, 2)) : f.kind === 'commercial' ? ['Central Air'] : [],
    Heating: f.kind === 'land' ? [] : rng.sample(['Forced Air', 'Natural Gas', 'Central', 'Electric', 'Heat Pump', 'Radiant Floor', 'Baseboard', 'Fireplace(s)'], rng.int(1, 2)),
    CurrentUse: home ? [f.type === 'Residential Income' ? 'Multi-Family' : f.type === 'Farm' ? 'Farm' : rng.pick(['Residential', 'Single Family'])]
      : f.kind === 'land' ? rng.sample(['Agricultural', 'Development', 'Grazing', 'Recreational', 'Residential', 'Timber', 'Vacant', 'Pasture'], rng.int(1, 2))
        : [rng.pick(['Office', 'Retail', 'Industrial', 'Warehouse', 'Commercial', 'Mixed Use'])],
    ListingTerms: f.lease ? [] : rng.sample(['Cash', 'Conventional', 'FHA', 'VA Loan', 'USDA Loan', '1031 Exchange', 'Owner Will Carry'], rng.int(1, 4)),
    Possession: f.lease ? ['Rental Agreement'] : [rng.pick(['Close Of Escrow', 'Close Plus 30 Days', 'Negotiable', 'Close Plus 3 to 5 Days', 'Seller Rent Back'])],
    PetsAllowed: f.lease ? rng.sample(['Cats OK', 'Dogs OK', 'Breed Restrictions', 'Number Limit', 'Size Limit'], rng.int(1, 3)) : [],

    ListAgentKey: agent.key,
    ListAgentMlsId: agent.mlsId,
    ListAgentFirstName: agent.first,
    ListAgentLastName: agent.last,
    ListAgentFullName: agent.fullName,
    ListAgentEmail: agent.email,
    ListAgentDirectPhone: agent.phone,
    ListOfficeKey: office.key,
    ListOfficeMlsId: office.mlsId,
    ListOfficeName: office.name,
    ListOfficePhone: office.phone,
    CoListAgentKey: coList?.key ?? null,
    CoListAgentMlsId: coList?.mlsId ?? null,
    CoListAgentFirstName: coList?.first ?? null,
    CoListAgentFullName: coList?.fullName ?? null,
    CoListOfficeKey: coList?.office.key ?? null,
    CoListOfficeMlsId: coList?.office.mlsId ?? null,
    CoListOfficeName: coList?.office.name ?? null,
    BuyerAgentKey: buyer?.key ?? null,
    BuyerAgentMlsId: buyer?.mlsId ?? null,
    BuyerAgentFullName: buyer?.fullName ?? null,
    BuyerOfficeKey: buyer?.office.key ?? null,
    BuyerOfficeMlsId: buyer?.office.mlsId ?? null,
    BuyerOfficeName: buyer?.office.name ?? null,
    CoBuyerAgentKey: coBuyer?.key ?? null,
    CoBuyerOfficeKey: coBuyer?.office.key ?? null,

    PublicRemarks: publicRemarks(rng, {
      subType: f.subType, city: place.city, propertyType: f.type, bedrooms: f.bedrooms, bathrooms: f.bathsFull, livingArea: f.livingArea, acres: f.acres,
    }),
    PrivateRemarks: rng.chance(0.88) ? privateRemarks(rng) : null,
    ShowingInstructions: rng.chance(0.9) ? showingInstructions(rng, agent.phone) : null,
    OwnerName: rng.chance(0.85)
      ? rng.weighted([[`${owner.first} ${owner.last}`, 70], [`${owner.last} Family Trust`, 15], [`${rng.pick(STREET_NAMES)} Holdings LLC`, 15]] as const)
      : null,
    LockBoxSerialNumber: rng.chance(0.8) ? `${rng.pick(['SB', 'KB', 'SL'])}${rng.digits(8)}` : null,
    InternetEntireListingDisplayYN: !rng.chance(0.03),
    InternetAddressDisplayYN: !rng.chance(0.04),
    InternetAutomatedValuationDisplayYN: !rng.chance(0.05),
    ListingURL: `https://www.example.com/listing/${core.key}`,
    VirtualTourURLUnbranded: x.media.tourUnbranded,
    VirtualTourURLBranded: x.media.tourBranded,
    OriginatingSystemKey: core.key,
    OriginatingSystemName: 'Demo MLS',
    SourceSystemKey: core.key,
    SourceSystemName: 'Demo MLS',
  };
  if (f.kind === 'land') for (const name of STRUCTURE_ONLY) if (!(name in given)) given[name] = null;
  return maker.make(Object.assign(given, identity), ctx);
}
