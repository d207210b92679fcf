/**
 * How RESO's certification tool (reso-cert 0.10.6, web-api-core/sampling.js) chooses what each Web API Core
 * scenario queries, in our words, so that the project's fast check asks what the real one will ask. It reads the
 * fields from $metadata in declaration order, by type, never reading Capabilities; samples the first page of
 * `<Set>?$top=1000`; and takes, for each type, the first field with three or more distinct values in the sample
 * (else the first with any), with the median, minimum and maximum of its values. Lookups (single and multi) are
 * ranked first by whether their most frequent value is a standard one (a value of some Data Dictionary lookup: here,
 * of some lookup the Lookup resource publishes; every field of this dictionary is a standard one), then by how many
 * sampled records carry them; their values by frequency. The string functions use the first plain string field
 * whose first sampled value has 3 characters or more, cut to its first 5.
 */
import type { HttpResult } from './http';

import type { Rec } from './next-links';
type Get = (url: string) => Promise<HttpResult>;

export interface Sampled {
  readonly field: string;
  /** Distinct sampled values, in the order met. */
  readonly values: readonly unknown[];
}

export interface NumberChoice extends Sampled { readonly median: number; readonly min: number; readonly max: number }
export interface DateChoice extends Sampled { readonly median: string; readonly min: string; readonly max: string }
export interface LookupChoice {
  readonly field: string;
  readonly lookupName: string;
  /** Values by how many sampled records hold them, most first (three at most, as the tool keeps). */
  readonly values: readonly string[];
  /** For a multi-value lookup: the distinct values of the sampled record holding the fewest (the tool's all() set). */
  readonly smallestSet?: readonly string[];
}

export interface ResourceSample {
  readonly resource: string;
  readonly key: string;
  /** The first sampled record's key: the fetch-by-key scenario's. */
  readonly keyValue: string;
  readonly integer?: NumberChoice;
  readonly decimal?: NumberChoice;
  readonly date?: DateChoice;
  readonly timestamp?: { readonly field: string; readonly min: string; readonly max: string };
  readonly singleLookups: readonly LookupChoice[];
  readonly multiLookups: readonly LookupChoice[];
  readonly string?: { readonly field: string; readonly value: string };
  /** Collection navigations, in declaration order: each is expanded. */
  readonly expandable: readonly string[];
}

interface MetaProperty { readonly name: string; readonly type: string; readonly collection: boolean; readonly lookupName?: string }

const LOOKUP = '@RESO.OData.Metadata.LookupName';

/** The entity type of `set` from CSDL JSON: its key, properties and collection navigations, in declaration order. */
function entityTypeOf(csdl: Rec, set: string): { key: string; properties: MetaProperty[]; navigations: string[] } {
  const [namespace, container] = (csdl.$EntityContainer as string).split(/\.(?=[^.]+$)/);
  const typeName = (csdl[namespace][container][set].$Type as string).split('.').pop()!;
  const type = csdl[namespace][typeName] as Rec;
  const members = Object.entries(type).filter(([name]) => !name.startsWith('$') && !name.startsWith('@'));
  return {
    key: type.$Key[0],
    properties: members.filter(([, m]) => m.$Kind !== 'NavigationProperty')
      .map(([name, m]) => ({ name, type: m.$Type ?? 'Edm.String', collection: m.$Collection === true, lookupName: m[LOOKUP] })),
    navigations: members.filter(([, m]) => m.$Kind === 'NavigationProperty' && m.$Collection === true).map(([name]) => name),
  };
}

function distinct(records: readonly Rec[], field: string): unknown[] {
  const seen = new Map<string, unknown>();
  for (const r of records) if (r[field] !== null && r[field] !== undefined && !seen.has(String(r[field]))) seen.set(String(r[field]), r[field]);
  return [...seen.values()];
}

/** The first field with 3 distinct values or more, else the first with any. */
function best(fields: readonly string[], records: readonly Rec[]): Sampled | undefined {
  let fallback: Sampled | undefined;
  for (const field of fields) {
    const values = distinct(records, field);
    if (values.length >= 3) return { field, values };
    if (values.length > 0) fallback ??= { field, values };
  }
  return fallback;
}

