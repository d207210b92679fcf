/**
 * A digest's ranges (docs/replication.md, "Digest"): the records of [From, To) read in key order, a batch at a
 * time by keyset (never the whole range in memory), cut into up to `parts` consecutive sub-ranges of about equal
 * count, each with its count and the sum of its records' hashes (foundation/replica-hash.ts). The sub-ranges tile
 * [From, To): the first begins at From, each next one at its first record's key, the last ends at To; so a record
 * a replica holds and the service does not still falls in exactly one of them.
 */
import { EMPTY_RANGE_HASH, RangeHash, recordHash } from '../../foundation/replica-hash';
import type { DigestFields } from '../../model/service-model';
import type { DigestCall, KeyValue } from '../../query/digest-call';
import type { PreparedRead } from '../../storage/records/record-store';

export interface DigestRange {
  readonly From: KeyValue | null;
  readonly To: KeyValue | null;
  readonly Count: number;
  readonly Hash: string;
}

/** What the read of a digest holds to. */
export interface DigestScan {
  /** Records read per statement. */
  readonly batch: number;
}

/** The ranges of `call`, over `read` (its records: the key and the timestamp, in key order); `total`: their count. */
export async function digestRanges(read: PreparedRead, fields: DigestFields, call: DigestCall, total: number, scan: DigestScan): Promise<DigestRange[]> {
  const parts = Math.max(1, Math.min(call.parts, total));
  const ranges: DigestRange[] = [];
  let from: KeyValue | null = call.from;
  let count = 0;
  let sum = new RangeHash();
  let seen = 0;
  // The index of the record that opens the next sub-range (total + 1: none does).
  const opening = (i: number) => (i < parts ? Math.floor((i * total) / parts) : Number.MAX_SAFE_INTEGER);
  let next = opening(ranges.length + 1);
  let after: readonly unknown[] | undefined;
  for (;;) {
    const page = await read.values({ after, limit: scan.batch });
    for (const record of page.values) {
      const key = record[fields.key.name] as KeyValue;
      if (seen === next && count > 0) {
        ranges.push({ From: from, To: key, Count: count, Hash: sum.hex() });
        from = key;
        count = 0;
        sum = new RangeHash();
        next = opening(ranges.length + 1);
      }
      sum.add(recordHash(key, record[fields.timestamp.name]));
      count++;
      seen++;
    }
    if (page.values.length < scan.batch) break;
    after = page.sortValues[page.sortValues.length - 1];
  }
  ranges.push({ From: from, To: call.to, Count: count, Hash: count ? sum.hex() : EMPTY_RANGE_HASH });
  return ranges;
}
