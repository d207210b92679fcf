/**
 * `GET <Set>/<Namespace>.Digest(From=…,To=…,Parts=…)` (docs/replication.md, "Digest"): for a key range of a set
 * with a replication timestamp, its records' count and hash, split into sub-ranges, so a replica finds the ranges
 * where its copy differs and fetches only those. Its records are those of the collection query
 * `$filter=<key> ge From and <key> lt To&$select=<key>,<timestamp>&$orderby=<key>` the client may send itself:
 * planned through the same parse, bind, licence and record store (query/digest-call.ts), so it counts exactly
 * what the client's licence shows it, in the order and comparison a `$filter` on the key has. Charged as a query.
 */
import { Errors } from '../../errors/catalogue';
import { digestFieldsOf, digestRangeType, type EntitySetSpec } from '../../model/service-model';
import { DIGEST_FUNCTION, digestQueryOptions, parseDigestCall } from '../../query/digest-call';
import { systemOptionName } from '../../query/parse-options';
import { SERVICE_ROOT, type RequestContext } from '../request-context';
import { DigestRange, digestRanges } from './digest-ranges';
import type { ResourceRequests } from './resource-handlers';
import { sendJson } from './response';

/** Records read per statement: a key and a timestamp each, so a batch stays a few hundred kilobytes. */
const DIGEST_BATCH = 5000;

export class DigestRequests {
  constructor(private readonly requests: ResourceRequests, private readonly namespace: string, private readonly writeStallMs: number) {}

  /** `params[0]`: the text inside the call's parentheses; undefined when it was called without them. */
  async digest(ctx: RequestContext, set: EntitySetSpec, params: readonly string[]): Promise<void> {
    const fields = digestFieldsOf(set);
    // A timestamp the licence hides is not hashed either: for that client the set has no digest.
    if (!fields || ctx.licence.hiddenIn(set).has(fields.timestamp.name)) throw Errors.ResourceNotFound(ctx.pathname, SERVICE_ROOT);
    for (const name of Object.keys(ctx.query)) {
      const option = systemOptionName(name);
      if (option && option !== 'format') throw Errors.OptionNotApplicable(name, `${DIGEST_FUNCTION}, which answers ranges of keys`);
    }
    const call = parseDigestCall(params[0] ?? '', fields.key.type, ctx.query);
    const read = this.requests.plans.unkept(ctx, set, digestQueryOptions(fields, call));
    const ranges = await digestRanges(read, fields, call, await read.count(), { batch: DIGEST_BATCH });
    await this.requests.charge(ctx, { transaction: 'query', chargedExpansions: 0 });
    const context = ctx.context(`${ctx.root}/$metadata#Collection(${this.namespace}.${digestRangeType(fields.key)})`);
    const int64Keys = ctx.format.ieee754 && LARGE_NUMBERS.has(fields.key.type);
    sendJson(ctx, rangesBody(context, ranges, ctx.format.ieee754, int64Keys), this.writeStallMs);
  }
}

/** The types IEEE754Compatible writes as strings. */
const LARGE_NUMBERS: ReadonlySet<string> = new Set(['Edm.Int64', 'Edm.Decimal']);

/** The ranges as a collection of a complex type; Int64 values as strings where the client asked for IEEE754Compatible. */
function rangesBody(context: string | undefined, ranges: readonly DigestRange[], ieee754: boolean, int64Keys: boolean): string {
  const text = (k: DigestRange['From']) => (k === null ? null : String(k));
  const value = ieee754 ? ranges.map((r) => ({ ...r, ...int64Keys ? { From: text(r.From), To: text(r.To) } : {}, Count: String(r.Count) })) : ranges;
  return JSON.stringify(context === undefined ? { value } : { '@odata.context': context, value });
}
