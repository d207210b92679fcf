/** What the request scenarios of bench/versus.ts and bench/mechanisms.ts ask for: real keys, and the middle listing's timestamp. */
import { openDatabase } from '../src/storage/db/open-database';

export interface ListingFacts {
  /** 1,000 ListingKeys spread over the whole set, in key order. */
  readonly keys: string[];
  /** The ModificationTimestamp half the listings are later than. */
  readonly middle: string;
  readonly listings: number;
}

export async function listingFacts(url: string): Promise<ListingFacts> {
  const db = openDatabase(url);
  try {
    const keys = (await db.all('SELECT ListingKey AS k FROM Property ORDER BY ListingKey')).map((r) => String(r.k));
    const sample = Array.from({ length: 1000 }, (_, i) => keys[Math.floor((i * keys.length) / 1000)]);
    const middle = keys.length === 0 ? ''
      : (await db.all('SELECT ModificationTimestamp AS t FROM Property ORDER BY ModificationTimestamp, ListingKey LIMIT 1 OFFSET ?', [Math.floor(keys.length / 2) - 1]))[0].t;
    return { keys: sample, middle: String(middle), listings: keys.length };
  } finally {
    await db.close();
  }
}
