/**
 * Binds a request's parsed options to an entity set: the filter, the order (with the spec's sorting
 * rules), the projection, and the options this service refuses. Spec §4 "Sorting rules for Property":
 * the default order is the set's change timestamp; a filter on a field the dictionary marks
 * OrdersWhenFiltered (PhotosChangeTimestamp, DocumentsChangeTimestamp) orders by that field; sorting on
 * the key is always allowed.
 */
import { requireJsonFormat } from '../http/formats';
import { badRequest, notImplemented } from '../http/odata-error';
import type { EntitySetSpec, FieldSpec } from '../model/service-model';
import type { ExpandItem, QueryOptionsTree } from './ast';
import { FilterBinder, forbidden } from './bind-filter';
import type { BoundExpand, BoundOrder, BoundPredicate, BoundQuery } from './bound';
import { both, discriminatorOf } from './related-records';

export interface BindOptions {
  /** The request is for one record (no ordering, filtering or paging options apply). */
  single?: boolean;
  now?: () => string;
  /** Entity sets by name, to bind $expand against its targets. */
  sets?: ReadonlyMap<string, EntitySetSpec>;
  /** Order when the request names none (a navigation path orders like its expansion); default: the set's. */
  defaultOrder?: readonly string[];
  /** Fields a set's records must not show this client (403 when named). */
  hidden?: (set: EntitySetSpec) => ReadonlySet<string>;
}

const NONE: ReadonlySet<string> = new Set();

export function bindQuery(set: EntitySetSpec, tree: QueryOptionsTree, options: BindOptions = {}): BoundQuery {
  if (tree.unsupported.length > 0) {
    throw notImplemented(`${tree.unsupported.join(', ')} ${tree.unsupported.length === 1 ? 'is' : 'are'} not supported by this service`, tree.unsupported[0]);
  }
  if (tree.skip !== undefined) {
    throw notImplemented('$skip is not supported; page by following @odata.nextLink from the previous response', '$skip');
  }
  requireJsonFormat(tree.format);
  if (options.single) {
    for (const [name, present] of [['$filter', tree.filter], ['$orderby', tree.orderby], ['$top', tree.top], ['$count', tree.count], ['$skiptoken', tree.skiptoken]] as const) {
      if (present !== undefined) throw badRequest(`${name} does not apply to a single record`, name);
    }
  }
  const expand = tree.expand ? bindExpand(set, tree.expand, options) : [];

  const hidden = options.hidden?.(set) ?? NONE;
  const binder = new FilterBinder(set, options.now, hidden);
  const filter: BoundPredicate | undefined = tree.filter ? binder.predicate(tree.filter) : undefined;
  return {
    filter,
    orderBy: options.single ? [] : bindOrder(set, tree, binder.fieldsUsed, options.defaultOrder, hidden),
    select: tree.select ? bindSelect(set, tree, hidden) : undefined,
    top: tree.top,
    count: tree.count ?? false,
    skiptoken: tree.skiptoken,
    filterFields: binder.fieldsUsed,
    expand,
  };
}

function sortField(set: EntitySetSpec, name: string, hidden: ReadonlySet<string>): FieldSpec {
  const f = set.fieldsByName[name];
  if (!f) {
    if (set.navigations.some((n) => n.name === name)) throw notImplemented(`ordering by related records (${name}) is not supported`, name);
    throw badRequest(`${set.name} has no field ${name}`, name);
  }
  if (hidden.has(name)) throw forbidden(`your licence does not include ${name}`, name);
  const sortable = set.fields.filter((x) => x.sortable && !hidden.has(x.name)).map((x) => x.name).join(', ');
  if (f.restricted) throw forbidden(`${f.name} is a restricted field and cannot be used in $orderby. ${set.name} can be ordered by: ${sortable}`, f.name);
  if (!f.sortable || !f.column) {
    throw notImplemented(`${f.name} cannot be ordered by (it is not indexed). ${set.name} can be ordered by: ${sortable}`, f.name);
  }
  return f;
}

/** Fields whose use in a filter dictates the order (the dictionary's OrdersWhenFiltered; spec sorting rules 2 and 3). */
function changeTimestampsUsed(set: EntitySetSpec, used: ReadonlySet<string>): FieldSpec[] {
  return set.fields.filter((f) => used.has(f.name) && f.ordersWhenFiltered);
}

