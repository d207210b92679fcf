/**
 * Binds a request's parsed options to an entity set: the filter, the order (with the spec's sorting
 * rules), the projection, and the options this service refuses. Spec §4 "Sorting rules for Property":
 * the default order is the set's change timestamp; a filter on a field the dictionary marks
 * OrdersWhenFiltered (PhotosChangeTimestamp, DocumentsChangeTimestamp) orders by that field; sorting on
 * the key is always allowed.
 */
import { Errors } from '../errors/catalogue';
import { EntitySetSpec, expandable, FieldSpec } from '../model/service-model';
import type { ExpandItem, QueryOptionsTree } from './ast';
import type { Lookups } from './bind-enum';
import { FilterBinder, licensedField } from './bind-filter';
import type { BoundExpand, BoundOrder, BoundPredicate, BoundQuery } from './bound';
import { allOf } from './predicates';
import { discriminatorOf, parentLinkOf } from './related-records';
import { requireJsonFormat } from './formats';

export interface BindOptions {
  /** The request is for one record (no ordering, filtering or paging options apply). */
  single?: boolean;
  now?: () => string;
  /** Entity sets by name, to bind $expand against its targets. */
  sets?: ReadonlyMap<string, EntitySetSpec>;
  /** Order when the request names none (a navigation path orders like its expansion); default: the set's. */
  defaultOrder?: readonly string[];
  /** Fields a set's records must not show this client (named, they answer as fields the set does not have). */
  hidden?: (set: EntitySetSpec) => ReadonlySet<string>;
  /** The dictionary's lookups by name: the values enumeration literals name. */
  lookups?: Lookups;
}

const NONE: ReadonlySet<string> = new Set();

export function bindQuery(set: EntitySetSpec, tree: QueryOptionsTree, options: BindOptions = {}): BoundQuery {
  if (tree.unsupported.length > 0) throw Errors.OptionNotSupported(tree.unsupported);
  if (tree.skip !== undefined && !set.skipSupported) throw Errors.SkipNotSupported();
  requireJsonFormat(tree.format);
  if (options.single) {
    for (const [name, present] of [['$filter', tree.filter], ['$orderby', tree.orderby], ['$top', tree.top], ['$count', tree.count], ['$skiptoken', tree.skiptoken], ['$skip', tree.skip]] as const) {
      if (present !== undefined) throw Errors.OptionNotApplicable(name, 'a single record');
    }
  }
  const expand = tree.expand ? bindExpand(set, tree.expand, options) : [];

  const hidden = options.hidden?.(set) ?? NONE;
  const binder = new FilterBinder(set, options.now, hidden, options.lookups);
  const filter: BoundPredicate | undefined = tree.filter ? binder.predicate(tree.filter) : undefined;
  return {
    filter,
    orderBy: options.single ? [] : bindOrder(set, tree, binder.fieldsUsed, options.defaultOrder, hidden),
    select: tree.select ? bindSelect(set, tree, hidden) : undefined,
    top: tree.top,
    count: tree.count ?? false,
    skiptoken: tree.skiptoken,
    skip: tree.skip,
    filterFields: binder.fieldsUsed,
    expand,
  };
}

function sortField(set: EntitySetSpec, name: string, hidden: ReadonlySet<string>): FieldSpec {
  const f = licensedField(set, name, hidden, true);
  if (!f) {
    if (set.navigations.some((n) => n.name === name)) throw Errors.RelatedOrderNotSupported(name);
    throw Errors.FieldNotFound(set.name, name);
  }
  const sortable = set.fields.filter((x) => x.sortable && !hidden.has(x.name)).map((x) => x.name).join(', ');
  if (f.restricted) throw Errors.FieldRestricted(f.name, '$orderby', set.name, sortable);
  if (!f.sortable || !f.column) throw Errors.FieldNotSortable(f.name, set.name, sortable);
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
      if (item.expr.kind !== 'member') throw Errors.OrderByExpressionNotSupported();
      if (item.expr.path.length > 1) throw Errors.OrderByPathNotSupported(item.expr.path.join('/'));
      const f = sortField(set, item.expr.path[0], hidden);
      return { field: f, column: f.column!, direction: item.direction };
    });
    const seen = new Set<string>();
    for (const o of order) {
      if (seen.has(o.field.name)) throw Errors.ItemRepeated('$orderby', o.field.name);
      seen.add(o.field.name);
    }
    const first = order[0].field.name;
    if (required.length > 0 && first !== set.key && !required.some((f) => f.name === first)) {
      const names = required.map((f) => f.name).join(' or ');
      throw Errors.FilterRequiresOrder(names, set.key, first);
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
    if (!licensedField(set, name, hidden, false)) {
      if (set.navigations.some((n) => n.name === name)) throw Errors.NavigationInSelect(name);
      throw Errors.FieldNotFound(set.name, name);
    }
    if (item.path.length > 1) throw Errors.FieldHasNoMembers(name, item.path.join('/'), 'select');
    names.add(name);
  }
  return set.fields.filter((f) => names.has(f.name));
}

function bindExpand(set: EntitySetSpec, items: readonly ExpandItem[], options: BindOptions): BoundExpand[] {
  const seen = new Set<string>();
  return items.map((item) => {
    const name = item.path[0];
    if (name === '*') throw Errors.ExpandAllNotSupported();
    const navigation = set.navigations.find((n) => n.name === name);
    if (!navigation) {
      const names = set.navigations.map((n) => n.name).join(', ') || 'none';
      throw Errors.NavigationNotFound(set.name, name, names);
    }
    if (item.path.length > 1) throw Errors.ExpandPathNotSupported(item.path.join('/'), name);
    if (seen.has(name)) throw Errors.ItemRepeated('$expand', name);
    seen.add(name);
    const target = options.sets?.get(navigation.target);
    if (!target || !expandable(navigation) || !navigation.join) {
      throw Errors.NavigationNotExpandable(name, navigation.target);
    }
    const single = !navigation.collection;
    const o = item.options;
    // A single record has nothing to order or cut: `$filter` alone applies (the record, or null when it fails it).
    const nested = [['$skip', o.skip], ['$count', o.count], ['$expand', o.expand], ['$skiptoken', o.skiptoken],
      ...(single ? [['$orderby', o.orderby], ['$top', o.top]] as const : [])] as const;
    for (const [option, value] of nested) {
      if (value !== undefined) throw Errors.ExpandOptionNotSupported([option], name);
    }
    if (o.unsupported.length) throw Errors.ExpandOptionNotSupported(o.unsupported, name);
    const bound = bindQuery(target, { ...o, expand: undefined }, { now: options.now, defaultOrder: navigation.order, hidden: options.hidden, lookups: options.lookups });
    const link = single ? parentLinkOf(navigation, set, options.hidden?.(set) ?? NONE) : undefined;
    return {
      navigation,
      target,
      foreignKey: target.fieldsByName[navigation.join.foreignKey],
      single,
      ...(link ? { link } : {}),
      filter: allOf(bound.filter, discriminatorOf(navigation, target)),
      // One record each: its key alone orders it (a joined read names an order: storage/record-queries.ts).
      orderBy: single ? bound.orderBy.filter((o) => o.field.name === target.key) : bound.orderBy,
      select: bound.select,
      top: o.top,
    };
  });
}
