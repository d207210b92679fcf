/**
 * Which vocabularies' annotations a metadata document carries, as a client asks with OData's include-annotations
 * preference, which applies to "a request for data or metadata" (OData 4.01 Part 1 §8.2.8.4):
 * `Prefer: odata.include-annotations="*,-RESO.*"` asks for every annotation but RESO's. Without it, a document
 * carries all of them. The documents use terms of three vocabularies, and the choice is made per vocabulary:
 * `*`, `-*`, `<namespace or alias>.*` (a namespace's terms and its nested namespaces'), `-<…>.*`, and a term's own
 * name for a vocabulary of one term (RESO.OData.Metadata.LookupName). The most specific item wins (a term, then the
 * longest namespace, then `*`); a vocabulary no item names is left out, as the preference lists what to include.
 * A preference naming anything else (one Capabilities term of several) is not applied: a preference may be
 * ignored, and Preference-Applied then says nothing of it.
 *
 * Why a client wants it: SAP CAP's `cds import` warns once per annotation whose vocabulary is not among the OASIS
 * and SAP ones it knows, whether the document declares the term (as this one does) or references it; RESO
 * publishes no vocabulary document to reference. A document without RESO's annotations imports silently.
 */
import { LOOKUP_NAME_TERM } from './terms';

export interface AnnotationChoice {
  readonly capabilities: boolean;
  readonly core: boolean;
  /** RESO.OData.Metadata.LookupName on lookup fields, and the term's declaration. */
  readonly lookupNames: boolean;
}

export const ALL_ANNOTATIONS: AnnotationChoice = { capabilities: true, core: true, lookupNames: true };

const VOCABULARIES: readonly { readonly key: keyof AnnotationChoice; readonly names: readonly string[]; readonly terms: readonly string[] }[] = [
  { key: 'capabilities', names: ['Org.OData.Capabilities.V1', 'Capabilities'], terms: [] },
  { key: 'core', names: ['Org.OData.Core.V1', 'Core'], terms: [] },
  { key: 'lookupNames', names: [LOOKUP_NAME_TERM.namespace], terms: [LOOKUP_NAME_TERM.qualified] },
];

const PREFERENCE = /(?:^|[,;\s])(?:odata\.)?include-annotations\s*=\s*("([^"]*)"|[^,;\s]+)/i;

/** The choice a request's Prefer header asks for, and its Preference-Applied text; undefined: all annotations. */
export function annotationChoice(prefer: string | undefined): { choice: AnnotationChoice; applied: string } | undefined {
  const m = prefer ? PREFERENCE.exec(prefer) : null;
  if (!m) return undefined;
  const value = m[2] ?? m[1];
  const items = value.split(',').map((i) => i.trim()).filter(Boolean);
  const choice: Record<keyof AnnotationChoice, boolean> = { capabilities: false, core: false, lookupNames: false };
  for (const v of VOCABULARIES) {
    let best = -1;
    for (const item of items) {
      const exclude = item.startsWith('-');
      const specificity = specificityFor(exclude ? item.slice(1) : item, v);
      if (specificity === undefined) continue;
      if (specificity > best) {
        best = specificity;
        choice[v.key] = !exclude;
      }
    }
  }
  if (items.some((item) => VOCABULARIES.every((v) => specificityFor(item.replace(/^-/, ''), v) === undefined) && !namesNoVocabularyUsed(item))) {
    return undefined;
  }
  return { choice, applied: `odata.include-annotations="${value}"` };
}

/** How specifically an item names a vocabulary: its one term (1000), a namespace (its length in segments), `*` (0). */
function specificityFor(item: string, v: (typeof VOCABULARIES)[number]): number | undefined {
  if (item === '*') return 0;
  if (v.terms.includes(item)) return 1000;
  if (!item.endsWith('.*')) return undefined;
  const ns = item.slice(0, -2);
  return v.names.some((n) => n === ns || n.startsWith(`${ns}.`)) ? ns.split('.').length : undefined;
}

/** An item about a namespace the documents do not use (`-display.*`): nothing to leave out or add. */
function namesNoVocabularyUsed(item: string): boolean {
  return /^-?[A-Za-z_][\w.]*\.\*$/.test(item);
}
