/**
 * Records on their way out, as bytes: each put in the negotiated format where the plan says the format changes it
 * (entity-shape.ts: decoded, shaped, encoded once), else left as the stored bytes it was read as; and $expand on a
 * page of records: one batched read per navigation for the whole page (never one per record), prepared with the
 * request's plan (request-plans.ts), each record's related records spliced in as an array (`[]` when it has none):
 * read as stored, a parent's related records arrive joined by the database as one run of bytes, never decoded.
 */
import type { EntitySetSpec } from '../model/service-model';
import type { StoredRecord } from '../storage/record-store';
import type { EntityShaper } from './entity-shape';
import type { Expansion } from './request-plans';
import type { RecordBytes } from './response';

/** The set a page's records belong to, and the shaper for the client's format (undefined: as stored). */
export interface RecordFormat {
  readonly set: EntitySetSpec;
  readonly shaper?: EntityShaper;
}

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('{');
const CLOSE = Buffer.from('}');
const CLOSE_ARRAY = Buffer.from(']');

export function textOf(record: StoredRecord): string {
  return typeof record === 'string' ? record : record.toString('utf8');
}

export function bytesOf(record: StoredRecord): Buffer {
  return typeof record === 'string' ? Buffer.from(record, 'utf8') : record;
}

/**
 * A batch of records (`keys`: theirs) as the bytes written, with their expansions: an expanded record as the
 * pieces it is spliced from. `kept`: the records are a key fetch's or a first page's, whose related records are
 * looked for in memory (storage/prepared-reads.ts).
 */
export async function withExpansions(
  expansions: readonly Expansion[], keys: readonly unknown[], records: readonly StoredRecord[], format: RecordFormat, kept: boolean,
): Promise<RecordBytes[]> {
  const shaper = format.shaper;
  const names = expansions.map((e) => e.plan.navigation);
  const own = shaper ? records.map((r, i) => shaper.entity(format.set, textOf(r), keys[i], names)) : records;
  if (expansions.length === 0 || records.length === 0) return own.map(bytesOf);
  const related = await Promise.all(expansions.map((e) => e.read.of(keys, kept)));
  const heads = names.map((n) => Buffer.from(`${JSON.stringify(n)}:[`));
  return own.map((record, i) => {
    const bytes = bytesOf(record);
    const pieces = bytes.length > 2 ? [bytes.subarray(0, bytes.length - 1), COMMA] : [OPEN];
    expansions.forEach(({ plan }, n) => {
      if (n > 0) pieces.push(COMMA);
      if (shaper) pieces.push(Buffer.from(shaper.beforeExpansion(format.set, keys[i], plan.navigation)));
      pieces.push(heads[n]);
      const children = related[n].get(keys[i]);
      if (Buffer.isBuffer(children)) pieces.push(children);
      else if (children) pieces.push(Buffer.from((shaper ? children.map((c) => shaper.entity(plan.set, c)) : children).join(',')));
      pieces.push(CLOSE_ARRAY);
    });
    pieces.push(CLOSE);
    return pieces;
  });
}