function numbers(s: Sampled | undefined): NumberChoice | undefined {
  if (!s) return undefined;
  const sorted = [...new Set(s.values.map(Number))].sort((a, b) => a - b);
  return { ...s, median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted[sorted.length - 1] };
}

function dates(s: Sampled | undefined): DateChoice | undefined {
  if (!s) return undefined;
  const sorted = [...new Set(s.values.map((v) => String(v).split('T')[0]))].sort();
  return { ...s, median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted[sorted.length - 1] };
}

/** ModificationTimestamp when populated, else the first populated `…Timestamp`, else any populated timestamp. */
function timestampOf(fields: readonly string[], records: readonly Rec[]): ResourceSample['timestamp'] {
  const populated = (f: string) => records.some((r) => r[f] != null);
  const field = [fields.find((f) => f === 'ModificationTimestamp'), ...fields.filter((f) => f.endsWith('Timestamp')), ...fields].find((f) => f && populated(f));
  if (!field) return undefined;
  const stamps = distinct(records, field).map(String).sort();
  return { field, min: stamps[0], max: stamps[stamps.length - 1] };
}

/** Lookup fields of one kind holding sampled values: those led by a standard value first, then the most filled (ties: declaration order). */
function lookups(properties: readonly MetaProperty[], records: readonly Rec[], multi: boolean, standard: ReadonlySet<string>): LookupChoice[] {
  const choices = properties.filter((p) => p.lookupName && p.collection === multi && p.type === 'Edm.String').map((p) => {
    const counts = new Map<string, number>();
    let filled = 0;
    let smallestSet: string[] | undefined;
    for (const r of records) {
      const values = multi ? [...new Set<string>(r[p.name] ?? [])] : r[p.name] == null ? [] : [String(r[p.name])];
      if (values.length === 0) continue;
      filled++;
      if (multi && values.length <= 12 && (!smallestSet || values.length < smallestSet.length)) smallestSet = values;
      for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    const values = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([v]) => v).slice(0, 3);
    return { field: p.name, lookupName: p.lookupName!, values, smallestSet, filled };
  });
  const rank = (c: { values: string[] }) => (standard.has(c.values[0]) ? 0 : 1);
  return choices.filter((c) => c.values.length > 0).sort((a, b) => rank(a) - rank(b) || b.filled - a.filled).map(({ filled: _, ...c }) => c);
}

/**
 * What the tool would query on `resource` of the service at `base`, read from its metadata and a sample;
 * `standard`: the standard lookup values (the tool takes them from RESO's Data Dictionary reference).
 */
export async function sampleResource(get: Get, base: string, csdl: Rec, resource: string, standard: ReadonlySet<string>): Promise<ResourceSample> {
  const { key, properties, navigations } = entityTypeOf(csdl, resource);
  const page = await get(`${base}/${resource}?$top=1000`);
  if (page.status !== 200) throw new Error(`sampling ${resource}: ${page.status} ${page.text.slice(0, 200)}`);
  const records = page.json.value as Rec[];
  const ofType = (...types: string[]) => properties.filter((p) => !p.collection && types.includes(p.type)).map((p) => p.name);
  const plain = properties.filter((p) => !p.collection && p.type === 'Edm.String' && !p.lookupName)
    .map((p) => ({ field: p.name, first: distinct(records, p.name)[0] }))
    .find((s) => s.first !== undefined && String(s.first).length >= 3);
  return {
    resource,
    key,
    keyValue: String(records[0]?.[key] ?? ''),
    integer: numbers(best(ofType('Edm.Int16', 'Edm.Int32', 'Edm.Int64'), records)),
    decimal: numbers(best(ofType('Edm.Decimal', 'Edm.Double'), records)),
    date: dates(best(ofType('Edm.Date'), records)),
    timestamp: timestampOf(ofType('Edm.DateTimeOffset'), records),
    singleLookups: lookups(properties, records, false, standard),
    multiLookups: lookups(properties, records, true, standard),
    string: plain && { field: plain.field, value: String(plain.first).slice(0, 5) },
    expandable: navigations,
  };
}
