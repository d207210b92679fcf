/**
 * Lookup values a filter names by enumeration literal, OData's form for EnumType values
 * (`org.reso.metadata.enums.StandardStatus'ActiveUnderContract'`, several flags as `'A,B'`), or, on a field the
 * dictionary types with an EnumType, by member name in a plain string (`'ActiveUnderContract'`). Lookups are
 * stored as their RESO standard values ("Active Under Contract"), so each name is read back to that value.
 */
import { Errors } from '../errors/catalogue';
import type { FieldSpec, LookupSpec } from '../model/service-model';
import type { LiteralNode } from './ast';

export type Lookups = ReadonlyMap<string, LookupSpec>;

/** The stored values the literal names for the lookup field `f`; undefined when it is not a lookup literal. */
export function lookupValuesOf(f: FieldSpec, node: LiteralNode, lookups: Lookups): string[] | undefined {
  if (!f.lookupName) return undefined;
  const lookup = lookups.get(f.lookupName);
  if (node.type === 'enum') {
    const typeName = node.typeName!;
    if (typeName !== f.enumType && typeName.slice(typeName.lastIndexOf('.') + 1) !== f.lookupName) {
      throw Errors.TypeMismatch(`lookup ${f.lookupName}`, `enumeration ${typeName}`, `${f.name} and ${typeName}'${String(node.value)}'`);
    }
    return String(node.value).split(',').map((m) => valueOfMember(m.trim(), f, typeName, lookup));
  }
  if (node.type === 'string' && f.enumType && lookup) {
    const text = node.value as string;
    if (lookup.values.some((v) => v.value === text)) return [text];
    return [lookup.values.find((v) => v.legacyODataValue === text)?.value ?? text];
  }
  return undefined;
}

function valueOfMember(member: string, f: FieldSpec, typeName: string, lookup: LookupSpec | undefined): string {
  // A lookup whose values the dictionary does not list (they are the data's, or the Lookup resource's) takes the name as it is.
  if (!lookup || lookup.values.length === 0) return member;
  const v = lookup.values.find((x) => x.legacyODataValue === member) ?? lookup.values.find((x) => x.value === member);
  if (!v) throw Errors.LiteralInvalid(`${typeName}'${member}'`, `member of lookup ${f.lookupName}`);
  return v.value;
}
