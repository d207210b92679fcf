/**
 * $select, and the fields a licence hides, bound: which fields a response's records carry. How stored rows become
 * those records is storage's (record-codec.ts, recordReader): this says what, not how it is read.
 */
import type { EntitySetSpec, FieldSpec } from '../model/service-model';

export type Projection =
  /** Whole records, as stored. */
  | { readonly kind: 'whole'; readonly contextSuffix: '' }
  /** `$select`: these fields in this order, each present (null, or [] for a collection, when the record has none). */
  | { readonly kind: 'selected'; readonly fields: readonly FieldSpec[]; readonly contextSuffix: string }
  /** Whole records less the fields a licence hides: these, as stored. */
  | { readonly kind: 'unhidden'; readonly fields: readonly FieldSpec[]; readonly contextSuffix: '' };

export const WHOLE_RECORD: Projection = { kind: 'whole', contextSuffix: '' };

/**
 * `contextSuffix`: `(A,B)` for the context URL, or '' for whole records. `hidden`: fields this client may not see;
 * whole records then lose them (the client's metadata lacks them too).
 */
export function projection(set: EntitySetSpec, selected: readonly FieldSpec[] | undefined, hidden?: ReadonlySet<string>): Projection {
  if (selected) return { kind: 'selected', fields: selected, contextSuffix: `(${selected.map((f) => f.name).join(',')})` };
  if (!hidden?.size) return WHOLE_RECORD;
  return { kind: 'unhidden', fields: set.fields.filter((f) => !hidden.has(f.name)), contextSuffix: '' };
}
