/**
 * The life of one listing up to the demo clock: entry, market dates, price changes and the status changes
 * that lead to its current status. Everything that carries a date or timestamp in the listing and its
 * history records comes from here, so they agree with each other.
 *
 * A seed data table: buildTimeline is one walk through a listing's life, step after step in date order;
 * cutting it into pieces would hide the order that makes its dates agree.
 */
import { BASE_TIME, DAY, HISTORY_START, HOUR, MINUTE, startOfDay } from './calendar';
import type { SeededRandom } from './random';

/** The listing fields a timeline's events change (RESO's names): a history record names one of them. */
export const EVENT_FIELDS = ['StandardStatus', 'ListPrice'] as const;

export interface ListingEvent {
  readonly at: number;
  /** A ChangeType lookup value. */
  readonly changeType: string;
  readonly field: typeof EVENT_FIELDS[number];
  readonly previous?: string;
  readonly next: string;
}

export interface Timeline {
  readonly entry: number;
  readonly contractDate: number;
  readonly onMarket: number;
  /** When the listing left the market (under contract, or off market), if it did. */
  readonly offMarket?: number;
  readonly purchaseContract?: number;
  readonly close?: number;
  readonly expiration: number;
  readonly withdrawn?: number;
  readonly cancellation?: number;
  readonly events: readonly ListingEvent[];
  readonly originalPrice: number;
  readonly listPrice: number;
  readonly previousPrice?: number;
  readonly closePrice?: number;
  readonly daysOnMarket: number;
  /** The listing's ModificationTimestamp: at or after every event, and the ceiling for its child records. */
  readonly modified: number;
}

/** Days before the demo clock a listing of each status entered the market (recent listings). */
const ENTRY_DAYS_AGO: Readonly<Record<string, readonly [number, number]>> = {
  'Coming Soon': [1, 21],
  Active: [1, 150],
  'Active Under Contract': [10, 120],
  Pending: [15, 150],
  Hold: [30, 200],
  Closed: [45, 1080],
  Expired: [100, 1080],
  Withdrawn: [30, 1000],
  Canceled: [30, 1000],
  Delete: [5, 1000],
};

const EARLY_FROM = Date.UTC(2017, 0, 15);
const EARLY_TO = Date.UTC(2019, 11, 20);
const LATEST = BASE_TIME - HOUR;

/** Rounds a price the way listings are priced: to the thousand, often just under (499,900). */
export function roundPrice(p: number, rng: SeededRandom): number {
  if (p < 20_000) return Math.max(25, Math.round(p / 25) * 25);
  const r = Math.round(p / 5000) * 5000;
  return rng.chance(0.3) ? r - 100 : r;
}

