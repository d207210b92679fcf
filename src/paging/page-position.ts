/**
 * Whether a position read from a `$skiptoken` can be the sort values of a stored row in the query's order. A
 * token that opens under the secret is still only as trustworthy as whoever holds the secret (an operator's
 * script, a leaked PAGING_SECRET, a token from another version): before its values reach a statement they must
 * have the order's length and each the stored form of its field (record-codec.ts writes only these), so a
 * forged position is refused as SkipTokenInvalid instead of failing in the database driver.
 */
import { isDate, normaliseTimestamp } from '../model/edm-values';
import type { FieldSpec } from '../model/service-model';
import type { BoundOrder } from '../query/bound';

/** Why the position cannot be one of this order's rows, or undefined when it can. */
export function positionProblem(order: readonly BoundOrder[], last: readonly unknown[], returned: unknown): string | undefined {
  if (!Number.isSafeInteger(returned) || (returned as number) < 0) return 'counts the records returned so far wrongly';
  if (last.length !== order.length) return `holds ${last.length} sort values where this query's order has ${order.length}`;
  const wrong = order.findIndex((o, i) => !storedForm(o.field, last[i]));
  return wrong < 0 ? undefined : `holds a value that ${order[wrong].field.name} cannot have`;
}

/** `v` as record-codec.ts stores a value of `f` in its column (and as the drivers read it back). */
function storedForm(f: FieldSpec, v: unknown): boolean {
  if (v === null) return f.nullable;
  switch (f.type) {
    case 'Edm.String':
    case 'Edm.Guid':
    case 'Edm.TimeOfDay':
      return typeof v === 'string' && (f.maxLength === undefined || v.length <= f.maxLength);
    case 'Edm.Boolean':
      return v === 0 || v === 1;
    case 'Edm.Int16':
    case 'Edm.Int32':
    case 'Edm.Int64':
      return Number.isSafeInteger(v);
    case 'Edm.Decimal':
    case 'Edm.Double':
      return typeof v === 'number' && Number.isFinite(v);
    case 'Edm.Date':
      return typeof v === 'string' && isDate(v);
    case 'Edm.DateTimeOffset':
      return typeof v === 'string' && normaliseTimestamp(v) === v;
  }
}
