/**
 * A request's plan: what a read of an entity set is, decided once from (the set, the kind of path, the client's
 * licence, the format it asked for, the query options) and kept for every request of the same shape
 * (http/request-plans.ts caches them). It says what is bound (the filter, order, projection, expansions), which
 * records are read (the licence's visibility with the filter), what is charged (spec §8), how the response pages,
 * what its context URL names, and whether stored records leave as they are or are changed on their way out, and
 * by what. Storage attaches the compiled statements to it; http executes it and writes from it.
 */
import type { EntitySetSpec } from '../model/service-model';
import type { QueryOptionsTree } from './ast';
import type { Lookups } from './bind-enum';
import { bindQuery } from './bind-query';
import type { BoundOrder, BoundPredicate, BoundQuery, ParentLink } from './bound';
import { parseQueryOptions, ParseLimits } from './parse-options';
import { allOf } from './predicates';
import { Projection, projection, WHOLE_RECORD } from './projection';

/** The paths a plan answers: a collection's page, its `$count`, one record by key. */
export type PlanKind = 'collection' | 'count' | 'entity';

/** What a plan asks of a licence (auth/licence.ts). */
export interface PlanLicence {
  hiddenIn(set: EntitySetSpec): ReadonlySet<string>;
  readonly visibility: { of(set: EntitySetSpec): BoundPredicate | undefined };
}

/** The parts of the negotiated JSON format (http/json-format.ts) that change what is written. */
export interface PlanFormat {
  readonly metadata: 'minimal' | 'full' | 'none';
  readonly ieee754: boolean;
  readonly omitNulls: boolean;
  readonly version: '4.0' | '4.01';
}

/** A read of records: which, in what order, which columns. */
export interface ReadPlan {
  readonly set: EntitySetSpec;
  /** The licence's visibility and the request's filter (a navigation path's parent is added when it runs). */
  readonly where?: BoundPredicate;
  readonly orderBy: readonly BoundOrder[];
  readonly projection: Projection;
  /**
   * Records are read as their stored bytes and leave as they are (spliced, never decoded): nothing of the
   * projection ($select, hidden fields) or the format (omit-values=nulls, IEEE754Compatible, metadata=full)
   * changes them. Otherwise they are decoded where they are changed, and encoded once after.
   */
  readonly undecoded: boolean;
  /**
   * Columns read beside each record, for its single-valued expansions: the fields by which it names their records
   * (ExpansionPlan.link). None when nothing is expanded so.
   */
  readonly links?: readonly string[];
}

/** One `$expand` item: the related records of a page's records, read once per batch for all of them. */
export interface ExpansionPlan extends ReadPlan {
  readonly navigation: string;
  /** The target's column the related records are found by: the parent's key, or (single) the target's key. */
  readonly foreignKey: string;
  readonly perParent?: number;
  /**
   * A single-valued navigation: each parent's related record is the one its link names (`link` absent: none is
   * shown, the licence hiding the link), written as itself or null.
   */
  readonly single?: { readonly link?: ParentLink };
}

export interface RequestPlan {
  readonly kind: PlanKind;
  readonly tree: QueryOptionsTree;
  readonly query: BoundQuery;
  readonly read: ReadPlan;
  readonly expansions: readonly ExpansionPlan[];
  /** The transaction the request is (spec §8), and how many charged expansions come on top. */
  readonly charge: { readonly transaction: 'keyFetch' | 'query'; readonly chargedExpansions: number };
  /** Where the set's key is among a page's sort values (the expansions' parent keys). */
  readonly keyAt: number;
  /** The context URL after `$metadata#`: `Property(A,B)`, `Property/$entity`. */
  readonly context: string;
  /** What changes stored records on their way out (empty: they leave as stored, bytes to the socket). */
  readonly edits: readonly RecordEdit[];
  /** The filter names `now()`, bound to the time of binding: such a plan holds for its own request alone. */
  readonly volatile: boolean;
}

/** Why a stored record is changed before it is written. */
export type RecordEdit = '$select' | 'hidden fields' | '$expand' | 'omit-values=nulls' | 'IEEE754Compatible' | 'metadata=full';

export interface PlanContext {
  readonly sets: ReadonlyMap<string, EntitySetSpec>;
  readonly lookups: Lookups;
  readonly limits: ParseLimits;
}

export interface PlanRequest {
  readonly set: EntitySetSpec;
  readonly kind: PlanKind;
  readonly licence: PlanLicence;
  readonly format: PlanFormat;
  /** The query options as parsed from the query string (a `$skiptoken`'s value is not part of the plan). */
  readonly options: Readonly<Record<string, string>>;
  /** The order when the request names none (a navigation path orders as its expansion does). */
  readonly defaultOrder?: readonly string[];
}

