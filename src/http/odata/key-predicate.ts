/**
 * The key in `Property('<ListingKey>')`: an OData literal, bare (`'A1'`, `42`, `42L`) or named
 * (`ListingKey='A1'`), with quotes inside strings doubled.
 */
import type { EntitySetSpec } from '../../model/service-model';
import { Errors } from '../../errors/catalogue';

export function parseKeyPredicate(set: EntitySetSpec, raw: string): string | number {
  const keyField = set.fieldsByName[set.key];
  let literal = raw.trim();
  const named = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/s.exec(literal);
  if (named) {
    if (named[1] !== set.key) throw Errors.KeyInvalid(set.name, set.key, { named: named[1] });
    literal = named[2].trim();
  }
  if (keyField.type === 'Edm.String') {
    const m = /^'((?:[^']|'')*)'$/s.exec(literal);
    if (!m) throw Errors.KeyInvalid(set.name, set.key, { expected: 'string' });
    return m[1].replace(/''/g, "'");
  }
  // OData 2.0's Int64 suffix (`EntityEvent(42L)`), which clients generated for it still write (query/lexer.ts).
  const m = /^(-?\d{1,15})L?$/.exec(literal);
  if (!m) throw Errors.KeyInvalid(set.name, set.key, { expected: 'integer' });
  return Number(m[1]);
}
