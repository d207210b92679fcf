/**
 * The explorer's model of the service, read from the client's own `$metadata` (CSDL JSON): its entity sets,
 * their fields (type, lookup, filterable, sortable) and expandable navigations; with what `$metadata` does not
 * state from /console/api/explorer (restricted fields, charged expansions, the class of each request). And the
 * two things built from them: a request URL, and the transactions a URL costs.
 */

export interface ExplorerPolicy {
  readonly client: { readonly id: string; readonly name: string; readonly admin: boolean };
  readonly transactions: { readonly keyFetch: string; readonly query: string; readonly chargedExpansion: string };
  readonly sets: readonly { readonly name: string; readonly restricted: readonly string[]; readonly chargedNavigations: readonly string[] }[];
  readonly lookups?: { readonly set: string; readonly nameField: string; readonly valueField: string };
}

export interface FieldView {
  readonly name: string;
  readonly type: string;
  readonly collection: boolean;
  readonly lookup?: string;
  readonly filterable: boolean;
  readonly sortable: boolean;
  readonly restricted: boolean;
}

export interface SetView {
  readonly name: string;
  readonly key: string;
  readonly keyType: string;
  readonly fields: readonly FieldView[];
  readonly expandable: readonly string[];
  readonly charged: readonly string[];
}

type Csdl = Record<string, any>;

const LOOKUP_TERM = '@RESO.OData.Metadata.LookupName';

/** The sets of a CSDL JSON document, in the client's view, with the policy's facts added. */
export function readMetadata(csdl: Csdl, policy: ExplorerPolicy): SetView[] {
  const [namespace, containerName] = splitQualified(csdl.$EntityContainer as string);
  const schema = csdl[namespace] as Csdl;
  const container = schema[containerName] as Csdl;
  const sets: SetView[] = [];
  for (const [name, set] of Object.entries(container)) {
    if (name.startsWith('$') || name.startsWith('@') || !set?.$Collection) continue;
    const [, typeName] = splitQualified(set.$Type as string);
    const type = schema[typeName] as Csdl;
    const facts = policy.sets.find((s) => s.name === name);
    const nonFilterable = new Set<string>(set['@Capabilities.FilterRestrictions']?.NonFilterableProperties ?? []);
    const nonSortable = new Set<string>(set['@Capabilities.SortRestrictions']?.NonSortableProperties ?? []);
    const nonExpandable = new Set<string>(set['@Capabilities.ExpandRestrictions']?.NonExpandableProperties ?? []);
    const restricted = new Set(facts?.restricted ?? []);
    const fields: FieldView[] = [];
    const expandable: string[] = [];
    for (const [field, p] of Object.entries(type)) {
      if (field.startsWith('$') || field.startsWith('@') || typeof p !== 'object') continue;
      if (p.$Kind === 'NavigationProperty') {
        if (!nonExpandable.has(field) && set.$NavigationPropertyBinding?.[field]) expandable.push(field);
        continue;
      }
      fields.push({
        name: field, type: p.$Type ?? 'Edm.String', collection: !!p.$Collection, lookup: p[LOOKUP_TERM],
        filterable: !nonFilterable.has(field), sortable: !nonSortable.has(field), restricted: restricted.has(field),
      });
    }
    const key = (type.$Key as string[])[0];
    sets.push({ name, key, keyType: fields.find((f) => f.name === key)?.type ?? 'Edm.String', fields, expandable, charged: facts?.chargedNavigations ?? [] });
  }
  return sets;
}

function splitQualified(name: string): [string, string] {
  const dot = name.lastIndexOf('.');
  return [name.slice(0, dot), name.slice(dot + 1)];
}

/** An OData literal of a field's type from what a person typed. */
export function literal(type: string, text: string): string {
  if (type === 'Edm.String') return `'${text.replace(/'/g, "''")}'`;
  return text.trim();
}

export interface Condition { readonly field: FieldView; readonly op: string; readonly value: string }

export interface QueryParts {
  readonly key?: string;
  readonly conditions: readonly Condition[];
  readonly orderBy?: string;
  readonly direction: 'asc' | 'desc';
  readonly select: readonly string[];
  readonly expand: readonly string[];
  readonly top?: string;
  readonly count: boolean;
}

const encode = (v: string) => encodeURIComponent(v).replace(/%2C/g, ',').replace(/%24/g, '$').replace(/%2F/g, '/').replace(/%3A/g, ':');

/** The request URL the builder's choices make. */
export function buildUrl(serviceRoot: string, set: SetView, q: QueryParts): string {
  const path = q.key ? `${set.name}(${literal(set.keyType, q.key)})` : set.name;
  const options: [string, string][] = [];
  if (!q.key && q.conditions.length) {
    const filter = q.conditions.map((c) => (c.op === 'startswith' || c.op === 'contains'
      ? `${c.op}(${c.field.name},${literal(c.field.type, c.value)})`
      : `${c.field.name} ${c.op} ${literal(c.field.type, c.value)}`)).join(' and ');
    options.push(['$filter', filter]);
  }
  if (!q.key && q.orderBy) options.push(['$orderby', `${q.orderBy}${q.direction === 'desc' ? ' desc' : ''}`]);
  if (q.select.length) options.push(['$select', q.select.join(',')]);
  if (q.expand.length) options.push(['$expand', q.expand.join(',')]);
  if (!q.key && q.top) options.push(['$top', q.top]);
  if (!q.key && q.count) options.push(['$count', 'true']);
  const query = options.map(([k, v]) => `${k}=${encode(v)}`).join('&');
  return `${serviceRoot}/${path}${query ? `?${query}` : ''}`;
}

/** Top-level items of an `$expand`: commas inside parentheses belong to nested options. */
function expandedNames(expand: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let item = '';
  for (const ch of `${expand},`) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      names.push(item.split('(')[0].trim());
      item = '';
    } else item += ch;
  }
  return names.filter(Boolean);
}

/** The transactions a request URL costs (per page for a query), as the meter will count them; undefined if it is not a data URL. */
export function transactionsOf(url: string, sets: readonly SetView[], policy: ExplorerPolicy): Record<string, number> | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url, location.origin);
  } catch {
    return undefined;
  }
  const m = /^\/odata\/([A-Za-z_]\w*)(\([^/]*\))?(?:\/([$A-Za-z_]\w*))?$/.exec(decodeURIComponent(parsed.pathname));
  const set = m && sets.find((s) => s.name === m[1]);
  if (!m || !set) return undefined;
  const byKey = !!m[2] && !m[3];
  const counts: Record<string, number> = {};
  const add = (cls: string, n: number) => { counts[cls] = (counts[cls] ?? 0) + n; };
  add(byKey ? policy.transactions.keyFetch : policy.transactions.query, 1);
  const expanded = expandedNames(parsed.searchParams.get('$expand') ?? '');
  const charged = expanded.filter((n) => set.charged.includes(n)).length;
  if (charged && m[3] !== '$count') add(policy.transactions.chargedExpansion, charged);
  return counts;
}

/** "1 class A + 2 class B", as a person reads a cost. */
export function describeCost(counts: Record<string, number>, perPage: boolean): string {
  const parts = Object.keys(counts).sort().map((cls) => `${counts[cls]} class ${cls}`);
  return `Transactions: ${parts.join(' + ')}${perPage ? ' per page' : ''}`;
}