export function planRequest(r: PlanRequest, context: PlanContext): RequestPlan {
  const { set, licence } = r;
  const tree = parseQueryOptions(r.options, context.limits);
  const single = r.kind === 'entity';
  let volatile = false;
  const now = () => {
    volatile = true;
    return new Date().toISOString();
  };
  const query = bindQuery(set, tree, {
    sets: context.sets, lookups: context.lookups, hidden: (s) => licence.hiddenIn(s), single, defaultOrder: r.defaultOrder, now,
  });
  const asStored = !formatEdits(r.format).length;
  const expansions = query.expand.map((e): ExpansionPlan => {
    const shape = projection(e.target, e.select, licence.hiddenIn(e.target));
    return {
      set: e.target,
      navigation: e.navigation.name,
      foreignKey: e.foreignKey.column!,
      // The licence's visibility of the related record too: one outside it is null, as a missing one.
      where: allOf(licence.visibility.of(e.target), e.filter),
      orderBy: e.orderBy,
      projection: shape,
      undecoded: asStored && shape === WHOLE_RECORD,
      perParent: e.top,
      ...(e.single ? { single: { link: e.link } } : {}),
    };
  });
  const shape = projection(set, query.select, licence.hiddenIn(set));
  const links = [...new Set(query.expand.flatMap((e) => (e.link ? [e.link.key, ...e.link.owner ? [e.link.owner.field] : []] : [])).map((f) => f.column!))];
  const read = {
    set, where: allOf(licence.visibility.of(set), query.filter), orderBy: query.orderBy, projection: shape, undecoded: asStored && shape === WHOLE_RECORD,
    ...(links.length ? { links } : {}),
  };
  return {
    kind: r.kind,
    tree,
    query,
    read,
    expansions,
    charge: { transaction: single ? 'keyFetch' : 'query', chargedExpansions: query.expand.filter((e) => e.navigation.charged).length },
    keyAt: query.orderBy.findIndex((o) => o.field.name === set.key),
    context: `${set.name}${contextProjection(query, r.format.version)}${single ? '/$entity' : ''}`,
    edits: editsOf(query, r.format, licence.hiddenIn(set).size > 0),
    volatile,
  };
}

function editsOf(q: BoundQuery, format: PlanFormat, hiding: boolean): RecordEdit[] {
  const edits: RecordEdit[] = [];
  if (q.select) edits.push('$select');
  else if (hiding) edits.push('hidden fields');
  if (q.expand.length) edits.push('$expand');
  return [...edits, ...formatEdits(format)];
}

/** What the format changes in every record (http/entity-shape.ts). */
function formatEdits(format: PlanFormat): RecordEdit[] {
  if (format.metadata === 'full') return ['metadata=full'];
  return [...format.omitNulls ? ['omit-values=nulls' as const] : [], ...format.ieee754 ? ['IEEE754Compatible' as const] : []];
}

/**
 * The context URL's projection: `(A,B,Media(MediaKey),OpenHouse())`, or '' for whole records. An expansion
 * without a nested $select is `OpenHouse()` in 4.01 and left out in 4.0, which has no empty parentheses
 * (OData Protocol 4.01 §10.10).
 */
export function contextProjection(q: Pick<BoundQuery, 'select' | 'expand'>, version: PlanFormat['version']): string {
  if (!q.select && q.expand.length === 0) return '';
  const items = [
    ...(q.select ?? []).map((f) => f.name),
    ...q.expand.filter((e) => version !== '4.0' || e.select).map((e) => `${e.navigation.name}(${(e.select ?? []).map((f) => f.name).join(',')})`),
  ];
  return items.length ? `(${items.join(',')})` : '';
}

/**
 * What a plan depends on, as a key: everything but values that change per request of the same shape (a
 * `$skiptoken`'s value, the key of a key fetch, a navigation's parent). `licence`: the licence's identity.
 */
export function planKey(r: Omit<PlanRequest, 'licence'>, licence: number): string {
  const f = r.format;
  let key = `${r.kind}\u0000${r.set.name}\u0000${licence}\u0000${f.metadata}${f.ieee754 ? 1 : 0}${f.omitNulls ? 1 : 0}${f.version}\u0000${r.defaultOrder?.join(',') ?? ''}`;
  for (const name in r.options) key += `\u0000${name}=${isSkipToken(name) ? '' : r.options[name]}`;
  return key;
}

/** `$skiptoken` in any case, or (4.01) `skiptoken` (query/parse-options.ts's rule). */
function isSkipToken(name: string): boolean {
  return name === 'skiptoken' || (name.length === 10 && name[0] === '$' && name.slice(1).toLowerCase() === 'skiptoken');
}

/** The `$skiptoken` the request carries (the plan knows that one is there, not its value). */
export function skipTokenOf(options: Readonly<Record<string, string>>): string | undefined {
  for (const name in options) if (isSkipToken(name)) return options[name];
  return undefined;
}