export function buildTimeline(rng: SeededRandom, status: string, early: boolean, originalPrice: number, lease: boolean): Timeline {
  const [minAgo, maxAgo] = ENTRY_DAYS_AGO[status] ?? [1, 365];
  const entryDay = early
    ? startOfDay(rng.between(EARLY_FROM, EARLY_TO))
    : startOfDay(BASE_TIME - rng.int(minAgo, maxAgo) * DAY);
  const entry = entryDay + rng.int(14, 23) * HOUR + rng.int(0, 59) * MINUTE + rng.int(0, 59_999);
  const contractDate = entryDay - rng.int(0, 3) * DAY;
  const onMarket = status === 'Coming Soon' ? startOfDay(BASE_TIME) + rng.int(3, 21) * DAY : entryDay;

  /** A time after `start` by about the given days, always before the demo clock. */
  const after = (start: number, minDays: number, maxDays: number): number => {
    const t = start + rng.between(minDays, maxDays) * DAY;
    return t < LATEST ? Math.floor(t) : Math.floor(start + (LATEST - start) * rng.between(0.5, 0.95));
  };

  const events: ListingEvent[] = [{ at: entry, changeType: 'New Listing', field: 'StandardStatus', next: status === 'Coming Soon' ? 'Coming Soon' : 'Active' }];
  const statusEvent = (at: number, changeType: string, previous: string, next: string) =>
    events.push({ at, changeType, field: 'StandardStatus', previous, next });

  let offMarket: number | undefined;
  let purchaseContract: number | undefined;
  let close: number | undefined;
  let withdrawn: number | undefined;
  let cancellation: number | undefined;
  let expiration = contractDate + 180 * DAY;
  switch (status) {
    case 'Active':
      if (rng.chance(0.08) && LATEST - entry > 20 * DAY) {
        const fellThrough = after(entry, 5, 30);
        statusEvent(fellThrough, 'Active Under Contract', 'Active', 'Active Under Contract');
        statusEvent(after(fellThrough, 3, 20), 'Back On Market', 'Active Under Contract', 'Active');
      }
      break;
    case 'Active Under Contract':
      offMarket = after(entry, 2, 60);
      statusEvent(offMarket, 'Active Under Contract', 'Active', 'Active Under Contract');
      break;
    case 'Pending': {
      let from = 'Active';
      offMarket = after(entry, 3, 90);
      if (rng.chance(0.5)) {
        statusEvent(offMarket, 'Active Under Contract', 'Active', 'Active Under Contract');
        from = 'Active Under Contract';
      }
      purchaseContract = from === 'Active' ? offMarket : after(offMarket, 2, 10);
      statusEvent(purchaseContract, 'Pending', from, 'Pending');
      break;
    }
    case 'Closed':
      offMarket = purchaseContract = after(entry, 3, 120);
      statusEvent(purchaseContract, 'Pending', 'Active', 'Pending');
      close = after(purchaseContract, 20, 45);
      statusEvent(close, 'Closed', 'Pending', 'Closed');
      break;
    case 'Expired':
      offMarket = expiration = after(contractDate, 90, 180);
      statusEvent(expiration, 'Expired', 'Active', 'Expired');
      break;
    case 'Withdrawn':
      offMarket = withdrawn = after(entry, 7, 120);
      statusEvent(withdrawn, 'Withdrawn', 'Active', 'Withdrawn');
      break;
    case 'Canceled':
      offMarket = cancellation = after(entry, 7, 150);
      statusEvent(cancellation, 'Canceled', 'Active', 'Canceled');
      break;
    case 'Hold':
      offMarket = after(entry, 10, 60);
      statusEvent(offMarket, 'Hold', 'Active', 'Hold');
      break;
    case 'Delete': {
      const at = early ? after(HISTORY_START, 0, 1000) : after(entry, 1, 60);
      statusEvent(at, 'Deleted', 'Active', 'Delete');
      break;
    }
  }

  // Price reductions while on the market.
  const marketEnd = offMarket ?? LATEST;
  let price = originalPrice;
  let previousPrice: number | undefined;
  if (status !== 'Coming Soon' && marketEnd - entry > 30 * DAY) {
    const changes = rng.weighted([[0, 55], [1, 30], [2, 15]] as const);
    const times = Array.from({ length: changes }, () => Math.floor(rng.between(entry + DAY, marketEnd - HOUR))).sort((a, b) => a - b);
    for (const at of times) {
      const next = roundPrice(price * rng.between(0.93, 0.98), rng);
      if (next >= price) continue;
      events.push({ at, changeType: 'Price Change', field: 'ListPrice', previous: String(price), next: String(next) });
      previousPrice = price;
      price = next;
    }
  }
  events.sort((a, b) => a.at - b.at);

  const lastEvent = events[events.length - 1].at;
  const modified = Math.floor(rng.between(Math.max(lastEvent, HISTORY_START), BASE_TIME - MINUTE));
  const daysOnMarket = status === 'Coming Soon' ? 0 : Math.max(0, Math.floor(((offMarket ?? BASE_TIME) - onMarket) / DAY));
  const closePrice = close !== undefined ? (lease ? price : roundPrice(price * rng.between(0.94, 1.04), rng)) : undefined;

  return {
    entry, contractDate, onMarket, offMarket, purchaseContract, close, expiration, withdrawn, cancellation,
    events, originalPrice, listPrice: price, previousPrice, closePrice, daysOnMarket, modified,
  };
}
