/**
 * What must hold across the whole set of listings, decided before any listing is built: the mix of
 * statuses (with exact shares, so small sets still show every case the brief asks for), which listings
 * carry accessibility features, and which were contracted before 2020. One byte per listing.
 */
import { mixSeed, SeededRandom } from './random';

const SALT_PLAN = 21;

/** StandardStatus shares (percent). MlsStatus carries the same value. */
const STATUS_SHARES: readonly (readonly [string, number])[] = [
  ['Active', 54], ['Active Under Contract', 5], ['Pending', 8], ['Closed', 15], ['Coming Soon', 4],
  ['Expired', 4], ['Withdrawn', 3], ['Canceled', 3], ['Hold', 1], ['Delete', 3],
];

/** Statuses of listings no longer on the market: the only ones that may date from before 2020. */
export const OFF_MARKET = new Set(['Closed', 'Expired', 'Withdrawn', 'Canceled', 'Delete']);

export type AccessibilityMix = 'none' | 'single' | 'multiple';
const ACCESSIBILITY: readonly AccessibilityMix[] = ['none', 'single', 'multiple'];

export interface ListingPlan {
  readonly count: number;
  status(i: number): string;
  accessibility(i: number): AccessibilityMix;
  /** Listing contract date before 2020-01-01. */
  contractedBefore2020(i: number): boolean;
}

/**
 * Exactly `n` categories by share (largest remainder), each raised to its minimum (taken from the largest),
 * in random order.
 */
function allocate(rng: SeededRandom, n: number, shares: readonly number[], minimums: readonly number[]): Uint8Array {
  const total = shares.reduce((a, b) => a + b, 0);
  const exact = shares.map((s) => (n * s) / total);
  const counts = exact.map(Math.floor);
  const order = exact.map((e, i) => [e - Math.floor(e), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let k = 0; counts.reduce((a, b) => a + b, 0) < n; k++) counts[order[k % order.length][1]]++;
  for (let i = 0; i < counts.length; i++) {
    while (counts[i] < minimums[i]) {
      const largest = counts.indexOf(Math.max(...counts));
      if (largest === i || counts[largest] <= minimums[largest]) break;
      counts[largest]--;
      counts[i]++;
    }
  }
  const out = new Uint8Array(n);
  let at = 0;
  counts.forEach((c, category) => { out.fill(category, at, at + c); at += c; });
  return rng.shuffle(out);
}

/** `admits`: whether the listings' StandardStatus may hold a status (all may where the dictionary has none). */
export function planListings(n: number, seed: number, admits: (status: string) => boolean): ListingPlan {
  const rng = new SeededRandom(mixSeed(seed, 0, SALT_PLAN));
  const known = STATUS_SHARES.filter(([s]) => admits(s));
  const shares = known.length ? known : STATUS_SHARES;
  const names = shares.map(([s]) => s);
  const minimums = names.map((s) => (s === 'Active Under Contract' ? 1 : s === 'Delete' && n >= 20 ? 1 : 0));
  const statuses = allocate(rng, n, shares.map(([, w]) => w), minimums);

  const accessibility = allocate(rng, n, [82, 10, 8], n >= 10 ? [0, 1, 1] : [0, 0, 0]);

  const early = new Uint8Array(n);
  let earlyCount = 0;
  for (let i = 0; i < n; i++) {
    if (OFF_MARKET.has(names[statuses[i]]) && rng.chance(0.4)) { early[i] = 1; earlyCount++; }
  }
  // Contract dates on both sides of 2019-12-31 whenever there are two listings: an off-market one goes early,
  // or, if none is off market, a listing other than an under-contract one is closed early.
  if (earlyCount === 0 && n >= 2) {
    let pick = -1;
    for (let i = 0; i < n && pick < 0; i++) if (OFF_MARKET.has(names[statuses[i]])) pick = i;
    const closed = names.indexOf('Closed');
    if (pick < 0 && closed >= 0) {
      for (let i = n - 1; i >= 0 && pick < 0; i--) if (names[statuses[i]] !== 'Active Under Contract') pick = i;
      if (pick >= 0) statuses[pick] = closed;
    }
    if (pick >= 0) early[pick] = 1;
  }

  return {
    count: n,
    status: (i) => names[statuses[i]],
    accessibility: (i) => ACCESSIBILITY[accessibility[i]],
    contractedBefore2020: (i) => early[i] === 1,
  };
}
