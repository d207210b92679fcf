/**
 * An entity's JSON in the format the client negotiated (json-format.ts). Stored records are the default
 * format already (every property, nulls as null, numbers as numbers, minimal metadata), so then they leave as
 * they are: the shaper is `undefined` and nothing is rebuilt. `omit-values=nulls` and `IEEE754Compatible=true`
 * are the codec's edits of the stored text (storage/record-codec.ts says why they are safe). `metadata=full` rebuilds the record
 * with its control information (OData JSON Format 4.01 §4.5: type, id, readLink — read-only entities have no
 * editLink — property types and navigation links for the navigations the service follows).
 */
import { EntitySetSpec, expandable, FieldSpec } from '../../model/service-model';
import { numbersAsStrings, withoutNulls } from '../../storage/records/record-codec';
import type { JsonFormat } from './json-format';

export interface EntityShaper {
  /**
   * The entity's text in the negotiated format; `key` when known apart from the record (a `$select` may leave
   * it out); `expanded`: navigations whose content follows it (their links come with them).
   */
  entity(set: EntitySetSpec, json: string, key?: unknown, expanded?: readonly string[]): string;
  /** What goes before an expanded navigation's content: its navigation link, under full metadata. */
  beforeExpansion(set: EntitySetSpec, key: unknown, navigation: string): string;
}

/** The shapers of a model's sets: what each format changes in their records. */
export class EntityShapers {
  /** Per set, the codec's edit writing its Int64 and Decimal members as strings (IEEE754Compatible). */
  private readonly asStrings = new Map<string, (json: string) => string>();

  constructor(sets: readonly EntitySetSpec[]) {
    for (const set of sets) this.asStrings.set(set.name, numbersAsStrings(set.fields.filter(isIeee754Sensitive).map((f) => f.name)));
  }

  /** The shaper for a format, or undefined when stored records are already in it. */
  shaper(format: JsonFormat, serviceRoot: string): EntityShaper | undefined {
    if (format.metadata === 'full') return new FullMetadata(format, serviceRoot);
    if (!format.omitNulls && !format.ieee754) return undefined;
    return {
      entity: (set, json) => {
        let out = format.ieee754 ? this.asStrings.get(set.name)!(json) : json;
        if (format.omitNulls) out = withoutNulls(out);
        return out;
      },
      beforeExpansion: () => '',
    };
  }
}

export function isIeee754Sensitive(f: FieldSpec): boolean {
  return f.type === 'Edm.Int64' || f.type === 'Edm.Decimal';
}

/** Types a client cannot tell from the JSON value alone (strings, booleans and doubles it can). */
export function needsType(f: FieldSpec): boolean {
  return f.type !== 'Edm.String' && f.type !== 'Edm.Boolean' && f.type !== 'Edm.Double';
}

/** Primitive type names: `#Decimal` for 4.0, `Decimal` for 4.01 (JSON Format §4.5.3). */
export function primitiveTypeName(f: FieldSpec, version: JsonFormat['version']): string {
  const name = f.type.slice('Edm.'.length);
  const t = f.collection ? `Collection(${name})` : name;
  return version === '4.0' ? `#${t}` : t;
}

/** The canonical URL's key segment: `('L1')`, or `(7)` for a number. */
export function keySegment(key: unknown): string {
  return typeof key === 'number' ? `(${key})` : `('${encodeURIComponent(String(key).replace(/'/g, "''"))}')`;
}

class FullMetadata implements EntityShaper {
  constructor(private readonly format: JsonFormat, private readonly root: string) {}

  private typeName(f: FieldSpec): string {
    return primitiveTypeName(f, this.format.version);
  }

  entity(set: EntitySetSpec, json: string, key?: unknown, expanded: readonly string[] = []): string {
    const record = JSON.parse(json) as Record<string, unknown>;
    const k = key ?? record[set.key];
    // Without its key (an expansion's $select that leaves it out) an entity has no id to give.
    const url = k === undefined || k === null ? undefined : `${this.root}/${set.name}${keySegment(k)}`;
    const out: Record<string, unknown> = { '@odata.type': `#${set.entityType}`, ...(url ? { '@odata.id': url, '@odata.readLink': url } : {}) };
    for (const f of set.fields) {
      if (!(f.name in record)) continue;
      let v = record[f.name];
      if (v === null && this.format.omitNulls) continue;
      if (needsType(f)) out[`${f.name}@odata.type`] = this.typeName(f);
      if (this.format.ieee754 && isIeee754Sensitive(f) && v !== null) v = Array.isArray(v) ? v.map(String) : String(v);
      out[f.name] = v;
    }
    for (const n of set.navigations) {
      if (url && expandable(n) && !expanded.includes(n.name)) out[`${n.name}@odata.navigationLink`] = `${url}/${n.name}`;
    }
    return JSON.stringify(out);
  }

  beforeExpansion(set: EntitySetSpec, key: unknown, navigation: string): string {
    const nav = set.navigations.find((n) => n.name === navigation);
    if (!nav || !expandable(nav)) return '';
    return `${JSON.stringify(`${navigation}@odata.navigationLink`)}:${JSON.stringify(`${this.root}/${set.name}${keySegment(key)}/${navigation}`)},`;
  }
}