function bindOrder(
  set: EntitySetSpec, tree: QueryOptionsTree, filterFields: ReadonlySet<string>, defaultOrder: readonly string[] | undefined, hidden: ReadonlySet<string>,
): BoundOrder[] {
  const required = changeTimestampsUsed(set, filterFields);
  let order: BoundOrder[];
  if (tree.orderby) {
    order = tree.orderby.map((item) => {
      if (item.expr.kind !== 'member') throw notImplemented('$orderby takes field names only (no expressions)', '$orderby');
      if (item.expr.path.length > 1) throw notImplemented(`ordering by ${item.expr.path.join('/')} is not supported`, item.expr.path.join('/'));
      const f = sortField(set, item.expr.path[0], hidden);
      return { field: f, column: f.column!, direction: item.direction };
    });
    const seen = new Set<string>();
    for (const o of order) {
      if (seen.has(o.field.name)) throw badRequest(`$orderby names ${o.field.name} twice`, o.field.name);
      seen.add(o.field.name);
    }
    const first = order[0].field.name;
    if (required.length > 0 && first !== set.key && !required.some((f) => f.name === first)) {
      const names = required.map((f) => f.name).join(' or ');
      throw notImplemented(`a filter on ${names} must be ordered by ${names} (or by ${set.key}); $orderby=${first} is not supported`, '$orderby');
    }
  } else {
    const names = required.length > 0 ? [required[0].name, set.key] : defaultOrder ?? set.defaultOrder;
    order = names.map((n) => {
      const f = set.fieldsByName[n];
      return { field: f, column: f.column!, direction: 'asc' as const };
    });
  }
  // The key ends every order, so the order is total and a page boundary is exact.
  if (!order.some((o) => o.field.name === set.key)) {
    const key = set.fieldsByName[set.key];
    order.push({ field: key, column: key.column!, direction: order[order.length - 1].direction });
  }
  return order;
}

function bindSelect(set: EntitySetSpec, tree: QueryOptionsTree, hidden: ReadonlySet<string>): FieldSpec[] | undefined {
  const names = new Set<string>();
  for (const item of tree.select!) {
    if (item.path[0] === '*') return undefined;
    const name = item.path[0];
    if (!set.fieldsByName[name]) {
      if (set.navigations.some((n) => n.name === name)) throw badRequest(`${name} is a navigation property; use $expand=${name} to include it`, name);
      throw badRequest(`${set.name} has no field ${name}`, name);
    }
    if (item.path.length > 1) throw badRequest(`${name} has no members to select (${item.path.join('/')})`, item.path.join('/'));
    if (hidden.has(name)) throw forbidden(`your licence does not include ${name}`, name);
    names.add(name);
  }
  return set.fields.filter((f) => names.has(f.name));
}

function bindExpand(set: EntitySetSpec, items: readonly ExpandItem[], options: BindOptions): BoundExpand[] {
  const seen = new Set<string>();
  return items.map((item) => {
    const name = item.path[0];
    if (name === '*') throw notImplemented('$expand=* is not supported; name the navigation properties', '$expand');
    const navigation = set.navigations.find((n) => n.name === name);
    if (!navigation) {
      const names = set.navigations.map((n) => n.name).join(', ') || 'none';
      throw badRequest(`${set.name} has no navigation property ${name} (it has: ${names})`, name);
    }
    if (item.path.length > 1) throw notImplemented(`$expand=${item.path.join('/')} is not supported; expand ${name} itself`, name);
    if (seen.has(name)) throw badRequest(`$expand names ${name} twice`, name);
    seen.add(name);
    const target = options.sets?.get(navigation.target);
    if (!target || !navigation.followable || !navigation.join) {
      throw notImplemented(`$expand=${name} is not supported; query ${navigation.target} by its own fields instead`, name);
    }
    const o = item.options;
    const nested = [['$skip', o.skip], ['$count', o.count], ['$expand', o.expand], ['$skiptoken', o.skiptoken]] as const;
    for (const [option, value] of nested) {
      if (value !== undefined) throw notImplemented(`${option} inside $expand=${name}(…) is not supported`, name);
    }
    if (o.unsupported.length) throw notImplemented(`${o.unsupported.join(', ')} inside $expand=${name}(…) is not supported`, name);
    const bound = bindQuery(target, { ...o, expand: undefined }, { now: options.now, defaultOrder: navigation.order, hidden: options.hidden });
    return {
      navigation,
      target,
      foreignKey: target.fieldsByName[navigation.join.foreignKey],
      filter: both(bound.filter, discriminatorOf(navigation, target)),
      orderBy: bound.orderBy,
      select: bound.select,
      top: o.top,
    };
  });
}
