/**
 * Records on their way out, as bytes: each put in the negotiated format where the plan says the format changes it
 * (entity-shape.ts: decoded, shaped, encoded once), else left as the stored bytes it was read as; and $expand on a
 * page of records: one batched read per navigation for the whole page (never one per record), prepared with the
 * request's plan (request-plans.ts), each record's related records spliced in as an array (`[]` when it has none):
 * read as stored, a parent's related records arrive joined by the database as one run of bytes, never decoded.
 * A single-valued navigation's related record is spliced in as itself, or `null` when the record names none the
 * client may see: the batch's read takes the keys its records name (read beside them: ReadPlan.links).
 */
import type { EntitySetSpec } from '../../model/service-model';
import { without } from '../../foundation/bench-without';
import type { ExpansionPlan } from '../../query/request-plan';
import { linkedKey } from '../../query/related-records';
import type { RecordLinks, StoredRecord } from '../../storage/records/record-store';
import type { EntityShaper } from './entity-shape';
import type { Expansion } from './request-plans';
import type { RecordBytes } from './response';

/** The records a batch's expansions are read for: their keys, and their links when the plan reads any. */
export interface Parents {
  readonly keys: readonly unknown[];
  readonly links?: readonly RecordLinks[];
}

/** The set a page's records belong to, and the shaper for the client's format (undefined: as stored). */
export interface RecordFormat {
  readonly set: EntitySetSpec;
  readonly shaper?: EntityShaper;
}

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('{');
const CLOSE = Buffer.from('}');
const CLOSE_ARRAY = Buffer.from(']');
const NULL = Buffer.from('null');

export function textOf(record: StoredRecord): string {
  return typeof record === 'string' ? record : record.toString('utf8');
}

export function bytesOf(record: StoredRecord): Buffer {
  return typeof record === 'string' ? Buffer.from(record, 'utf8') : record;
}

/**
 * A batch of records (`parents`: their keys and links) as the bytes written, with their expansions: an expanded
 * record as the pieces it is spliced from. `kept`: the records are a key fetch's or a first page's, whose related
 * records are looked for in memory (storage/prepared-reads.ts).
 */
export async function withExpansions(
  expansions: readonly Expansion[], parents: Parents, records: readonly StoredRecord[], format: RecordFormat, kept: boolean,
): Promise<RecordBytes[]> {
  const { keys } = parents;
  const shaper = format.shaper;
  const names = expansions.map((e) => e.plan.navigation);
  const own = shaper ? records.map((r, i) => shaper.entity(format.set, textOf(r), keys[i], names)) : records;
  if (expansions.length === 0 || records.length === 0) return own.map(bytesOf);
  // What each record's related records are found by: its key, or (single-valued) the key it names, if any.
  const lookups = expansions.map(({ plan }) => lookupsOf(plan, parents));
  const related = await Promise.all(expansions.map((e, n) => e.read.of(distinct(lookups[n]), kept)));
  const heads = expansions.map(({ plan }) => Buffer.from(`${JSON.stringify(plan.navigation)}:${plan.single ? '' : '['}`));
  return own.map((record, i) => {
    const bytes = bytesOf(record);
    const pieces = bytes.length > 2 ? [bytes.subarray(0, bytes.length - 1), COMMA] : [OPEN];
    expansions.forEach(({ plan }, n) => {
      if (n > 0) pieces.push(COMMA);
      if (shaper) pieces.push(Buffer.from(shaper.beforeExpansion(format.set, keys[i], plan.navigation)));
      pieces.push(heads[n]);
      const lookup = lookups[n][i];
      const children = lookup === undefined ? undefined : related[n].get(lookup);
      if (Buffer.isBuffer(children)) pieces.push(children);
      else if (children?.length) pieces.push(Buffer.from((shaper ? children.map((c) => shaper.entity(plan.set, c)) : children).join(',')));
      else if (plan.single) pieces.push(NULL);
      if (!plan.single) pieces.push(CLOSE_ARRAY);
    });
    pieces.push(CLOSE);
    return without('byte-pieces') ? Buffer.concat(pieces) : pieces;
  });
}

/**
 * The key each parent's related records are found by: its own (a collection), or the key of the one record it
 * names (single-valued; undefined: it names none, or the licence hides how: ExpansionPlan.single).
 */
function lookupsOf(plan: ExpansionPlan, parents: Parents): readonly unknown[] {
  if (!plan.single) return parents.keys;
  const link = plan.single.link;
  const links = parents.links;
  if (!link || !links) return parents.keys.map(() => undefined);
  return links.map((row) => linkedKey(link, (f) => row[f.column!]));
}

/** The keys given, each once, without undefined: a read's parameters (many media name one listing). */
function distinct(keys: readonly unknown[]): unknown[] {
  return [...new Set(keys)].filter((k) => k !== undefined);
}
