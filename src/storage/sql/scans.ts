/**
 * Which reads are scans: a filter or an order naming a field the dictionary gives no index
 * (Policy.UnindexedProperties, FieldSpec.unindexed), or a lambda on a collection (`any`, `all`: tested row by row
 * against its value table, in the page's order). The database may visit every row of the table to answer one, so
 * such a read runs apart from the others and is stopped at the statement timeout (Database.scan).
 */
import type { BoundOrder, BoundPredicate, BoundScalar } from '../../query/bound';

/** The fields that make `where` and `orderBy` a scan, in the order met; empty for a read its indexes serve. */
export function scannedFields(where: BoundPredicate | undefined, orderBy: readonly BoundOrder[] = []): string[] {
  const found = new Set<string>();
  if (where) visitPredicate(where, found);
  for (const o of orderBy) if (o.field.unindexed) found.add(o.field.name);
  return [...found];
}

function visitPredicate(p: BoundPredicate, found: Set<string>): void {
  switch (p.kind) {
    case 'compare': visitScalar(p.left, found); visitScalar(p.right, found); return;
    case 'isNull': visitScalar(p.operand, found); return;
    case 'in': visitScalar(p.left, found); return;
    case 'truth': visitScalar(p.operand, found); return;
    case 'logical': for (const q of p.operands) visitPredicate(q, found); return;
    case 'not': visitPredicate(p.operand, found); return;
    case 'choice':
      for (const c of p.cases) visitPredicate(c.then, found);
      visitPredicate(p.otherwise, found);
      return;
    // A semi-join seeks the other set by key, row by row; its condition reads only the rows it finds.
    case 'inQuery': visitScalar(p.left, found); return;
    // Each record is tested against its elements in the value table: the page walks the table in its order.
    case 'lambda': found.add(p.collection.name); return;
    case 'constant': return;
  }
}

function visitScalar(s: BoundScalar, found: Set<string>): void {
  if (s.kind === 'field' && s.field.unindexed) found.add(s.field.name);
  else if (s.kind === 'call') for (const a of s.args) visitScalar(a, found);
}
